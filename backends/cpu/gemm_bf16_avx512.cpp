//===- gemm_bf16_avx512.cpp - The bf16 tile with vdpbf16ps ----------------===//
//
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512bf16. A tile is up to 6
// rows by the panel's 32 columns: each pair of K is one 64-byte load per 16
// columns (Bf16Gemm's order) and one vdpbf16ps per row and vector, against
// the row's pair of bf16 activations broadcast. Every row count runs this
// tile, so a row's result is the same bits batched or alone.
//
//===----------------------------------------------------------------------===//
#include "gemm_avx512.h"

namespace llmc::cpu {
namespace {

inline __m512bh asBh(__m512i v) { return reinterpret_cast<__m512bh &>(v); }

inline __m512i broadcastPair(const uint16_t *p) {
  int32_t v;
  __builtin_memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

template <int RM> void tile(const Bf16Gemm &g, int64_t m0) {
  __m512 acc[RM][2];
  for (int m = 0; m < RM; ++m)
    acc[m][0] = acc[m][1] = _mm512_setzero_ps();
  const uint16_t *x = g.x + m0 * g.K;
  for (int64_t k = 0; k < g.K; k += 2) {
    const __m512bh w0 = asBh(_mm512_loadu_si512(g.w + k * kTileN));
    const __m512bh w1 = asBh(_mm512_loadu_si512(g.w + k * kTileN + 32));
    for (int m = 0; m < RM; ++m) {
      const __m512bh xv = asBh(broadcastPair(x + m * g.K + k));
      acc[m][0] = _mm512_dpbf16_ps(acc[m][0], w0, xv);
      acc[m][1] = _mm512_dpbf16_ps(acc[m][1], w1, xv);
    }
  }
  storeRows<RM>(acc, g.bias, g.out, g.ldo, m0, g.cols);
}

struct Tile {
  template <int RM> static void run(const Bf16Gemm &g, int64_t m0) {
    tile<RM>(g, m0);
  }
};

} // namespace

void bf16TileAvx512(const Bf16Gemm &g) { forTileRows<Tile>(g, g.rows); }

} // namespace llmc::cpu
