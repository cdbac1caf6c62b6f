//===- gemv_int_common.h - Helpers of every GEMM tile level ----*- C++ -*-===//
//
// Included by each level's tile files (gemm_*_<level>), which compile it
// with its own flags: everything here has internal linkage, so no level
// ever calls another level's copy (see isa.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "gemv_int.h"

#include <immintrin.h>

namespace llmc::cpu {
namespace {

/// Rows per GEMM tile at every level but the 256-bit int tile's (the f32
/// tiles' x packing is in tiles of these).
constexpr int kTileRows = int(kF32TileRows);

/// Tile::run<RM>(g, m0) over rows [0, rows) in tiles of kTileRows.
template <typename Tile, typename G>
void forTileRows(const G &g, int64_t rows) {
  static_assert(kTileRows == 6, "one case per remainder below");
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
