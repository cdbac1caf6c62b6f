//===- gemv_bf16_avx512.cpp - bf16 GEMV panels with vdpbf16ps -------------===//
//
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512bf16. The activations
// come rounded to bf16 (once per step, by the caller), so each instruction
// multiplies 32 weight pairs; the sums stay f32.
//
//===----------------------------------------------------------------------===//
#include "gemv_int_common.h"

namespace llmc::cpu {
namespace {

inline __m512bh asBh(__m512i v) { return reinterpret_cast<__m512bh &>(v); }

template <int R>
void panel(const Bf16Gemv &a, int64_t n0, int64_t n1, int64_t r0) {
  const int64_t K = a.K, tail = K % 32;
  const __mmask32 tailMask = __mmask32((uint64_t(1) << tail) - 1);
  for (int64_t n = n0; n < n1; ++n) {
    const uint16_t *wn = a.w + n * K;
    if (n + kPrefetchRows < a.N)
      for (int64_t i = 0; i < K; i += 32)
        _mm_prefetch(reinterpret_cast<const char *>(wn + kPrefetchRows * K + i),
                     _MM_HINT_T0);
    // Two chains per row: vdpbf16ps's latency would otherwise bound a
    // single row's dot product.
    __m512 acc[R], acc2[R];
    for (int r = 0; r < R; ++r)
      acc[r] = acc2[r] = _mm512_setzero_ps();
    int64_t k = 0;
    for (; k + 64 <= K; k += 64) {
      __m512bh w0 = asBh(_mm512_loadu_si512(wn + k));
      __m512bh w1 = asBh(_mm512_loadu_si512(wn + k + 32));
      for (int r = 0; r < R; ++r) {
        const uint16_t *x = a.x + (r0 + r) * K + k;
        acc[r] = _mm512_dpbf16_ps(acc[r], w0, asBh(_mm512_loadu_si512(x)));
        acc2[r] =
            _mm512_dpbf16_ps(acc2[r], w1, asBh(_mm512_loadu_si512(x + 32)));
      }
    }
    for (; k + 32 <= K; k += 32) {
      __m512bh w = asBh(_mm512_loadu_si512(wn + k));
      for (int r = 0; r < R; ++r)
        acc[r] = _mm512_dpbf16_ps(
            acc[r], w, asBh(_mm512_loadu_si512(a.x + (r0 + r) * K + k)));
    }
    if (tail) {
      __m512bh w = asBh(_mm512_maskz_loadu_epi16(tailMask, wn + k));
      for (int r = 0; r < R; ++r)
        acc[r] = _mm512_dpbf16_ps(
            acc[r], w,
            asBh(_mm512_maskz_loadu_epi16(tailMask, a.x + (r0 + r) * K + k)));
    }
    for (int r = 0; r < R; ++r)
      a.out[(r0 + r) * a.N + n] =
          _mm512_reduce_add_ps(_mm512_add_ps(acc[r], acc2[r])) +
          (a.bias ? a.bias[n] : 0.0f);
  }
}

struct Panel {
  template <int R>
  static void run(const Bf16Gemv &a, int64_t n0, int64_t n1, int64_t r0) {
    panel<R>(a, n0, n1, r0);
  }
};

void panelAny(const Bf16Gemv &a, int64_t n0, int64_t n1, int64_t r0,
              int64_t R) {
  forRowCount<Panel>(R, a, n0, n1, r0);
}

} // namespace

Bf16Panel bf16PanelAvx512() { return panelAny; }

} // namespace llmc::cpu
