//===- gemm_f32_avx2.cpp - The f32 GEMM tile with AVX2 FMAs ---------------===//
//
// The baseline level's F32Tile: 3 rows by half a panel (16 columns, two
// vectors) at a time in 6 accumulators; a 6-row tile of x takes two passes
// per half.
// Built for the baseline, like the rest of the library.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"
#include "gemv_int_common.h"

namespace llmc::cpu {
namespace {

/// Columns [8v, 8v + 8) of weight row k (from the half's first column), as
/// f32.
template <PanelType T>
__attribute__((always_inline)) inline __m256 weights(const void *w, int64_t k,
                                                     int64_t ldw, int v) {
  if constexpr (T == PanelType::F32)
    return _mm256_loadu_ps(static_cast<const float *>(w) + k * ldw + 8 * v);
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(
      static_cast<const uint16_t *>(w) + k * ldw + 8 * v));
  if constexpr (T == PanelType::F16)
    return _mm256_cvtph_ps(h);
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/// io[m][0..16) += sum over k of x[k][m] * w[k][0..16). Kept out of line:
/// inlined into tileHalf, GCC 12 stores every accumulator on every step.
template <int RM, PanelType T>
__attribute__((noinline)) void kernel(const float *x, const void *w, int64_t K,
                                      int64_t ldw, float *io) {
  __m256 lo[RM], hi[RM];
  for (int m = 0; m < RM; ++m) {
    lo[m] = _mm256_loadu_ps(io + 16 * m);
    hi[m] = _mm256_loadu_ps(io + 16 * m + 8);
  }
  for (int64_t k = 0; k < K; ++k) {
    const __m256 w0 = weights<T>(w, k, ldw, 0), w1 = weights<T>(w, k, ldw, 1);
    for (int m = 0; m < RM; ++m) {
      const __m256 xk = _mm256_broadcast_ss(x + k * kF32TileRows + m);
      lo[m] = _mm256_fmadd_ps(xk, w0, lo[m]);
      hi[m] = _mm256_fmadd_ps(xk, w1, hi[m]);
    }
  }
  for (int m = 0; m < RM; ++m) {
    _mm256_storeu_ps(io + 16 * m, lo[m]);
    _mm256_storeu_ps(io + 16 * m + 8, hi[m]);
  }
}

/// Rows [r0, r0 + RM) of tile t by columns [c0, c0 + 16) of the panel;
/// `cols` of them are real, so the start and end values go through `io`.
template <int RM>
void tileHalf(const F32Gemm &g, int64_t t, int64_t r0, int64_t c0,
              int64_t cols) {
  float *out = g.out + (t * kF32TileRows + r0) * g.ldo + c0;
  float io[RM * 16];
  for (int m = 0; m < RM; ++m)
    for (int64_t c = 0; c < 16; ++c)
      io[m * 16 + c] = c >= cols      ? 0.0f
                       : g.accumulate ? out[m * g.ldo + c]
                       : g.bias       ? g.bias[c0 + c]
                                      : 0.0f;
  const float *x = g.x + t * kF32TileRows * g.K + r0;
  const auto *w = static_cast<const uint8_t *>(g.w) +
                  c0 * (g.type == PanelType::F32 ? 4 : 2);
  switch (g.type) {
  case PanelType::F32:
    kernel<RM, PanelType::F32>(x, w, g.K, g.ldw, io);
    break;
  case PanelType::Bf16:
    kernel<RM, PanelType::Bf16>(x, w, g.K, g.ldw, io);
    break;
  case PanelType::F16:
    kernel<RM, PanelType::F16>(x, w, g.K, g.ldw, io);
    break;
  }
  for (int m = 0; m < RM; ++m)
    for (int64_t c = 0; c < cols; ++c)
      out[m * g.ldo + c] = io[m * 16 + c];
}

struct Tile {
  template <int RM> static void run(const F32Gemm &g, int64_t m0) {
    const int64_t t = m0 / kTileRows;
    for (int64_t c0 = 0; c0 < g.cols; c0 += 16) {
      const int64_t cols = std::min<int64_t>(16, g.cols - c0);
      if constexpr (RM > 3) {
        tileHalf<3>(g, t, 0, c0, cols);
        tileHalf<RM - 3>(g, t, 3, c0, cols);
      } else {
        tileHalf<RM>(g, t, 0, c0, cols);
      }
    }
  }
};

} // namespace

void f32TileAvx2(const F32Gemm &g) { forTileRows<Tile>(g, g.rows); }

} // namespace llmc::cpu
