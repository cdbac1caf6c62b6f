//===- gemv_kquant.cpp - Q4_K / Q5_K / Q6_K weights as ggml stores them ---===//
//
// The plan's own super-blocks (kquant.h) are read once per step, never
// widened to a copy. With op i2 = 1 the activations are rounded per block
// of 256 to int8 with one f32 scale and their sums per 16 (llama.cpp's
// q8_K), and each sub-block's dot product runs on vpmaddubsw (codes
// unsigned, x signed) scaled by its integer scale with vpmaddwd; Q4_K /
// Q5_K's mins meet x through the sums per 16. Each super-block ends as two
// exact integers and two f32 steps, KQuantGemm's arithmetic (gemv_int.h),
// so the GEMM tiles give a row the same bits. With i2 = 0 (an f32 plan) a
// row is decoded to f32 and dotted exactly.
//
//===----------------------------------------------------------------------===//
#include "gemv_kquant.h"

#include "gemv_quant.h"

#include <vector>

namespace llmc::cpu {

void quantizeQ8K(const float *x, int64_t K, Q8K *out, bool paired) {
  for (int64_t b = 0; b < K / kquant::kBlock; ++b) {
    const float *v = x + b * kquant::kBlock;
    Q8K &q = out[b];
    __m256 amax = _mm256_setzero_ps();
    const __m256 abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int i = 0; i < kquant::kBlock; i += 8)
      amax = _mm256_max_ps(amax, _mm256_and_ps(_mm256_loadu_ps(v + i), abs));
    float m = simd::hmax(amax);
    // As ggml's quantize_row_q8_K (its x86 build too): scale 127 / max,
    // d its reciprocal, so every product is llama.cpp's (its sign trick,
    // -127 / max, flips q and d together).
    const float scale = m > 0.0f ? 127.0f / m : 0.0f;
    q.d = m > 0.0f ? 1.0f / scale : 0.0f;
    const __m256 inv = _mm256_set1_ps(scale);
    for (int i = 0; i < kquant::kBlock; i += 32) {
      __m256i n[4];
      for (int j = 0; j < 4; ++j) // round to nearest even, |n| <= 127
        n[j] = _mm256_cvtps_epi32(
            _mm256_mul_ps(_mm256_loadu_ps(v + i + 8 * j), inv));
      // packs works per 128-bit lane: put the 32 bytes back in order.
      __m256i w = _mm256_packs_epi16(_mm256_packs_epi32(n[0], n[1]),
                                     _mm256_packs_epi32(n[2], n[3]));
      w = _mm256_permutevar8x32_epi32(
          w, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
      _mm256_storeu_si256(
          reinterpret_cast<__m256i *>(q.q + q8kIndex(int(i), paired)), w);
    }
    for (int j = 0; j < 16; ++j) {
      int s = 0;
      for (int i = 0; i < 16; ++i)
        s += q.q[q8kIndex(16 * j + i, paired)];
      q.bsums[j] = static_cast<int16_t>(s);
    }
  }
}

namespace {

inline __m256i load(const void *p) {
  return _mm256_loadu_si256(static_cast<const __m256i *>(p));
}

/// sum of codes * x over 32 values (codes unsigned, < 64) times scale s,
/// as 8 int32.
inline __m256i scaled(__m256i codes, __m256i x, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(codes, x), s);
}

/// Lane r (r < R; the others 0): the sum of v[r]'s 8 int32.
template <int R> inline __m128i rowSums(const __m256i *v) {
  __m256i h[4];
  for (int r = 0; r < 4; ++r)
    h[r] = r < R ? v[r] : _mm256_setzero_si256();
  const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(h[0], h[1]),
                                      _mm256_hadd_epi32(h[2], h[3]));
  return _mm_add_epi32(_mm256_castsi256_si128(s),
                       _mm256_extracti128_si256(s, 1));
}

/// Lane r (r < R): the sum of v[r]'s 4 int32.
template <int R> inline __m128i rowSums(const __m128i *v) {
  __m128i h[4];
  for (int r = 0; r < 4; ++r)
    h[r] = r < R ? v[r] : _mm_setzero_si128();
  return _mm_hadd_epi32(_mm_hadd_epi32(h[0], h[1]), _mm_hadd_epi32(h[2], h[3]));
}

/// Lane r: row r's q8_K scale for this super-block.
template <int R> inline __m128 rowScales(const Q8K *const *x) {
  alignas(16) float d[4] = {};
  for (int r = 0; r < R; ++r)
    d[r] = x[r]->d;
  return _mm_load_ps(d);
}

/// f (lane r: row r) gains float(isum) d dx, then (Mins) loses float(msum)
/// dmin dx: KQuantGemm's two steps. One row (a single stream's decode) sums
/// its two integers in one short tree.
template <int R, bool Mins>
inline void step(const __m256i *isum, const __m128i *msum, float d, float dmin,
                 const Q8K *const *x, __m128 &f) {
  if constexpr (R == 1) {
    const __m128i q = _mm_add_epi32(_mm256_castsi256_si128(isum[0]),
                                    _mm256_extracti128_si256(isum[0], 1));
    const __m128i p = _mm_hadd_epi32(q, Mins ? msum[0] : _mm_setzero_si128());
    const __m128 v = _mm_cvtepi32_ps(_mm_hadd_epi32(p, p));
    const __m128 dx = _mm_set_ss(x[0]->d);
    f = _mm_fmadd_ss(v, _mm_mul_ss(_mm_set_ss(d), dx), f);
    if (Mins)
      f = _mm_fnmadd_ss(_mm_movehdup_ps(v), _mm_mul_ss(_mm_set_ss(dmin), dx),
                        f);
    return;
  }
  const __m128 dx = rowScales<R>(x);
  f = _mm_fmadd_ps(_mm_cvtepi32_ps(rowSums<R>(isum)),
                   _mm_mul_ps(_mm_set1_ps(d), dx), f);
  if constexpr (Mins)
    f = _mm_fnmadd_ps(_mm_cvtepi32_ps(rowSums<R>(msum)),
                      _mm_mul_ps(_mm_set1_ps(dmin), dx), f);
}

/// One super-block of Q4_K / Q5_K against R rows of q8_K, in KQuantGemm's
/// arithmetic (gemv_int.h): f (lane r: row r) gains float(isum) d dx, then
/// loses float(msum) dmin dx.
template <int R, bool Five>
inline void dotQ45K(const uint8_t *header, const uint8_t *codes,
                    const Q8K *const *x, __m128 &f) {
  const float d = kquant::halfAt(header), dmin = kquant::halfAt(header + 2);
  alignas(16) uint8_t sm[16];
  kquant::scalesAndMins(header + 4, sm);
  // Each min meets the sum of its 32 x: pairs of the sums per 16.
  const __m128i mn = _mm_cvtepu8_epi16(
      _mm_loadl_epi64(reinterpret_cast<const __m128i *>(sm + 8)));
  const uint8_t *qs = codes + (Five ? 32 : 0);
  const __m256i low = _mm256_set1_epi8(0x0f);
  const __m256i hbits = Five ? load(codes) : _mm256_setzero_si256();
  __m256i sum[R];
  for (int r = 0; r < R; ++r)
    sum[r] = _mm256_setzero_si256();
  for (int c = 0; c < 4; ++c) {
    const __m256i q = load(qs + 32 * c);
    __m256i lo = _mm256_and_si256(q, low),
            hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low);
    if (Five) {
      // Bit 2c of qh[l] is value 64c + l's fifth bit, bit 2c + 1 that of
      // value 64c + 32 + l (a 16-bit shift: only each byte's bit 0 is kept).
      const __m256i one = _mm256_set1_epi8(1);
      lo = _mm256_or_si256(
          lo, _mm256_slli_epi16(
                  _mm256_and_si256(_mm256_srli_epi16(hbits, 2 * c), one), 4));
      hi = _mm256_or_si256(
          hi,
          _mm256_slli_epi16(
              _mm256_and_si256(_mm256_srli_epi16(hbits, 2 * c + 1), one), 4));
    }
    const __m256i s0 = _mm256_set1_epi16(sm[2 * c]),
                  s1 = _mm256_set1_epi16(sm[2 * c + 1]);
    for (int r = 0; r < R; ++r)
      sum[r] = _mm256_add_epi32(
          sum[r],
          _mm256_add_epi32(scaled(lo, load(x[r]->q + 64 * c), s0),
                           scaled(hi, load(x[r]->q + 64 * c + 32), s1)));
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

/// One super-block of Q6_K: codes 0..63 stand for code - 32, so the dot is
/// sum(code * x) - 32 * sum(x), per sub-block of 16 with its int8 scale,
/// all in int32 before f gains float(isum) d dx.
template <int R>
inline void dotQ6K(const uint8_t *header, const uint8_t *codes,
                   const Q8K *const *x, __m128 &f) {
  const int8_t *sc = reinterpret_cast<const int8_t *>(header);
  const float d = kquant::halfAt(header + 16);
  const __m256i low = _mm256_set1_epi8(0x0f), two = _mm256_set1_epi8(3);
  __m256i sum[R];
  for (int r = 0; r < R; ++r)
    sum[r] = _mm256_setzero_si256();
  for (int h = 0; h < 2; ++h) {
    const uint8_t *ql = codes + 64 * h, *qh = codes + 128 + 32 * h;
    const __m256i a = load(ql), b = load(ql + 32), hb = load(qh);
    auto high = [&](int shift) {
      return _mm256_slli_epi16(
          _mm256_and_si256(_mm256_srli_epi16(hb, shift), two), 4);
    };
    const __m256i v[4] = {
        _mm256_or_si256(_mm256_and_si256(a, low), high(0)),
        _mm256_or_si256(_mm256_and_si256(b, low), high(2)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(a, 4), low),
                        high(4)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(b, 4), low),
                        high(6))};
    for (int c = 0; c < 4; ++c) {
      // Values 32c..32c+31 of this half: sub-blocks 8h + 2c and + 1, one
      // per 128-bit lane of the pair sums.
      const int j = 8 * h + 2 * c;
      const __m256i s =
          _mm256_setr_m128i(_mm_set1_epi16(sc[j]), _mm_set1_epi16(sc[j + 1]));
      for (int r = 0; r < R; ++r)
        sum[r] = _mm256_add_epi32(
            sum[r], scaled(v[c], load(x[r]->q + 128 * h + 32 * c), s));
    }
  }
  const __m256i scales = _mm256_cvtepi8_epi16(
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(sc)));
  for (int r = 0; r < R; ++r) {
    // 32 * sum_j scale_j * (sum of sub-block j's x), as 8 int32.
    const __m256i m = _mm256_madd_epi16(
        scales,
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x[r]->bsums)));
    sum[r] = _mm256_sub_epi32(sum[r], _mm256_slli_epi32(m, 5));
  }
  step<R, false>(sum, nullptr, d, 0.0f, x, f);
}

template <int R, kquant::Format F>
void dotRowKQuant(const uint8_t *header, const uint8_t *codes, int64_t blocks,
                  const Q8K *x, int64_t ldx, float *res) {
  constexpr kquant::Layout l = kquant::layout(F);
  __m128 f = _mm_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const Q8K *xs[R];
    for (int r = 0; r < R; ++r)
      xs[r] = x + r * ldx + b;
    const uint8_t *h = header + b * l.headerBytes, *c = codes + b * l.codeBytes;
    if constexpr (F == kquant::Format::Q6_K)
      dotQ6K<R>(h, c, xs, f);
    else
      dotQ45K<R, F == kquant::Format::Q5_K>(h, c, xs, f);
  }
  alignas(16) float out[4];
  _mm_store_ps(out, f);
  for (int r = 0; r < R; ++r)
    res[r] = out[r];
}

template <kquant::Format F>
void dotRowsKQuant(const uint8_t *header, const uint8_t *codes, int64_t blocks,
                   const Q8K *x, int64_t ldx, int64_t R, float *res) {
  withRows<4>(R, [&](auto rows) {
    dotRowKQuant<decltype(rows)::value, F>(header, codes, blocks, x, ldx, res);
  });
}

} // namespace

KQuantDots kquantDotsAvx2() {
  return {{dotRowsKQuant<kquant::Format::Q4_K>,
           dotRowsKQuant<kquant::Format::Q5_K>,
           dotRowsKQuant<kquant::Format::Q6_K>},
          {false, false, false},
          4};
}

void gemvKQuant(const GemvArgs &a, const KQuantWeight &w) {
  const kquant::Layout l = kquant::layout(w.format);
  const int64_t blocks = a.K / kquant::kBlock;
  const int64_t codeRow = blocks * l.codeBytes,
                headRow = blocks * l.headerBytes;
  if (!w.int8Activations)
    return gemvDequantized(a, [&](int64_t n, float *row) {
      for (int64_t b = 0; b < blocks; ++b)
        kquant::decode(w.format, w.headers + n * headRow + b * l.headerBytes,
                       w.codes + n * codeRow + b * l.codeBytes,
                       row + b * kquant::kBlock);
    });
  if (a.rows > kKQuantGemmRows && w.ints)
    return gemmKQuant(*w.ints, a, w);
  thread_local std::vector<Q8K> xq;
  xq.resize(size_t(a.rows * blocks));
  // A thread_local named inside the lambdas would be each worker's own.
  Q8K *x = xq.data();
  parallelFor(a.rows, a.rows * a.K >= (1 << 16), [&](int64_t r) {
    quantizeQ8K(a.x + r * a.K, a.K, x + r * blocks, w.pairedX);
  });
  // Panels of output columns: a panel's weight rows stay in L2 while
  // every group of rows passes them.
  const int64_t panels = (a.N + kGemvPanel - 1) / kGemvPanel;
  const WeightRows prefetch{w.codes, codeRow};
  parallelFor(panels, a.N * a.K >= (1 << 16), [&](int64_t p) {
    const int64_t n0 = p * kGemvPanel, n1 = std::min(a.N, n0 + kGemvPanel);
    float res[8];
    for (int64_t r0 = 0; r0 < a.rows; r0 += w.maxRows) {
      const int64_t R = std::min(w.maxRows, a.rows - r0);
      for (int64_t n = n0; n < n1; ++n) {
        if (r0 == 0)
          prefetch.prefetch(n, a.N);
        w.dot(w.headers + n * headRow, w.codes + n * codeRow, blocks,
              x + r0 * blocks, blocks, R, res);
        const float bias = a.bias ? a.bias[n] : 0.0f;
        for (int64_t r = 0; r < R; ++r)
          a.out[(r0 + r) * a.N + n] = res[r] + bias;
      }
    }
  });
}

} // namespace llmc::cpu
