//===- gemv_quant.h - Grouped dot products for i8 / i4 weights -*- C++ -*-===//
//
// A group's integers widen to f32 in registers and its partial sums are
// scaled once per group, so the result differs from dequantize-then-dot
// only by summation order. Formats whose groups are not a multiple of 16
// take the generic path: dequantize the row to f32, then dot.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "gemv.h"

#include <vector>

namespace llmc::cpu {

/// res[r] for R rows; quad(k) returns the 16 weights at k as two vectors
/// (already matched to x's layout).
template <int R, typename Quad>
inline void dotGrouped(const float *x, int64_t K, const float *scales,
                       int64_t group, const Quad &quad, float *res) {
  __m256 acc[R];
  for (int r = 0; r < R; ++r)
    acc[r] = _mm256_setzero_ps();
  for (int64_t g0 = 0; g0 < K; g0 += group) {
    __m256 ga[R], gb[R];
    for (int r = 0; r < R; ++r)
      ga[r] = gb[r] = _mm256_setzero_ps();
    for (int64_t k = g0; k < g0 + group; k += 16) {
      __m256 w0, w1;
      quad(k, w0, w1);
      for (int r = 0; r < R; ++r) {
        ga[r] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + r * K + k), ga[r]);
        gb[r] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + r * K + k + 8), gb[r]);
      }
    }
    __m256 s = _mm256_set1_ps(scales[g0 / group]);
    for (int r = 0; r < R; ++r)
      acc[r] = _mm256_fmadd_ps(_mm256_add_ps(ga[r], gb[r]), s, acc[r]);
  }
  for (int r = 0; r < R; ++r)
    res[r] = simd::hsum(acc[r]);
}

template <typename Quad>
inline void dotGroupedAny(const float *x, int64_t K, int64_t R,
                          const float *scales, int64_t group, const Quad &quad,
                          float *res) {
  switch (R) {
  case 1:
    return dotGrouped<1>(x, K, scales, group, quad, res);
  case 2:
    return dotGrouped<2>(x, K, scales, group, quad, res);
  case 3:
    return dotGrouped<3>(x, K, scales, group, quad, res);
  default:
    return dotGrouped<4>(x, K, scales, group, quad, res);
  }
}

struct PlainRow {
  const float *w;
  __m256 vec(int64_t k) const { return _mm256_loadu_ps(w + k); }
  float one(int64_t k) const { return w[k]; }
};

/// The generic path: `dequant(n, row)` fills row with W[n] in f32.
template <typename Dequant>
void gemvDequantized(const GemvArgs &a, Dequant dequant) {
  gemvDriver(a, [&](int64_t n, const float *x, int64_t R, float *res) {
    thread_local std::vector<float> row;
    row.resize(size_t(a.K));
    dequant(n, row.data());
    dotAny(x, a.K, R, PlainRow{row.data()}, res);
  });
}

} // namespace llmc::cpu
