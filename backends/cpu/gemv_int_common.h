//===- gemv_int_common.h - Helpers of every integer-dot level --*- C++ -*-===//
//
// Included by each level's file (gemv_int_<level>.cpp), which compiles it
// with its own flags: everything here has internal linkage, so no level
// ever calls another level's copy (see isa.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "gemv_int.h"

#include <immintrin.h>

namespace llmc::cpu {
namespace {

inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/// One block of 32 i4 weights (16 bytes) as 32 unsigned bytes q + 8 in the
/// activations' nibble order: the even columns, then the odd ones.
inline __m256i unpackNibbles(const uint8_t *p) {
  const __m128i flip = _mm_set1_epi8(char(0x88)); // two's complement q -> q + 8
  __m128i v = _mm_xor_si128(
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)), flip);
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v),
                          _mm256_set1_epi8(0x0f));
}

/// One block of 32 MXFP4 codes (16 bytes) as their doubled values (signed
/// bytes, ±0..12) in the activations' nibble order: even columns, then odd.
inline __m256i unpackMxfp4(const uint8_t *p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
  const __m256i codes = _mm256_and_si256(
      _mm256_set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(0x0f));
  const __m256i table = _mm256_broadcastsi128_si256(
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(kMxfp4Doubled)));
  return _mm256_shuffle_epi8(table, codes);
}

/// Runs Panel::run<R>(...) for R = rows (1 to 4).
template <typename Panel, typename... Args>
void forRowCount(int64_t rows, const Args &...args) {
  switch (rows) {
  case 1:
    return Panel::template run<1>(args...);
  case 2:
    return Panel::template run<2>(args...);
  case 3:
    return Panel::template run<3>(args...);
  default:
    return Panel::template run<4>(args...);
  }
}

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
