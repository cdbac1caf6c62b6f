//===- gemm_kquant_avx512.cpp - The K-quant GEMM tile with AVX512-VNNI ----===//
//
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512vnni. Up to 4 rows by
// the panel's 32 columns: per row and vector one int32 accumulator for a
// sub-block (vpdpbusd), one for the super-block's exact sum (vpmulld by the
// sub-block scales) and one f32 across super-blocks, 24 of the 32 registers
// (KQuantGemm). The mins meet the sums of x per 32 in four vpdpwssd.
//
//===----------------------------------------------------------------------===//
#include "gemm_avx512.h"

namespace llmc::cpu {
namespace {

constexpr int kKQuantTileRows = 4;

/// P: sub-blocks per super-block, 8 (Q4_K, Q5_K) or 16 (Q6_K).
template <int RM, int P> void tile(const KQuantGemm &g, int64_t m0) {
  constexpr int QB = 64 / P; // quads per sub-block
  const int64_t supers = g.K / 256, subs = g.K / g.block;
  __m512 f[RM][2];
  for (int m = 0; m < RM; ++m)
    f[m][0] = f[m][1] = _mm512_setzero_ps();
  for (int64_t s = 0; s < supers; ++s) {
    __m512i isum[RM][2];
    for (int m = 0; m < RM; ++m)
      isum[m][0] = isum[m][1] = _mm512_setzero_si512();
    for (int j = 0; j < P; ++j) {
      const int64_t b = s * P + j;
      __m512i acc[RM][2];
      for (int m = 0; m < RM; ++m)
        acc[m][0] = acc[m][1] =
            g.xc ? _mm512_set1_epi32(g.xc[(m0 + m) * subs + b])
                 : _mm512_setzero_si512();
      const uint8_t *wb = g.w + b * QB * 4 * kTileN;
      const int8_t *xb = g.xq + m0 * g.K + b * 4 * QB;
      for (int q = 0; q < QB; ++q) {
        const __m512i w0 = _mm512_loadu_si512(wb + q * 4 * kTileN),
                      w1 = _mm512_loadu_si512(wb + q * 4 * kTileN + 64);
        for (int m = 0; m < RM; ++m) {
          int32_t quad;
          __builtin_memcpy(&quad, xb + m * g.K + q * 4, 4);
          const __m512i x = _mm512_set1_epi32(quad);
          acc[m][0] = _mm512_dpbusd_epi32(acc[m][0], w0, x);
          acc[m][1] = _mm512_dpbusd_epi32(acc[m][1], w1, x);
        }
      }
      const __m512i s0 = _mm512_loadu_si512(g.ws + b * kTileN),
                    s1 = _mm512_loadu_si512(g.ws + b * kTileN + 16);
      for (int m = 0; m < RM; ++m) {
        isum[m][0] =
            _mm512_add_epi32(isum[m][0], _mm512_mullo_epi32(acc[m][0], s0));
        isum[m][1] =
            _mm512_add_epi32(isum[m][1], _mm512_mullo_epi32(acc[m][1], s1));
      }
    }
    const __m512 d0 = _mm512_loadu_ps(g.wd + s * kTileN),
                 d1 = _mm512_loadu_ps(g.wd + s * kTileN + 16);
    for (int m = 0; m < RM; ++m) {
      const __m512 dx = _mm512_set1_ps(g.xd[(m0 + m) * supers + s]);
      f[m][0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[m][0]),
                                _mm512_mul_ps(dx, d0), f[m][0]);
      f[m][1] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[m][1]),
                                _mm512_mul_ps(dx, d1), f[m][1]);
    }
    if (!g.wm)
      continue;
    const __m512 dm0 = _mm512_loadu_ps(g.wdm + s * kTileN),
                 dm1 = _mm512_loadu_ps(g.wdm + s * kTileN + 16);
    for (int m = 0; m < RM; ++m) {
      const int32_t *xb = g.xb + ((m0 + m) * supers + s) * 4;
      __m512i ms0 = _mm512_setzero_si512(), ms1 = ms0;
      for (int p = 0; p < 4; ++p) {
        const int32_t *wm = g.wm + (s * 4 + p) * kTileN;
        const __m512i x = _mm512_set1_epi32(xb[p]);
        ms0 = _mm512_dpwssd_epi32(ms0, _mm512_loadu_si512(wm), x);
        ms1 = _mm512_dpwssd_epi32(ms1, _mm512_loadu_si512(wm + 16), x);
      }
      const __m512 dx = _mm512_set1_ps(g.xd[(m0 + m) * supers + s]);
      f[m][0] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(ms0),
                                 _mm512_mul_ps(dx, dm0), f[m][0]);
      f[m][1] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(ms1),
                                 _mm512_mul_ps(dx, dm1), f[m][1]);
    }
  }
  storeRows<RM>(f, g.bias, g.out, g.ldo, m0, g.cols);
}

template <int P> void rows(const KQuantGemm &g) {
  int64_t m0 = 0;
  for (; m0 + kKQuantTileRows <= g.rows; m0 += kKQuantTileRows)
    tile<kKQuantTileRows, P>(g, m0);
  switch (g.rows - m0) {
  case 1:
    return tile<1, P>(g, m0);
  case 2:
    return tile<2, P>(g, m0);
  case 3:
    return tile<3, P>(g, m0);
  default:
    return;
  }
}

} // namespace

void kquantTileAvx512(const KQuantGemm &g) {
  if (g.block == 16)
    return rows<16>(g);
  rows<8>(g);
}

} // namespace llmc::cpu
