//===- gemv.h - The small-row linear kernel template -----------*- C++ -*-===//
//
// Decode reads every weight once per step, so these kernels are bound by
// memory bandwidth: each thread streams a contiguous range of output rows
// (n) and, for each, dots up to four activation rows at once while the
// weight row is in L1. A weight format only supplies how to turn 8 of its
// values into 8 floats. Blocks of 64 n keep a panel of weights in L2 when
// there are many activation rows (the non-AMX prefill fallback).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu.h"
#include "gemv_int.h"
#include "parallel.h"
#include "simd.h"

#include <algorithm>
#include <cstring>

namespace llmc::cpu {

constexpr int64_t kGemvRowGroup = 4;
constexpr int64_t kGemvPanel = 64;

/// res[r] = sum_k x[r][k] * row(k) for R rows; row.vec(k) gives 8 floats,
/// row.one(k) a single one (the tail).
template <int R, typename Row>
inline void dotRows(const float *x, int64_t ldx, int64_t K, const Row &row,
                    float *res) {
  __m256 a[R], b[R];
  for (int r = 0; r < R; ++r)
    a[r] = b[r] = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    __m256 w0 = row.vec(k), w1 = row.vec(k + 8);
    for (int r = 0; r < R; ++r) {
      a[r] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + r * ldx + k), a[r]);
      b[r] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + r * ldx + k + 8), b[r]);
    }
  }
  for (; k + 8 <= K; k += 8) {
    __m256 w0 = row.vec(k);
    for (int r = 0; r < R; ++r)
      a[r] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + r * ldx + k), a[r]);
  }
  for (int r = 0; r < R; ++r)
    res[r] = simd::hsum(_mm256_add_ps(a[r], b[r]));
  for (; k < K; ++k) {
    float w = row.one(k);
    for (int r = 0; r < R; ++r)
      res[r] += w * x[r * ldx + k];
  }
}

/// The weight rows a gemv streams, for software prefetch (the hardware
/// prefetcher alone leaves decode latency-bound): row n + kPrefetchRows is
/// requested while row n is dotted.
struct WeightRows {
  const void *base = nullptr;
  int64_t rowBytes = 0;

  void prefetch(int64_t n, int64_t N) const {
    if (!base || n + kPrefetchRows >= N)
      return;
    const char *p =
        static_cast<const char *>(base) + (n + kPrefetchRows) * rowBytes;
    for (int64_t i = 0; i < rowBytes; i += 64)
      _mm_prefetch(p + i, _MM_HINT_T0);
  }
};

/// Runs `dot(n, x, R, res)` for every n and every group of up to four rows,
/// writing out[r][n] = res + bias[n].
template <typename Dot>
void gemvDriver(const GemvArgs &a, Dot dot, WeightRows rows = {}) {
  int64_t panels = (a.N + kGemvPanel - 1) / kGemvPanel;
  // Below ~64K weights a parallel region costs more than it saves.
  parallelFor(panels, a.N * a.K >= (1 << 16), [&](int64_t p) {
    int64_t n0 = p * kGemvPanel, n1 = std::min(a.N, n0 + kGemvPanel);
    for (int64_t r0 = 0; r0 < a.rows; r0 += kGemvRowGroup) {
      int64_t R = std::min(kGemvRowGroup, a.rows - r0);
      const float *x = a.x + r0 * a.K;
      for (int64_t n = n0; n < n1; ++n) {
        if (r0 == 0)
          rows.prefetch(n, a.N);
        float res[kGemvRowGroup];
        dot(n, x, R, res);
        float bias = a.bias ? a.bias[n] : 0.0f;
        for (int64_t r = 0; r < R; ++r)
          a.out[(r0 + r) * a.N + n] = res[r] + bias;
      }
    }
  });
}

template <typename Row>
inline void dotAny(const float *x, int64_t K, int64_t R, const Row &row,
                   float *res) {
  switch (R) {
  case 1:
    return dotRows<1>(x, K, K, row, res);
  case 2:
    return dotRows<2>(x, K, K, row, res);
  case 3:
    return dotRows<3>(x, K, K, row, res);
  default:
    return dotRows<4>(x, K, K, row, res);
  }
}

} // namespace llmc::cpu
