//===- gemv_kquant_avx512.cpp - K-quant dots on 512-bit vpmaddubsw --------===//
//
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512vnni. The AVX2 kernels
// (gemv_kquant.cpp) on twice the width: a chunk of 64 codes meets its 64
// activations in one vpmaddubsw, and vpdpwssd scales the lower half's pair
// sums by one sub-block's scale and the upper half's by the next (Q6_K: four
// sub-blocks of 16 per 64) as it accumulates. Up to 8 activation rows per
// weight row (the codes are unpacked once for all 8); each super-block's
// integers reduce in one tree over the rows. Headers are read
// with intrinsics only (isa.h: this file includes nothing from the standard
// library).
//
//===----------------------------------------------------------------------===//
#include "kquant_dot.h"

#include <immintrin.h>

namespace llmc::cpu {
namespace {

inline __m256i load256(const void *p) {
  return _mm256_loadu_si256(static_cast<const __m256i *>(p));
}

inline __m512i join(__m256i lo, __m256i hi) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

/// f16 at p (unaligned) as a float.
inline float half(const uint8_t *p) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(p[0] | (p[1] << 8))));
}

inline uint32_t word(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}

/// Q4_K / Q5_K's eight 6-bit scales (bytes 0-7) and mins (8-15) from their
/// 12 packed bytes (kquant::scalesAndMins, in intrinsics).
inline __m128i scaleMins(const uint8_t *p) {
  const uint32_t w0 = word(p), w1 = word(p + 4), w2 = word(p + 8);
  const uint32_t six = 0x3f3f3f3f, four = 0x0f0f0f0f, two = 0x03030303;
  return _mm_setr_epi32(
      int(w0 & six), int((w2 & four) | ((w0 >> 6) & two) << 4), int(w1 & six),
      int(((w2 >> 4) & four) | ((w1 >> 6) & two) << 4));
}

/// The scales for one 128-value half h of a super-block, as vpdpwssd takes
/// them beside the paired q8_K order: sub-blocks 4h and 4h + 2 (the low
/// nibbles of 64 code bytes) in the low and high 16 words, then 4h + 1 and
/// 4h + 3 (the high nibbles).
struct PairScales {
  __m512i index[4]; // words of the scales table, per (h, nibble)
  PairScales() {
    for (int i = 0; i < 4; ++i) {
      const int first = 4 * (i / 2) + i % 2;
      index[i] =
          _mm512_mask_blend_epi16(0xffff0000u, _mm512_set1_epi16(short(first)),
                                  _mm512_set1_epi16(short(first + 2)));
    }
  }
};

/// Q5_K's fifth bits of the same 64 values: bit j of qh[l] belongs to
/// value 32j + l, so each half of a broadcast qh tests its own bit.
struct FifthBits {
  __m512i select[4];
  FifthBits() {
    for (int i = 0; i < 4; ++i) {
      const int first = 4 * (i / 2) + i % 2;
      select[i] = _mm512_mask_blend_epi8(
          0xffffffff00000000ull, _mm512_set1_epi8(char(1 << first)),
          _mm512_set1_epi8(char(1 << (first + 2))));
    }
  }
};

/// Lane r (r < R <= 8; the others 0): the sum of v[r]'s 16 int32, or 8
/// (Wide false: the upper halves are not read).
template <int R, bool Wide = true> inline __m256i rowSums(const __m512i *v) {
  __m256i h[8];
  for (int r = 0; r < 8; ++r)
    h[r] = r >= R  ? _mm256_setzero_si256()
           : !Wide ? _mm512_castsi512_si256(v[r])
                   : _mm256_add_epi32(_mm512_castsi512_si256(v[r]),
                                      _mm512_extracti64x4_epi64(v[r], 1));
  // Rows 0-3 in the lower 128 bits of each quarter sum, 4-7 in the upper.
  const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(h[0], h[1]),
                                      _mm256_hadd_epi32(h[2], h[3]));
  if (R <= 4)
    return _mm256_zextsi128_si256(_mm_add_epi32(
        _mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1)));
  const __m256i b = _mm256_hadd_epi32(_mm256_hadd_epi32(h[4], h[5]),
                                      _mm256_hadd_epi32(h[6], h[7]));
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20),
                          _mm256_permute2x128_si256(a, b, 0x31));
}

/// Lane r: row r's q8_K scale for this super-block.
template <int R> inline __m256 rowScales(const Q8K *const *x) {
  alignas(32) float d[8] = {};
  for (int r = 0; r < R; ++r)
    d[r] = x[r]->d;
  return _mm256_load_ps(d);
}

/// Lane 0: the sum of i's 16 int32; lane 1: of m's 4.
inline __m128i sumPair(__m512i i, __m128i m) {
  const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(i),
                                     _mm512_extracti64x4_epi64(i, 1));
  const __m128i q =
      _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
  const __m128i p = _mm_hadd_epi32(q, m);
  return _mm_hadd_epi32(p, p);
}

/// f (lane r: row r) gains float(isum) d dx, then (Mins) loses float(msum)
/// dmin dx: KQuantGemm's two steps. One row (a single stream's decode) sums
/// its two integers in one short tree.
template <int R, bool Mins>
inline void step(const __m512i *isum, const __m128i *msum, float d, float dmin,
                 const Q8K *const *x, __m256 &f) {
  if constexpr (R == 1) {
    const __m128 v =
        _mm_cvtepi32_ps(sumPair(isum[0], Mins ? msum[0] : _mm_setzero_si128()));
    const __m128 dx = _mm_set_ss(x[0]->d);
    __m128 f0 = _mm256_castps256_ps128(f);
    f0 = _mm_fmadd_ss(v, _mm_mul_ss(_mm_set_ss(d), dx), f0);
    if (Mins)
      f0 = _mm_fnmadd_ss(_mm_movehdup_ps(v), _mm_mul_ss(_mm_set_ss(dmin), dx),
                         f0);
    f = _mm256_zextps128_ps256(f0);
    return;
  }
  const __m256 dx = rowScales<R>(x);
  f = _mm256_fmadd_ps(_mm256_cvtepi32_ps(rowSums<R>(isum)),
                      _mm256_mul_ps(_mm256_set1_ps(d), dx), f);
  if constexpr (Mins) {
    __m512i m[R];
    for (int r = 0; r < R; ++r)
      m[r] = _mm512_zextsi128_si512(msum[r]);
    f = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(rowSums<R, false>(m)),
                         _mm256_mul_ps(_mm256_set1_ps(dmin), dx), f);
  }
}

/// One super-block of Q4_K / Q5_K against R rows of q8_K in the paired order
/// (kquant_dot.h): 64 code bytes are 128 values, their low nibbles meeting
/// the first 64 activations and their high nibbles the next 64.
template <int R, bool Five>
inline void dotQ45K(const uint8_t *header, const uint8_t *codes,
                    const Q8K *const *x, __m256 &f, const PairScales &ps,
                    const FifthBits &fb) {
  const float d = half(header), dmin = half(header + 2);
  const __m128i packed = scaleMins(header + 4);
  const __m512i table = _mm512_cvtepu8_epi16(_mm256_zextsi128_si256(packed));
  const __m128i mn = _mm_cvtepu8_epi16(_mm_srli_si128(packed, 8));
  const uint8_t *qs = codes + (Five ? 32 : 0);
  const __m512i low = _mm512_set1_epi8(0x0f), sixteen = _mm512_set1_epi8(16);
  const __m512i hbits =
      Five ? _mm512_broadcast_i64x4(load256(codes)) : _mm512_setzero_si512();
  __m512i sum[R];
  for (int r = 0; r < R; ++r)
    sum[r] = _mm512_setzero_si512();
  for (int h = 0; h < 2; ++h) {
    const __m512i q = _mm512_loadu_si512(qs + 64 * h);
    __m512i v[2] = {_mm512_and_si512(q, low),
                    _mm512_and_si512(_mm512_srli_epi16(q, 4), low)};
    for (int n = 0; n < 2; ++n) {
      if (Five)
        v[n] = _mm512_mask_add_epi8(
            v[n], _mm512_test_epi8_mask(hbits, fb.select[2 * h + n]), v[n],
            sixteen);
      const __m512i s = _mm512_permutexvar_epi16(ps.index[2 * h + n], table);
      for (int r = 0; r < R; ++r)
        sum[r] = _mm512_dpwssd_epi32(
            sum[r],
            _mm512_maddubs_epi16(
                v[n], _mm512_loadu_si512(x[r]->q + 128 * h + 64 * n)),
            s);
    }
  }
  __m128i mins[R];
  for (int r = 0; r < R; ++r) {
    const __m128i b = _mm_loadu_si128(
                      reinterpret_cast<const __m128i *>(x[r]->bsums)),
                  b2 = _mm_loadu_si128(
                      reinterpret_cast<const __m128i *>(x[r]->bsums + 8));
    mins[r] = _mm_madd_epi16(mn, _mm_hadd_epi16(b, b2));
  }
  step<R, true>(sum, mins, d, dmin, x, f);
}

/// Lane i of 32 int16 lanes: i / 8, the sub-block of 16 a pair sum of a
/// 64-value chunk belongs to.
inline __m512i subBlockOfLane() {
  return _mm512_cvtepu8_epi16(_mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1,
                                               1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2,
                                               2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
}

template <int R>
inline void dotQ6K(const uint8_t *header, const uint8_t *codes,
                   const Q8K *const *x, __m256 &f) {
  const float d = half(header + 16);
  const __m256i scales16 = _mm256_cvtepi8_epi16(
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(header)));
  const __m512i table = _mm512_castsi256_si512(scales16),
                lanes = subBlockOfLane();
  const __m256i low = _mm256_set1_epi8(0x0f), two = _mm256_set1_epi8(3);
  __m512i sum[R];
  for (int r = 0; r < R; ++r)
    sum[r] = _mm512_setzero_si512();
  for (int h = 0; h < 2; ++h) {
    const uint8_t *ql = codes + 64 * h, *qh = codes + 128 + 32 * h;
    const __m256i a = load256(ql), b = load256(ql + 32), hb = load256(qh);
    auto high = [&](int shift) {
      return _mm256_slli_epi16(
          _mm256_and_si256(_mm256_srli_epi16(hb, shift), two), 4);
    };
    // Values 0-63 of this half, then 64-127 (kquant::code's order).
    const __m512i v[2] = {
        join(_mm256_or_si256(_mm256_and_si256(a, low), high(0)),
             _mm256_or_si256(_mm256_and_si256(b, low), high(2))),
        join(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), low),
                             high(4)),
             _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 4), low),
                             high(6)))};
    for (int c = 0; c < 2; ++c) {
      const __m512i s = _mm512_permutexvar_epi16(
          _mm512_add_epi16(lanes, _mm512_set1_epi16(short(8 * h + 4 * c))),
          table);
      for (int r = 0; r < R; ++r)
        sum[r] = _mm512_dpwssd_epi32(
            sum[r],
            _mm512_maddubs_epi16(
                v[c], _mm512_loadu_si512(x[r]->q + 128 * h + 64 * c)),
            s);
    }
  }
  for (int r = 0; r < R; ++r) {
    // Codes stand for code - 32: subtract 32 * sum_j scale_j * sums_j.
    const __m256i m = _mm256_madd_epi16(
        scales16,
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x[r]->bsums)));
    sum[r] = _mm512_sub_epi32(sum[r],
                              _mm512_zextsi256_si512(_mm256_slli_epi32(m, 5)));
  }
  step<R, false>(sum, nullptr, d, 0.0f, x, f);
}

/// Format 0 Q4_K, 1 Q5_K, 2 Q6_K (kquant::Format).
template <int R, int F>
void dotRow(const uint8_t *headers, const uint8_t *codes, int64_t blocks,
            const Q8K *x, int64_t ldx, float *res) {
  constexpr int headerBytes = F == 2 ? 18 : 16;
  constexpr int codeBytes = F == 0 ? 128 : F == 1 ? 160 : 192;
  __m256 f = _mm256_setzero_ps();
  const PairScales ps;
  const FifthBits fb;
  for (int64_t b = 0; b < blocks; ++b) {
    const Q8K *xs[R];
    for (int r = 0; r < R; ++r)
      xs[r] = x + r * ldx + b;
    const uint8_t *h = headers + b * headerBytes, *c = codes + b * codeBytes;
    if constexpr (F == 2)
      dotQ6K<R>(h, c, xs, f);
    else
      dotQ45K<R, F == 1>(h, c, xs, f, ps, fb);
  }
  alignas(32) float out[8];
  _mm256_store_ps(out, f);
  for (int r = 0; r < R; ++r)
    res[r] = out[r];
}

template <int F>
void dotRows(const uint8_t *headers, const uint8_t *codes, int64_t blocks,
             const Q8K *x, int64_t ldx, int64_t R, float *res) {
  withRows<8>(R, [&](auto rows) {
    dotRow<decltype(rows)::value, F>(headers, codes, blocks, x, ldx, res);
  });
}

} // namespace

KQuantDots kquantDotsAvx512() {
  return {{dotRows<0>, dotRows<1>, dotRows<2>}, {true, true, false}, 8};
}

} // namespace llmc::cpu
