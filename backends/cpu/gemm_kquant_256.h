//===- gemm_kquant_256.h - The 256-bit K-quant GEMM tile -------*- C++ -*-===//
//
// Included after gemm_int_256.h by gemm_int_avx2.cpp and gemm_int_avxvnni.cpp
// (dot32 as there). Two rows by half a panel (16 columns, two vectors): per
// row and vector one int32 accumulator for a sub-block, one for the super-
// block's exact sum and one f32 across super-blocks (KQuantGemm).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "gemv_int_common.h"

namespace llmc::cpu {
namespace {

/// P: sub-blocks per super-block, 8 (Q4_K, Q5_K) or 16 (Q6_K).
template <int RM, int P>
void kquantTileHalf(const KQuantGemm &g, int64_t m0, int h) {
  constexpr int QB = 64 / P; // quads per sub-block
  const int64_t supers = g.K / 256, subs = g.K / g.block;
  __m256 f[RM][2];
  for (int m = 0; m < RM; ++m)
    f[m][0] = f[m][1] = _mm256_setzero_ps();
  for (int64_t s = 0; s < supers; ++s) {
    __m256i isum[RM][2];
    for (int m = 0; m < RM; ++m)
      isum[m][0] = isum[m][1] = _mm256_setzero_si256();
    for (int j = 0; j < P; ++j) {
      const int64_t b = s * P + j;
      __m256i acc[RM][2];
      for (int m = 0; m < RM; ++m)
        acc[m][0] = acc[m][1] =
            g.xc ? _mm256_set1_epi32(g.xc[(m0 + m) * subs + b])
                 : _mm256_setzero_si256();
      const uint8_t *wb = g.w + b * QB * 4 * kTileN + h * 64;
      const int8_t *xb = g.xq + m0 * g.K + b * 4 * QB;
#pragma GCC unroll 2
      for (int q = 0; q < QB; ++q) {
        __m256i w[2];
        for (int v = 0; v < 2; ++v)
          w[v] = _mm256_loadu_si256(
              reinterpret_cast<const __m256i *>(wb + q * 4 * kTileN + v * 32));
        for (int m = 0; m < RM; ++m) {
          const __m256i x = broadcastQuad256(xb + m * g.K + q * 4);
          for (int v = 0; v < 2; ++v)
            acc[m][v] = dot32(acc[m][v], w[v], x);
        }
      }
      for (int v = 0; v < 2; ++v) {
        const __m256i sc = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
            g.ws + b * kTileN + h * 16 + v * 8));
        for (int m = 0; m < RM; ++m)
          isum[m][v] =
              _mm256_add_epi32(isum[m][v], _mm256_mullo_epi32(acc[m][v], sc));
      }
    }
    for (int v = 0; v < 2; ++v) {
      const int64_t c = s * kTileN + h * 16 + v * 8;
      const __m256 d = _mm256_loadu_ps(g.wd + c);
      for (int m = 0; m < RM; ++m) {
        const __m256 dx = _mm256_set1_ps(g.xd[(m0 + m) * supers + s]);
        f[m][v] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[m][v]),
                                  _mm256_mul_ps(dx, d), f[m][v]);
      }
      if (!g.wm)
        continue;
      const __m256 dmin = _mm256_loadu_ps(g.wdm + c);
      for (int m = 0; m < RM; ++m) {
        const int32_t *xb = g.xb + ((m0 + m) * supers + s) * 4;
        __m256i msum = _mm256_setzero_si256();
        for (int p = 0; p < 4; ++p)
          msum = _mm256_add_epi32(
              msum, _mm256_madd_epi16(
                        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
                            g.wm + (s * 4 + p) * kTileN + h * 16 + v * 8)),
                        _mm256_set1_epi32(xb[p])));
        const __m256 dx = _mm256_set1_ps(g.xd[(m0 + m) * supers + s]);
        f[m][v] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum),
                                   _mm256_mul_ps(dx, dmin), f[m][v]);
      }
    }
  }
  for (int v = 0; v < 2; ++v) {
    const int64_t c0 = h * 16 + v * 8;
    if (c0 >= g.cols)
      break;
    for (int m = 0; m < RM; ++m) {
      alignas(32) float r[8];
      _mm256_store_ps(r, f[m][v]);
      float *out = g.out + (m0 + m) * g.ldo + c0;
      for (int64_t c = 0; c < 8 && c0 + c < g.cols; ++c)
        out[c] = r[c] + (g.bias ? g.bias[c0 + c] : 0.0f);
    }
  }
}

template <int P> void kquantTile256Subs(const KQuantGemm &g) {
  for (int h = 0; h < 2 && h * 16 < g.cols; ++h) {
    int64_t m0 = 0;
    for (; m0 + kTileRows256 <= g.rows; m0 += kTileRows256)
      kquantTileHalf<kTileRows256, P>(g, m0, h);
    if (m0 < g.rows)
      kquantTileHalf<1, P>(g, m0, h);
  }
}

void kquantTile256(const KQuantGemm &g) {
  if (g.block == 16)
    return kquantTile256Subs<16>(g);
  kquantTile256Subs<8>(g);
}

} // namespace
} // namespace llmc::cpu
