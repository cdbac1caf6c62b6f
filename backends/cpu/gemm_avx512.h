//===- gemm_avx512.h - What the AVX-512 GEMM tiles share -------*- C++ -*-===//
//
// Included by gemm_int_avx512.cpp and gemm_bf16_avx512.cpp (built for
// AVX-512); internal linkage, as gemv_int_common.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "gemv_int_common.h"

namespace llmc::cpu {
namespace {

/// Rows per tile: 6 rows by the panel's two vectors keep 12 accumulators
/// (and the int tile's 12 more) within the 32 registers.
constexpr int kTileRows = 6;

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

/// Tile::run<RM>(g, m0) over rows [0, rows) in tiles of kTileRows.
template <typename Tile, typename G>
void forTileRows(const G &g, int64_t rows) {
  int64_t m0 = 0;
  for (; m0 + kTileRows <= rows; m0 += kTileRows)
    Tile::template run<kTileRows>(g, m0);
  switch (rows - m0) {
  case 1:
    return Tile::template run<1>(g, m0);
  case 2:
    return Tile::template run<2>(g, m0);
  case 3:
    return Tile::template run<3>(g, m0);
  case 4:
    return Tile::template run<4>(g, m0);
  case 5:
    return Tile::template run<5>(g, m0);
  default:
    return;
  }
}

} // namespace
} // namespace llmc::cpu
