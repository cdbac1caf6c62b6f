//===- gemm_int_avx512.cpp - The integer GEMM tile with AVX512-VNNI -------===//
//
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512vnni. A tile is up to 6
// rows by the panel's 32 columns (two vectors of 16): 12 int32 accumulators
// take a block of 32 columns of K in 8 vpdpbusd each, then go to 12 f32
// accumulators with the block's scales, so 96 vpdpbusd share 12 conversions.
//
//===----------------------------------------------------------------------===//
#include "gemm_avx512.h"

namespace llmc::cpu {
namespace {

inline __m512i broadcastQuad(const int8_t *p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

/// 16 E8M0 bytes as the floats 2^(e - 128) (e8m0HalfTable's): exponent
/// field e - 1, or for e = 0 the denormal 2^-128.
inline __m512 e8m0Scales(const uint8_t *p) {
  const __m512i e = _mm512_cvtepu8_epi32(
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
  const __m512i bits =
      _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(
      _mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512()), bits,
      _mm512_set1_epi32(0x00200000)));
}

/// Nib: the panel holds two quads per byte (PackedIntWeight's i4 form):
/// pair j's 128 bytes are quad 2j's values in the low nibbles and quad
/// 2j + 1's in the high ones, each in the [kTileN][4] order of a byte panel.
/// Mx: those nibbles are MXFP4 codes, looked up as doubled values plus
/// kMxfp4Offset, their blocks scaled by E8M0 bytes (IntGemm::we).
template <int RM, bool Nib, bool Mx = false>
void tile(const IntGemm &g, int64_t m0) {
  constexpr int QB = 8; // quads per block of K
  constexpr int64_t kB = 4 * QB;
  const int64_t blocks = g.K / kB, lb = g.ldx / kB;
  const int64_t perGroup = blocks / g.groups;
  const bool rowScale = !Mx && g.groups == 1;
  __m512 f[RM][2];
  for (int m = 0; m < RM; ++m)
    f[m][0] = f[m][1] = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    __m512i acc[RM][2];
    for (int m = 0; m < RM; ++m)
      acc[m][0] = acc[m][1] = _mm512_set1_epi32(g.xc[(m0 + m) * lb + b]);
    const uint8_t *wb = g.w + b * kB * kTileN / (Nib ? 2 : 1);
    const int8_t *xb = g.xq + m0 * g.ldx + b * kB;
    for (int q = 0; q < QB; ++q) {
      __m512i w0, w1;
      if (Nib) {
        const __m512i low = _mm512_set1_epi8(0x0f);
        const uint8_t *p = wb + (q / 2) * 4 * kTileN;
        w0 = _mm512_loadu_si512(p);
        w1 = _mm512_loadu_si512(p + 64);
        if (q % 2) {
          w0 = _mm512_srli_epi16(w0, 4);
          w1 = _mm512_srli_epi16(w1, 4);
        }
        w0 = _mm512_and_si512(w0, low);
        w1 = _mm512_and_si512(w1, low);
        if (Mx) {
          const __m512i table = _mm512_add_epi8(
              _mm512_broadcast_i32x4(_mm_loadu_si128(
                  reinterpret_cast<const __m128i *>(kMxfp4Doubled))),
              _mm512_set1_epi8(char(kMxfp4Offset)));
          w0 = _mm512_shuffle_epi8(table, w0);
          w1 = _mm512_shuffle_epi8(table, w1);
        }
      } else {
        w0 = _mm512_loadu_si512(wb + q * 4 * kTileN);
        w1 = _mm512_loadu_si512(wb + q * 4 * kTileN + 64);
      }
      for (int m = 0; m < RM; ++m) {
        const __m512i x = broadcastQuad(xb + m * g.ldx + q * 4);
        acc[m][0] = _mm512_dpbusd_epi32(acc[m][0], w0, x);
        acc[m][1] = _mm512_dpbusd_epi32(acc[m][1], w1, x);
      }
    }
    __m512 sw0 = _mm512_set1_ps(1.0f), sw1 = sw0;
    if (Mx) {
      sw0 = e8m0Scales(g.we + (b / perGroup) * kTileN);
      sw1 = e8m0Scales(g.we + (b / perGroup) * kTileN + 16);
    } else if (!rowScale) {
      sw0 = _mm512_loadu_ps(g.ws + (b / perGroup) * kTileN);
      sw1 = _mm512_loadu_ps(g.ws + (b / perGroup) * kTileN + 16);
    }
    for (int m = 0; m < RM; ++m) {
      const __m512 sx = _mm512_set1_ps(g.xs[(m0 + m) * lb + b]);
      f[m][0] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[m][0]),
                          rowScale ? sx : _mm512_mul_ps(sx, sw0), f[m][0]);
      f[m][1] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[m][1]),
                          rowScale ? sx : _mm512_mul_ps(sx, sw1), f[m][1]);
    }
  }
  const PanelMasks masks(g.cols);
  const __mmask16 *keep = masks.keep;
  for (int v = 0; v < 2; ++v) {
    const __m512 scale =
        rowScale ? _mm512_loadu_ps(g.ws + v * 16) : _mm512_set1_ps(1.0f);
    const __m512 bias = g.bias && !g.accumulate
                            ? _mm512_maskz_loadu_ps(keep[v], g.bias + v * 16)
                            : _mm512_setzero_ps();
    for (int m = 0; m < RM; ++m) {
      float *out = g.out + (m0 + m) * g.ldo + v * 16;
      const __m512 base =
          g.accumulate ? _mm512_maskz_loadu_ps(keep[v], out) : bias;
      _mm512_mask_storeu_ps(out, keep[v],
                            _mm512_fmadd_ps(f[m][v], scale, base));
    }
  }
}

template <bool Nib, bool Mx = false> struct Tile {
  template <int RM> static void run(const IntGemm &g, int64_t m0) {
    tile<RM, Nib, Mx>(g, m0);
  }
};

} // namespace

void intTileAvx512(const IntGemm &g) { forTileRows<Tile<false>>(g, g.rows); }
void intTileNibblesAvx512(const IntGemm &g) {
  forTileRows<Tile<true>>(g, g.rows);
}
void intTileMxfp4Avx512(const IntGemm &g) {
  forTileRows<Tile<true, true>>(g, g.rows);
}

IntKernels intKernelsAvx512() {
  return {intTileAvx512,        intTileAvx512,    128,
          intTileNibblesAvx512, kquantTileAvx512, intTileMxfp4Avx512};
}

} // namespace llmc::cpu
