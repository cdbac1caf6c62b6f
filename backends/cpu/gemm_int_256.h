//===- gemm_int_256.h - The 256-bit integer GEMM tile ----------*- C++ -*-===//
//
// Included by gemm_int_avx2.cpp and gemm_int_avxvnni.cpp after their dot32
// (acc plus, in each of 8 int32 lanes, the sum of four u8 * s8 products).
// Sixteen ymm registers hold 2 rows by half a panel (16 columns, two
// vectors): 4 int32 accumulators for a block of K, 4 f32 ones across
// blocks, the weights and the broadcast quad of x.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "gemv_int_common.h"

namespace llmc::cpu {
namespace {

constexpr int kTileRows256 = 2;

inline __m256i broadcastQuad256(const int8_t *p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

/// SignedW: the panel holds signed i8 (offset 0); |w| goes unsigned and x
/// takes w's sign (vpmaddubsw wants one side unsigned).
/// 8 E8M0 bytes as the floats 2^(e - 128) (e8m0HalfTable's): exponent
/// field e - 1, or for e = 0 the denormal 2^-128.
inline __m256 e8m0Scales256(const uint8_t *p) {
  const __m256i e = _mm256_cvtepu8_epi32(
      _mm_loadl_epi64(reinterpret_cast<const __m128i *>(p)));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  return _mm256_castsi256_ps(
      _mm256_blendv_epi8(bits, _mm256_set1_epi32(0x00200000),
                         _mm256_cmpeq_epi32(e, _mm256_setzero_si256())));
}

/// Nib: two quads per byte, as gemm_int_avx512.cpp's tile reads them; Mx:
/// MXFP4 codes, as there.
template <int RM, bool SignedW, bool Nib, bool Mx = false>
void tileHalf(const IntGemm &g, int64_t m0, int h) {
  constexpr int QB = 8; // quads per block of K
  constexpr int64_t kB = 4 * QB;
  const int64_t blocks = g.K / kB, lb = g.ldx / kB;
  const int64_t perGroup = blocks / g.groups;
  const bool rowScale = !Mx && g.groups == 1;
  __m256 f[RM][2];
  for (int m = 0; m < RM; ++m)
    f[m][0] = f[m][1] = _mm256_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    __m256i acc[RM][2];
    for (int m = 0; m < RM; ++m)
      acc[m][0] = acc[m][1] = _mm256_set1_epi32(g.xc[(m0 + m) * lb + b]);
    const uint8_t *wb = g.w + b * kB * kTileN / (Nib ? 2 : 1) + h * 64;
    const int8_t *xb = g.xq + m0 * g.ldx + b * kB;
    // Unrolled whole, the eight quads need more than 16 registers.
#pragma GCC unroll 2
    for (int q = 0; q < QB; ++q) {
      __m256i w[2], u[2];
      for (int v = 0; v < 2; ++v) {
        if (Nib) {
          w[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
              wb + (q / 2) * 4 * kTileN + v * 32));
          if (q % 2)
            w[v] = _mm256_srli_epi16(w[v], 4);
          w[v] = _mm256_and_si256(w[v], _mm256_set1_epi8(0x0f));
          if (Mx)
            w[v] = _mm256_shuffle_epi8(
                _mm256_add_epi8(
                    _mm256_broadcastsi128_si256(_mm_loadu_si128(
                        reinterpret_cast<const __m128i *>(kMxfp4Doubled))),
                    _mm256_set1_epi8(char(kMxfp4Offset))),
                w[v]);
        } else {
          w[v] = _mm256_loadu_si256(
              reinterpret_cast<const __m256i *>(wb + q * 4 * kTileN + v * 32));
        }
        u[v] = SignedW ? _mm256_sign_epi8(w[v], w[v]) : w[v];
      }
      for (int m = 0; m < RM; ++m) {
        const __m256i x = broadcastQuad256(xb + m * g.ldx + q * 4);
        for (int v = 0; v < 2; ++v)
          acc[m][v] =
              dot32(acc[m][v], u[v], SignedW ? _mm256_sign_epi8(x, w[v]) : x);
      }
    }
    for (int v = 0; v < 2; ++v) {
      const int64_t at = (b / perGroup) * kTileN + h * 16 + v * 8;
      const __m256 sw = Mx         ? e8m0Scales256(g.we + at)
                        : rowScale ? _mm256_set1_ps(1.0f)
                                   : _mm256_loadu_ps(g.ws + at);
      for (int m = 0; m < RM; ++m) {
        const __m256 sx = _mm256_set1_ps(g.xs[(m0 + m) * lb + b]);
        f[m][v] =
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[m][v]),
                            rowScale ? sx : _mm256_mul_ps(sx, sw), f[m][v]);
      }
    }
  }
  for (int v = 0; v < 2; ++v) {
    const int64_t c0 = h * 16 + v * 8;
    if (c0 >= g.cols)
      break;
    const __m256 scale =
        rowScale ? _mm256_loadu_ps(g.ws + c0) : _mm256_set1_ps(1.0f);
    for (int m = 0; m < RM; ++m) {
      alignas(32) float r[8];
      _mm256_store_ps(r, _mm256_mul_ps(f[m][v], scale));
      float *out = g.out + (m0 + m) * g.ldo + c0;
      for (int64_t c = 0; c < 8 && c0 + c < g.cols; ++c)
        out[c] = r[c] + (g.accumulate ? out[c]
                         : g.bias     ? g.bias[c0 + c]
                                      : 0.0f);
    }
  }
}

template <bool SignedW, bool Nib = false, bool Mx = false>
void tile256(const IntGemm &g) {
  for (int h = 0; h < 2 && h * 16 < g.cols; ++h) {
    int64_t m0 = 0;
    for (; m0 + kTileRows256 <= g.rows; m0 += kTileRows256)
      tileHalf<kTileRows256, SignedW, Nib, Mx>(g, m0, h);
    if (m0 < g.rows)
      tileHalf<1, SignedW, Nib, Mx>(g, m0, h);
  }
}

} // namespace
} // namespace llmc::cpu
