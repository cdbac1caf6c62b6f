//===- gemm_f32_avx512.cpp - The f32 GEMM tile with AVX-512 FMAs ----------===//
//
// Built with -mavx512f -mavx512bw -mavx512vl. A tile is up to 6 rows by the
// panel's 32 columns: 12 accumulators, each FMA adding one column of K for
// 16 output columns. bf16 weights come here widened (exactly) by the pack:
// without AMX, two FMA ports outrun vdpbf16ps (measured: 116 GFLOP/s for a
// vdpbf16ps tile, against 258 for oneDNN's f32 on this CPU).
//
//===----------------------------------------------------------------------===//
#include "gemm_avx512.h"

namespace llmc::cpu {
namespace {

template <int RM> void tile(const F32Gemm &g, int64_t m0) {
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
    const float *wk = g.w + k * g.ldw;
    const __m512 w0 = _mm512_loadu_ps(wk), w1 = _mm512_loadu_ps(wk + 16);
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
    tile<RM>(g, m0);
  }
};

} // namespace

void f32TileAvx512(const F32Gemm &g) { forTileRows<Tile>(g, g.rows); }

} // namespace llmc::cpu
