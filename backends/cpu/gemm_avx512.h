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

} // namespace
} // namespace llmc::cpu
