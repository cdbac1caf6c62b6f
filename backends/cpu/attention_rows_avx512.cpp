//===- attention_rows_avx512.cpp - Decode attention rows, AVX-512 ---------===//
//
// Built with -mavx512f -mavx512bw -mavx512vl. A row of headDim values is NC
// vectors of 16 lanes (the last one masked), held in registers while every
// query row of the group uses it; NC is a template argument so they stay
// there. A key's Q·K leaves 16 partial sums per query row: 16 keys' worth
// are reduced together by a transpose-and-add tree into one vector of 16
// scores.
//
//===----------------------------------------------------------------------===//
#include "attention_rows.h"

#include <immintrin.h>

namespace llmc::cpu {
namespace {

/// Which lanes of each of a row's vectors hold values.
template <int NC> struct RowMasks {
  __mmask16 m[NC];
  explicit RowMasks(int64_t headDim) {
    for (int c = 0; c < NC; ++c) {
      const int64_t n = headDim - 16 * c;
      m[c] = __mmask16(n >= 16 ? 0xffff : (1u << n) - 1);
    }
  }
};

/// Values [16c, 16c + 16) of a row, widened to f32 (before its scale).
template <RowType T>
__attribute__((always_inline)) inline __m512 widen(const uint8_t *row, int c,
                                                   __mmask16 m) {
  if constexpr (T == RowType::F32)
    return _mm512_maskz_loadu_ps(m, row + 64 * c);
  if constexpr (T == RowType::Bf16)
    return _mm512_castsi512_ps(_mm512_slli_epi32(
        _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, row + 32 * c)), 16));
  if constexpr (T == RowType::F16)
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 32 * c));
  if constexpr (T == RowType::I8)
    return _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, row + 16 * c)));
  // e4m3 s.eeee.mmm placed as f16 s.0eeee.mmm0000000 is the same number
  // times 2^-8 (subnormals too): kUnit below puts the 2^8 back.
  const __m256i w = _mm256_cvtepu8_epi16(_mm_maskz_loadu_epi8(m, row + 16 * c));
  const __m256i h = _mm256_or_si256(
      _mm256_slli_epi16(_mm256_and_si256(w, _mm256_set1_epi16(0x7f)), 7),
      _mm256_slli_epi16(_mm256_and_si256(w, _mm256_set1_epi16(0x80)), 8));
  return _mm512_cvtph_ps(h);
}

template <RowType T> constexpr float kUnit = T == RowType::Fp8 ? 256.0f : 1.0f;

/// s[t] = the sum of v[t]'s 16 lanes, for 16 vectors.
inline __m512 reduce16(const __m512 *v) {
  // Pairs: each 128-bit lane holds two partials of each of two keys.
  __m512 w[8];
  for (int i = 0; i < 8; ++i)
    w[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                         _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  // Quads: each 128-bit lane holds one partial of each of four keys.
  __m512 u[4];
  for (int i = 0; i < 4; ++i)
    u[i] = _mm512_add_ps(_mm512_shuffle_ps(w[2 * i], w[2 * i + 1], 0x44),
                         _mm512_shuffle_ps(w[2 * i], w[2 * i + 1], 0xee));
  // Across the four 128-bit lanes.
  __m512 z[2];
  for (int i = 0; i < 2; ++i)
    z[i] = _mm512_add_ps(_mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], 0x88),
                         _mm512_shuffle_f32x4(u[2 * i], u[2 * i + 1], 0xdd));
  return _mm512_add_ps(_mm512_shuffle_f32x4(z[0], z[1], 0x88),
                       _mm512_shuffle_f32x4(z[0], z[1], 0xdd));
}

/// scores() for R query rows, their q vectors loaded once.
template <RowType T, int NC, int R>
void scoresFixed(const KeyRows &keys, const float *const *q, float *out) {
  const RowMasks<NC> mask(keys.headDim);
  __m512 qv[R][NC];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < NC; ++c)
      qv[r][c] = _mm512_maskz_loadu_ps(mask.m[c], q[r] + 16 * c);
  __m512 part[R][16];
  for (int64_t t0 = 0; t0 < kRowChunk; t0 += 16) {
    for (int64_t t = t0; t < t0 + 16; ++t) {
      if (t >= keys.n) {
        for (int r = 0; r < R; ++r)
          part[r][t - t0] = _mm512_setzero_ps();
        continue;
      }
      __m512 k[NC];
      for (int c = 0; c < NC; ++c)
        k[c] = widen<T>(keys.k[t], c, mask.m[c]);
      for (int r = 0; r < R; ++r) {
        __m512 a = _mm512_mul_ps(qv[r][0], k[0]);
        for (int c = 1; c < NC; ++c)
          a = _mm512_fmadd_ps(qv[r][c], k[c], a);
        part[r][t - t0] = a;
      }
    }
    const int64_t valid = keys.n - t0;
    const __mmask16 live = __mmask16(valid >= 16  ? 0xffff
                                     : valid <= 0 ? 0
                                                  : (1u << valid) - 1);
    const __m512 ks = _mm512_mul_ps(_mm512_maskz_loadu_ps(live, keys.ks + t0),
                                    _mm512_set1_ps(kUnit<T>));
    for (int r = 0; r < R; ++r)
      _mm512_storeu_ps(out + r * kRowChunk + t0,
                       _mm512_maskz_mul_ps(live, reduce16(part[r]), ks));
  }
}

// Query rows per pass over a chunk's keys: their q vectors stay in
// registers beside a key's row (16 of the 32 for q at most).
template <int NC>
constexpr int kScoreRows = NC >= 16      ? 1
                           : 16 / NC > 4 ? 4
                                         : 16 / NC;

template <RowType T, int NC>
void scores(const KeyRows &keys, const float *const *q, int64_t G, float *out) {
  constexpr int RP = kScoreRows<NC>;
  for (int64_t r0 = 0; r0 < G; r0 += RP) {
    const int64_t rows = G - r0 < RP ? G - r0 : RP;
    const float *const *qr = q + r0;
    float *o = out + r0 * kRowChunk;
    if constexpr (RP >= 4)
      if (rows == 4) {
        scoresFixed<T, NC, 4>(keys, qr, o);
        continue;
      }
    if constexpr (RP >= 3)
      if (rows == 3) {
        scoresFixed<T, NC, 3>(keys, qr, o);
        continue;
      }
    if constexpr (RP >= 2)
      if (rows == 2) {
        scoresFixed<T, NC, 2>(keys, qr, o);
        continue;
      }
    scoresFixed<T, NC, 1>(keys, qr, o);
  }
}

template <RowType T, int NC>
void accumulate(const KeyRows &keys, const float *p, const float *alpha,
                int64_t G, float *acc) {
  // Rows per pass: their accumulators and one value row fill the registers.
  constexpr int64_t RP = NC >= 16 ? 1 : 16 / NC;
  const RowMasks<NC> mask(keys.headDim);
  const int64_t D = keys.headDim;
  for (int64_t r0 = 0; r0 < G; r0 += RP) {
    const int64_t rows = G - r0 < RP ? G - r0 : RP;
    __m512 a[RP][NC];
    for (int64_t r = 0; r < RP; ++r)
      if (r < rows) {
        const __m512 al = _mm512_set1_ps(alpha[r0 + r]);
        for (int c = 0; c < NC; ++c)
          a[r][c] = _mm512_mul_ps(
              _mm512_maskz_loadu_ps(mask.m[c], acc + (r0 + r) * D + 16 * c),
              al);
      }
    for (int64_t t = 0; t < keys.n; ++t) {
      __m512 v[NC];
      for (int c = 0; c < NC; ++c)
        v[c] = widen<T>(keys.v[t], c, mask.m[c]);
      const float vs = keys.vs[t] * kUnit<T>;
      for (int64_t r = 0; r < RP; ++r)
        if (r < rows) {
          const __m512 w = _mm512_set1_ps(p[(r0 + r) * kRowChunk + t] * vs);
          for (int c = 0; c < NC; ++c)
            a[r][c] = _mm512_fmadd_ps(w, v[c], a[r][c]);
        }
    }
    for (int64_t r = 0; r < RP; ++r)
      if (r < rows)
        for (int c = 0; c < NC; ++c)
          _mm512_mask_storeu_ps(acc + (r0 + r) * D + 16 * c, mask.m[c],
                                a[r][c]);
  }
}

using ScoresFn = void (*)(const KeyRows &, const float *const *, int64_t,
                          float *);
using AccumulateFn = void (*)(const KeyRows &, const float *, const float *,
                              int64_t, float *);

// The kernels for headDim's vector count, found by walking NC up to 16.
template <RowType T, int NC> ScoresFn scoresFor(int64_t nc) {
  if constexpr (NC > kRowMaxHeadDim / 16)
    return nullptr;
  else
    return nc == NC ? &scores<T, NC> : scoresFor<T, NC + 1>(nc);
}
template <RowType T, int NC> AccumulateFn accumulateFor(int64_t nc) {
  if constexpr (NC > kRowMaxHeadDim / 16)
    return nullptr;
  else
    return nc == NC ? &accumulate<T, NC> : accumulateFor<T, NC + 1>(nc);
}

template <RowType T>
void scoresOf(const KeyRows &keys, const float *const *q, int64_t G,
              float *out) {
  scoresFor<T, 1>((keys.headDim + 15) / 16)(keys, q, G, out);
}
template <RowType T>
void accumulateOf(const KeyRows &keys, const float *p, const float *alpha,
                  int64_t G, float *acc) {
  accumulateFor<T, 1>((keys.headDim + 15) / 16)(keys, p, alpha, G, acc);
}

void scoresAny(const KeyRows &keys, const float *const *q, int64_t G,
               float *out) {
  switch (keys.type) {
  case RowType::F32:
    return scoresOf<RowType::F32>(keys, q, G, out);
  case RowType::Bf16:
    return scoresOf<RowType::Bf16>(keys, q, G, out);
  case RowType::F16:
    return scoresOf<RowType::F16>(keys, q, G, out);
  case RowType::I8:
    return scoresOf<RowType::I8>(keys, q, G, out);
  case RowType::Fp8:
    return scoresOf<RowType::Fp8>(keys, q, G, out);
  }
}

void accumulateAny(const KeyRows &keys, const float *p, const float *alpha,
                   int64_t G, float *acc) {
  switch (keys.type) {
  case RowType::F32:
    return accumulateOf<RowType::F32>(keys, p, alpha, G, acc);
  case RowType::Bf16:
    return accumulateOf<RowType::Bf16>(keys, p, alpha, G, acc);
  case RowType::F16:
    return accumulateOf<RowType::F16>(keys, p, alpha, G, acc);
  case RowType::I8:
    return accumulateOf<RowType::I8>(keys, p, alpha, G, acc);
  case RowType::Fp8:
    return accumulateOf<RowType::Fp8>(keys, p, alpha, G, acc);
  }
}

} // namespace

RowKernels rowKernelsAvx512() { return {scoresAny, accumulateAny}; }

} // namespace llmc::cpu
