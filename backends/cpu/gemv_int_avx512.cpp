//===- gemv_int_avx512.cpp - Integer-dot panels with AVX512-VNNI ----------===//
//
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512vnni. Two blocks of 32
// per vpdpbusd: lanes 0-7 hold the first block's sums, 8-15 the second's,
// so each half is scaled by its own block's scales. A last odd block runs on
// 256 bits.
//
//===----------------------------------------------------------------------===//
#include "gemv_int_common.h"

namespace llmc::cpu {
namespace {

inline __m512 halves(float lo, float hi) {
  return _mm512_mask_blend_ps(0xff00, _mm512_set1_ps(lo), _mm512_set1_ps(hi));
}

/// Block b's scale in lanes 0-3 and 8-11, b+1's in 4-7 and 12-15: the int32
/// lanes of a pair of i4 blocks in the paired nibble order.
inline __m512 pairedHalves(float lo, float hi) {
  return _mm512_mask_blend_ps(0xf0f0, _mm512_set1_ps(lo), _mm512_set1_ps(hi));
}

/// Two i4 blocks (32 bytes) as unsigned q + 8 in the paired nibble order:
/// the low nibbles of both blocks, then the high ones — the 32 bytes twice,
/// the upper copy shifted down by 4, no shuffle across lanes.
inline __m512i pairedNibbles(const uint8_t *p) {
  const __m512i flip = _mm512_set1_epi8(char(0x88)); // q -> q + 8
  const __m512i shifts =
      _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  __m512i v = _mm512_xor_si512(_mm512_broadcast_i64x4(_mm256_loadu_si256(
                                   reinterpret_cast<const __m256i *>(p))),
                               flip);
  return _mm512_and_si512(_mm512_srlv_epi16(v, shifts), _mm512_set1_epi8(0x0f));
}

/// Two MXFP4 blocks (32 bytes of codes) as their doubled values (signed
/// bytes) in the paired nibble order.
inline __m512i pairedMxfp4(const uint8_t *p) {
  const __m512i shifts =
      _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  const __m512i v = _mm512_broadcast_i64x4(
      _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
  const __m512i codes =
      _mm512_and_si512(_mm512_srlv_epi16(v, shifts), _mm512_set1_epi8(0x0f));
  const __m512i table = _mm512_broadcast_i32x4(
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(kMxfp4Doubled)));
  return _mm512_shuffle_epi8(table, codes);
}

template <int R, int F>
void panel(const IntGemv &a, int64_t n0, int64_t n1, int64_t r0) {
  constexpr bool Q4 = F == kI4, Mx = F == kMx;
  const int64_t K = a.K, L = K / 4, blocks = K / kQuantBlock;
  const int64_t perGroup = a.group / kQuantBlock, groups = K / a.group;
  const bool rowScale = !Mx && groups == 1;
  const __m512i zero = _mm512_setzero_si512();
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
    const uint8_t *w4 = static_cast<const uint8_t *>(a.w) + n * (K / 2);
    const int8_t *w8 = static_cast<const int8_t *>(a.w) + n * K;
    const uint8_t *we = Mx ? a.we + n * blocks : nullptr;
    __m512 acc[R];
    for (int r = 0; r < R; ++r)
      acc[r] = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= blocks; b += 2) {
      __m512i u;
      __mmask64 neg = 0;
      if (Q4) {
        u = pairedNibbles(w4 + b * 16);
      } else {
        __m512i w = Mx ? pairedMxfp4(w4 + b * 16)
                       : _mm512_loadu_si512(w8 + b * kQuantBlock);
        u = _mm512_abs_epi8(w); // -128 stays 0x80, which is 128 unsigned
        neg = _mm512_movepi8_mask(w);
      }
      __m512 sw = _mm512_set1_ps(1.0f);
      if (Mx)
        sw = pairedHalves(half[we[b]], half[we[b + 1]]);
      else if (!rowScale)
        sw = perGroup != 1 ? _mm512_set1_ps(ws[b / perGroup])
             : Q4          ? pairedHalves(ws[b], ws[b + 1])
                           : halves(ws[b], ws[b + 1]);
      for (int r = 0; r < R; ++r) {
        const int64_t row = r0 + r, lane = row * L + b * 8;
        __m512i x = _mm512_loadu_si512(a.xq + row * K + b * kQuantBlock);
        if (!Q4)
          x = _mm512_mask_sub_epi8(x, neg, zero, x);
        __m512i d = _mm512_dpbusd_epi32(
            Q4 ? _mm512_loadu_si512(a.xn + lane) : zero, u, x);
        __m512 s = _mm512_loadu_ps(a.xs + lane);
        acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d),
                                 rowScale ? s : _mm512_mul_ps(s, sw), acc[r]);
      }
    }
    float tail[R] = {};
    if (b < blocks) {
      __m256i u, w;
      if (Q4) {
        u = w = unpackNibbles(w4 + b * 16);
      } else {
        w = Mx ? unpackMxfp4(w4 + b * 16)
               : _mm256_loadu_si256(
                     reinterpret_cast<const __m256i *>(w8 + b * kQuantBlock));
        u = _mm256_abs_epi8(w);
      }
      const float sw = Mx ? half[we[b]] : rowScale ? 1.0f : ws[b / perGroup];
      for (int r = 0; r < R; ++r) {
        const int64_t row = r0 + r, lane = row * L + b * 8;
        __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
            a.xq + row * K + b * kQuantBlock));
        __m256i d = _mm256_dpbusd_epi32(
            Q4 ? _mm256_loadu_si256(
                     reinterpret_cast<const __m256i *>(a.xn + lane))
               : _mm256_setzero_si256(),
            u, Q4 ? x : _mm256_sign_epi8(x, w));
        tail[r] = hsum8(_mm256_cvtepi32_ps(d)) * a.xs[lane] * sw;
      }
    }
    for (int r = 0; r < R; ++r) {
      float v =
          (_mm512_reduce_add_ps(acc[r]) + tail[r]) * (rowScale ? ws[0] : 1.0f);
      a.out[(r0 + r) * a.N + n] = v + (a.bias ? a.bias[n] : 0.0f);
    }
  }
}

/// Two blocks of weight row `n` from block b: unsigned bytes for vpdpbusd
/// (i4: q + 8; i8 and MXFP4: |w|, with the sign in `neg` for the
/// activations).
template <int F>
inline __m512i weightPair(const IntGemv &a, int64_t n, int64_t b,
                          __mmask64 &neg) {
  const int64_t K = a.K;
  if (F == kI4)
    return pairedNibbles(static_cast<const uint8_t *>(a.w) + n * (K / 2) +
                         b * 16);
  const int8_t *w8 = static_cast<const int8_t *>(a.w) + n * K;
  __m512i w = F == kMx ? pairedMxfp4(static_cast<const uint8_t *>(a.w) +
                                     n * (K / 2) + b * 16)
                       : _mm512_loadu_si512(w8 + b * kQuantBlock);
  neg = _mm512_movepi8_mask(w);
  return _mm512_abs_epi8(w);
}

/// A single activation row (decode) against kCols weight rows at a time:
/// the row's quantized blocks, offsets and scales are loaded once for all
/// of them, and the four dot products reduce together. The blocks of
/// `panel` otherwise; the rows past the last group of kCols run there.
template <int F>
void panelOneRow(const IntGemv &a, int64_t n0, int64_t n1, int64_t r0) {
  constexpr bool Q4 = F == kI4, Mx = F == kMx;
  constexpr int kCols = 4;
  const int64_t K = a.K, L = K / 4, blocks = K / kQuantBlock;
  const int64_t perGroup = a.group / kQuantBlock, groups = K / a.group;
  const bool rowScale = !Mx && groups == 1;
  const int64_t rowBytes = F != kI8 ? K / 2 : K;
  const float *half = e8m0HalfTable();
  const __m512i zero = _mm512_setzero_si512();
  const int8_t *xq = a.xq + r0 * K;
  const float *xs = a.xs + r0 * L;
  const int32_t *xn = Q4 ? a.xn + r0 * L : nullptr;
  int64_t n = n0;
  for (; n + kCols <= n1 && blocks % 2 == 0; n += kCols) {
    const char *ahead =
        static_cast<const char *>(a.w) + (n + kPrefetchRows) * rowBytes;
    if (n + kPrefetchRows + kCols <= a.N)
      for (int64_t i = 0; i < kCols * rowBytes; i += 64)
        _mm_prefetch(ahead + i, _MM_HINT_T0);
    __m512 acc[kCols];
    for (int j = 0; j < kCols; ++j)
      acc[j] = _mm512_setzero_ps();
    for (int64_t b = 0; b < blocks; b += 2) {
      const __m512i x = _mm512_loadu_si512(xq + b * kQuantBlock);
      const __m512i start =
          Q4 ? _mm512_loadu_si512(xn + b * 8) : _mm512_setzero_si512();
      const __m512 s = _mm512_loadu_ps(xs + b * 8);
      for (int j = 0; j < kCols; ++j) {
        __mmask64 neg = 0;
        const __m512i u = weightPair<F>(a, n + j, b, neg);
        const __m512i xj = Q4 ? x : _mm512_mask_sub_epi8(x, neg, zero, x);
        const __m512i d = _mm512_dpbusd_epi32(start, u, xj);
        const float *ws = Mx ? nullptr : a.ws + (n + j) * groups;
        const uint8_t *we = Mx ? a.we + (n + j) * blocks : nullptr;
        const __m512 sw =
            Mx ? _mm512_mul_ps(s, pairedHalves(half[we[b]], half[we[b + 1]]))
            : rowScale ? s
            : perGroup != 1
                ? _mm512_mul_ps(s, _mm512_set1_ps(ws[b / perGroup]))
                : _mm512_mul_ps(s, Q4 ? pairedHalves(ws[b], ws[b + 1])
                                      : halves(ws[b], ws[b + 1]));
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), sw, acc[j]);
      }
    }
    for (int j = 0; j < kCols; ++j) {
      float v = _mm512_reduce_add_ps(acc[j]) *
                (rowScale ? a.ws[(n + j) * groups] : 1.0f);
      a.out[r0 * a.N + n + j] = v + (a.bias ? a.bias[n + j] : 0.0f);
    }
  }
  if (n < n1)
    panel<1, F>(a, n, n1, r0);
}

template <int F> struct Panel {
  template <int R>
  static void run(const IntGemv &a, int64_t n0, int64_t n1, int64_t r0) {
    if (R == 1)
      return panelOneRow<F>(a, n0, n1, r0);
    panel<R, F>(a, n0, n1, r0);
  }
};

template <int F>
void panelAny(const IntGemv &a, int64_t n0, int64_t n1, int64_t r0, int64_t R) {
  forRowCount<Panel<F>>(R, a, n0, n1, r0);
}

} // namespace

IntKernels intKernelsAvx512() {
  return {panelAny<kI8>,
          panelAny<kI4>,
          intTileAvx512,
          intTileAvx512,
          128,
          true,
          panelAny<kMx>,
          intTileNibblesAvx512,
          kquantTileAvx512,
          intTileMxfp4Avx512};
}

} // namespace llmc::cpu
