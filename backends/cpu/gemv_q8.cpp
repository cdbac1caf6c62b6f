//===- gemv_q8.cpp - Small-row linear over i8 weights ---------------------===//
#include "gemv_quant.h"

namespace llmc::cpu {

void gemvQ8(const GemvArgs &a, const int8_t *w, const float *scales,
            int64_t group) {
  int64_t K = a.K, groups = K / group;
  if (group % 16 != 0) {
    gemvDequantized(a, [&](int64_t n, float *row) {
      for (int64_t k = 0; k < K; ++k)
        row[k] = float(w[n * K + k]) * scales[n * groups + k / group];
    });
    return;
  }
  gemvDriver(a, [&](int64_t n, const float *x, int64_t R, float *res) {
    const int8_t *wn = w + n * K;
    auto quad = [wn](int64_t k, __m256 &w0, __m256 &w1) {
      __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i *>(wn + k));
      w0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q));
      w1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(q, 8)));
    };
    dotGroupedAny(x, K, R, scales + n * groups, group, quad, res);
  });
}

} // namespace llmc::cpu
