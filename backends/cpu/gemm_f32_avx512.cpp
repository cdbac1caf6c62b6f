//===- gemm_f32_avx512.cpp - The f32 GEMM tile with AVX-512 FMAs ----------===//
//
// Built with -mavx512f -mavx512bw -mavx512vl. A tile is up to 6 rows by the
// panel's 32 columns: 12 accumulators, each FMA adding one column of K for
// 16 output columns. f32, f16 and bf16 weights (bf16 where the CPU lacks
// AVX512-BF16, and expert stacks it does not pack; bf16/f16 widened
// exactly, here or by the pack) and MXFP4 with f32 activations (decoded)
// run here at every row count: each result is its bias, then one FMA per k
// in order.
//
//===----------------------------------------------------------------------===//
#include "gemm_avx512.h"

namespace llmc::cpu {
namespace {

/// Columns [16v, 16v + 16) of weight row k, as f32.
template <PanelType T>
__attribute__((always_inline)) inline __m512 weights(const void *w, int64_t k,
                                                     int64_t ldw, int v) {
  if constexpr (T == PanelType::F32)
    return _mm512_loadu_ps(static_cast<const float *>(w) + k * ldw + 16 * v);
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
      static_cast<const uint16_t *>(w) + k * ldw + 16 * v));
  if constexpr (T == PanelType::F16)
    return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

template <int RM, PanelType T> void tile(const F32Gemm &g, int64_t m0) {
  const PanelMasks masks(g.cols);
  const __mmask16 *keep = masks.keep;
  __m512 f[RM][2];
  for (int v = 0; v < 2; ++v) {
    const __m512 bias = g.bias && !g.accumulate
                            ? _mm512_maskz_loadu_ps(keep[v], g.bias + v * 16)
                            : _mm512_setzero_ps();
    for (int m = 0; m < RM; ++m)
      f[m][v] = g.accumulate ? _mm512_maskz_loadu_ps(
                                   keep[v], g.out + (m0 + m) * g.ldo + v * 16)
                             : bias;
  }
  const float *x = g.x + m0 * g.K;
  for (int64_t k = 0; k < g.K; ++k) {
    const __m512 w0 = weights<T>(g.w, k, g.ldw, 0),
                 w1 = weights<T>(g.w, k, g.ldw, 1);
    for (int m = 0; m < RM; ++m) {
      const __m512 xk = _mm512_set1_ps(x[k * kTileRows + m]);
      f[m][0] = _mm512_fmadd_ps(xk, w0, f[m][0]);
      f[m][1] = _mm512_fmadd_ps(xk, w1, f[m][1]);
    }
  }
  for (int v = 0; v < 2; ++v)
    for (int m = 0; m < RM; ++m)
      _mm512_mask_storeu_ps(g.out + (m0 + m) * g.ldo + v * 16, keep[v],
                            f[m][v]);
}

struct Tile {
  template <int RM> static void run(const F32Gemm &g, int64_t m0) {
    switch (g.type) {
    case PanelType::F32:
      return tile<RM, PanelType::F32>(g, m0);
    case PanelType::Bf16:
      return tile<RM, PanelType::Bf16>(g, m0);
    case PanelType::F16:
      return tile<RM, PanelType::F16>(g, m0);
    }
  }
};

} // namespace

void f32TileAvx512(const F32Gemm &g) { forTileRows<Tile>(g, g.rows); }

} // namespace llmc::cpu
