//===- gemm_avx512.h - What the AVX-512 GEMM tiles share -------*- C++ -*-===//
//
// Included by gemm_int_avx512.cpp and gemm_f32_avx512.cpp (built for
// AVX-512); internal linkage, as gemv_int_common.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "gemv_int_common.h"

namespace llmc::cpu {
namespace {

/// Which lanes of the panel's two 16-column vectors are real columns.
struct PanelMasks {
  __mmask16 keep[2];
  explicit PanelMasks(int64_t cols) {
    for (int v = 0; v < 2; ++v) {
      const int64_t n = cols - 16 * v;
      keep[v] = __mmask16(n >= 16 ? 0xffff : n <= 0 ? 0 : (1u << n) - 1);
    }
  }
};

/// out rows [m0, m0 + RM) of the panel = acc + bias (bias null: + 0), the
/// real columns only.
template <int RM>
inline void storeRows(const __m512 (&acc)[RM][2], const float *bias, float *out,
                      int64_t ldo, int64_t m0, int64_t cols) {
  const PanelMasks masks(cols);
  for (int v = 0; v < 2; ++v) {
    const __m512 b = bias ? _mm512_maskz_loadu_ps(masks.keep[v], bias + v * 16)
                          : _mm512_setzero_ps();
    for (int m = 0; m < RM; ++m)
      _mm512_mask_storeu_ps(out + (m0 + m) * ldo + v * 16, masks.keep[v],
                            _mm512_add_ps(acc[m][v], b));
  }
}

} // namespace
} // namespace llmc::cpu
