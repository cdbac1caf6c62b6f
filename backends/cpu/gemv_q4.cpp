//===- gemv_q4.cpp - Small-row linear over i4 weights ---------------------===//
//
// Eight bytes hold sixteen columns, the even ones in the low nibbles. Rather
// than shuffle the weights, each 16-column block of the activations is
// reordered once per call (evens, then odds), so a byte's two nibbles widen
// straight into the lanes that multiply them.
//
//===----------------------------------------------------------------------===//
#include "gemv_quant.h"

namespace llmc::cpu {

namespace {

// x: R rows of reordered activations; xs: their group sums [R][groups].
template <int R>
void dotQ4(const float *x, int64_t K, const uint8_t *wn, const float *scales,
           int64_t group, const float *xs, int64_t groups, float *res) {
  const __m256i low = _mm256_set1_epi32(0xf);
  const __m128i flip = _mm_set1_epi8(char(0x88));
  __m256 acc[R];
  float corr[R];
  for (int r = 0; r < R; ++r) {
    acc[r] = _mm256_setzero_ps();
    corr[r] = 0.0f;
  }
  for (int64_t g0 = 0, g = 0; g0 < K; g0 += group, ++g) {
    __m256 ga[R], gb[R];
    for (int r = 0; r < R; ++r)
      ga[r] = gb[r] = _mm256_setzero_ps();
    for (int64_t k = g0; k < g0 + group; k += 16) {
      // Two's complement nibble q is (q ^ 8) - 8: flip bit 3 of both.
      __m256i v = _mm256_cvtepu8_epi32(_mm_xor_si128(
          _mm_loadl_epi64(reinterpret_cast<const __m128i *>(wn + k / 2)),
          flip));
      __m256 w0 = _mm256_cvtepi32_ps(_mm256_and_si256(v, low));
      __m256 w1 = _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4));
      for (int r = 0; r < R; ++r) {
        ga[r] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + r * K + k), ga[r]);
        gb[r] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + r * K + k + 8), gb[r]);
      }
    }
    float sg = scales[g];
    __m256 s = _mm256_set1_ps(sg);
    for (int r = 0; r < R; ++r) {
      acc[r] = _mm256_fmadd_ps(_mm256_add_ps(ga[r], gb[r]), s, acc[r]);
      corr[r] += sg * xs[r * groups + g];
    }
  }
  for (int r = 0; r < R; ++r)
    res[r] = simd::hsum(acc[r]) - 8.0f * corr[r];
}

} // namespace

void gemvQ4(const GemvArgs &a, const uint8_t *w, const float *scales,
            int64_t group) {
  int64_t K = a.K, groups = K / group;
  if (group % 16 != 0) {
    gemvDequantized(a, [&](int64_t n, float *row) {
      for (int64_t k = 0; k < K; ++k) {
        uint8_t byte = w[n * (K / 2) + k / 2];
        int nibble = k % 2 == 0 ? byte & 0xf : byte >> 4;
        row[k] = float(nibble >= 8 ? nibble - 16 : nibble) *
                 scales[n * groups + k / group];
      }
    });
    return;
  }
  std::vector<float> xd(size_t(a.rows * K));
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t k = 0; k < K; k += 16)
      for (int64_t i = 0; i < 8; ++i) {
        xd[size_t(r * K + k + i)] = a.x[r * K + k + 2 * i];
        xd[size_t(r * K + k + 8 + i)] = a.x[r * K + k + 2 * i + 1];
      }
  // sum_k (u_k - 8) x_k = sum_k u_k x_k - 8 sum_k x_k: with the group sums
  // of x known, the nibbles widen without a sign fix-up.
  std::vector<float> xsum(size_t(a.rows * groups), 0.0f);
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t k = 0; k < K; ++k)
      xsum[size_t(r * groups + k / group)] += a.x[r * K + k];
  GemvArgs b = a;
  b.x = xd.data();
  gemvDriver(b, [&](int64_t n, const float *x, int64_t R, float *res) {
    const float *xs = xsum.data() + (x - xd.data()) / K * groups;
    const uint8_t *wn = w + n * (K / 2);
    const float *sn = scales + n * groups;
    switch (R) {
    case 1:
      return dotQ4<1>(x, K, wn, sn, group, xs, groups, res);
    case 2:
      return dotQ4<2>(x, K, wn, sn, group, xs, groups, res);
    case 3:
      return dotQ4<3>(x, K, wn, sn, group, xs, groups, res);
    default:
      return dotQ4<4>(x, K, wn, sn, group, xs, groups, res);
    }
  });
}

} // namespace llmc::cpu
