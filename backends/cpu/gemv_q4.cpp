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
  GemvArgs b = a;
  b.x = xd.data();
  const __m256i low = _mm256_set1_epi32(0xf), eight = _mm256_set1_epi32(8);
  gemvDriver(b, [&](int64_t n, const float *x, int64_t R, float *res) {
    const uint8_t *wn = w + n * (K / 2);
    auto quad = [&](int64_t k, __m256 &w0, __m256 &w1) {
      __m128i q =
          _mm_loadl_epi64(reinterpret_cast<const __m128i *>(wn + k / 2));
      __m256i v = _mm256_cvtepu8_epi32(q);
      // Nibbles are two's complement: (v ^ 8) - 8 sign-extends 4 bits.
      __m256i lo = _mm256_sub_epi32(
          _mm256_xor_si256(_mm256_and_si256(v, low), eight), eight);
      __m256i hi = _mm256_sub_epi32(
          _mm256_xor_si256(_mm256_srli_epi32(v, 4), eight), eight);
      w0 = _mm256_cvtepi32_ps(lo);
      w1 = _mm256_cvtepi32_ps(hi);
    };
    dotGroupedAny(x, K, R, scales + n * groups, group, quad, res);
  });
}

} // namespace llmc::cpu
