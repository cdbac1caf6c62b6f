//===- gemv_int_256.h - The 256-bit integer-dot panels ---------*- C++ -*-===//
//
// Included by gemv_int_avx2.cpp and gemv_int_avxvnni.cpp, each of which
// defines dot32(acc, u, s) first: acc plus, in each of 8 int32 lanes, the
// sum of four u8 * s8 products. Everything here has internal linkage, so the
// two builds of it never meet at link time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "gemv_int_common.h"

namespace llmc::cpu {
namespace {

// i8 weights are signed and vpmaddubsw / vpdpbusd want one unsigned side:
// multiply |w| by x carrying w's sign. i4 weights become unsigned (q + 8) by
// flipping bit 3; the accumulator starts at IntGemv::xn to take the 8 out.
// With one scale per weight row (i8) it is applied once, at the end. MXFP4
// codes widen to signed values by a table and then go as i8 does, with
// each block's E8M0 scale.
template <int R, int F>
void panel(const IntGemv &a, int64_t n0, int64_t n1, int64_t r0) {
  constexpr bool Q4 = F == kI4, Mx = F == kMx;
  const int64_t K = a.K, L = K / 4, blocks = K / kQuantBlock;
  const int64_t perGroup = a.group / kQuantBlock, groups = K / a.group;
  const bool rowScale = !Mx && groups == 1;
  const int64_t rowBytes = F != kI8 ? K / 2 : K;
  const float *half = e8m0HalfTable();
  for (int64_t n = n0; n < n1; ++n) {
    const float *ws = Mx ? nullptr : a.ws + n * groups;
    // The hardware prefetcher alone leaves these streams latency-bound.
    const char *ahead =
        static_cast<const char *>(a.w) + (n + kPrefetchRows) * rowBytes;
    if (n + kPrefetchRows < a.N)
      for (int64_t i = 0; i < rowBytes; i += 64)
        _mm_prefetch(ahead + i, _MM_HINT_T0);
    __m256 acc[R];
    for (int r = 0; r < R; ++r)
      acc[r] = _mm256_setzero_ps();
    for (int64_t b = 0; b < blocks; ++b) {
      __m256i u, w;
      if (Q4) {
        u = w = unpackNibbles(static_cast<const uint8_t *>(a.w) + n * (K / 2) +
                              b * 16);
      } else {
        w = Mx ? unpackMxfp4(static_cast<const uint8_t *>(a.w) + n * (K / 2) +
                             b * 16)
               : _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
                     static_cast<const int8_t *>(a.w) + n * K +
                     b * kQuantBlock));
        u = _mm256_sign_epi8(w, w); // -128 stays 0x80, which is 128 unsigned
      }
      const __m256 sw = _mm256_set1_ps(Mx         ? half[a.we[n * blocks + b]]
                                       : rowScale ? 1.0f
                                                  : ws[b / perGroup]);
      for (int r = 0; r < R; ++r) {
        const int64_t row = r0 + r, lane = row * L + b * 8;
        __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
            a.xq + row * K + b * kQuantBlock));
        __m256i start = Q4 ? _mm256_loadu_si256(
                                 reinterpret_cast<const __m256i *>(a.xn + lane))
                           : _mm256_setzero_si256();
        __m256i d = dot32(start, u, Q4 ? x : _mm256_sign_epi8(x, w));
        __m256 s = _mm256_loadu_ps(a.xs + lane);
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d),
                                 rowScale ? s : _mm256_mul_ps(s, sw), acc[r]);
      }
    }
    for (int r = 0; r < R; ++r) {
      const int64_t row = r0 + r;
      float v = hsum8(acc[r]) * (rowScale ? ws[0] : 1.0f);
      a.out[row * a.N + n] = v + (a.bias ? a.bias[n] : 0.0f);
    }
  }
}

template <int F> struct Panel {
  template <int R>
  static void run(const IntGemv &a, int64_t n0, int64_t n1, int64_t r0) {
    panel<R, F>(a, n0, n1, r0);
  }
};

template <int F>
void panelAny(const IntGemv &a, int64_t n0, int64_t n1, int64_t r0, int64_t R) {
  forRowCount<Panel<F>>(R, a, n0, n1, r0);
}

} // namespace
} // namespace llmc::cpu
