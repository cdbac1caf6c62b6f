//===- simd.h - AVX2 helpers shared by the kernels -------------*- C++ -*-===//
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace llmc::cpu::simd {

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float hmax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline __m256 loadBf16(const uint16_t *p) {
  __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

inline __m256 loadF16(const uint16_t *p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
}

/// Lanes [0, n) set, for loads and stores of a row's tail.
inline __m256i tailMask(int64_t n) {
  alignas(32) static const int32_t kBits[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(kBits + 8 - n));
}

/// exp(x) to about 1 ulp over the range softmax and silu need (Cephes'
/// expf: reduce by ln2, degree-6 polynomial, scale by 2^n). Below the
/// smallest normal result it is exactly 0: a denormal product costs a
/// microcode assist of ~100 cycles, and softmax feeds every masked key's
/// -inf through here.
inline __m256 exp(__m256 x) {
  const __m256 hi = _mm256_set1_ps(88.3762626647949f);
  const __m256 lo = _mm256_set1_ps(-87.0f);
  const __m256 normal = _mm256_cmp_ps(x, lo, _CMP_GE_OQ);
  x = _mm256_min_ps(_mm256_max_ps(x, lo), hi);
  __m256 fx = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f),
                              _mm256_set1_ps(0.5f));
  fx = _mm256_floor_ps(fx);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
  __m256 y = _mm256_set1_ps(1.9875691500E-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073E-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894E-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459E-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201E-1f));
  __m256 x2 = _mm256_mul_ps(x, x);
  y = _mm256_fmadd_ps(y, x2, _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  __m256i n = _mm256_cvttps_epi32(fx);
  n = _mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(y, _mm256_castsi256_ps(n)), normal);
}

/// x · sigmoid(x) (SiLU), as SWIGLU applies it.
inline __m256 silu(__m256 x) {
  const __m256 e = exp(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

/// tanh(x) to a few ulp (Cephes' tanhf): an odd polynomial below 0.625,
/// 1 - 2 / (exp(2|x|) + 1) above, where it rounds to +-1 past |x| ~ 9.
inline __m256 tanh(__m256 x) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 ax = _mm256_andnot_ps(sign, x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.70498872745E-3f);
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954E-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531E-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036E-1f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422E-1f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
  const __m256 e = exp(_mm256_add_ps(ax, ax));
  __m256 large =
      _mm256_sub_ps(_mm256_set1_ps(1.0f),
                    _mm256_div_ps(_mm256_set1_ps(2.0f),
                                  _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
  large = _mm256_or_ps(large, _mm256_and_ps(x, sign));
  return _mm256_blendv_ps(
      large, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
}

/// GELU with the tanh approximation (gelu_new, gelu_pytorch_tanh).
inline __m256 geluTanh(__m256 x) {
  const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
  const __m256 u =
      _mm256_mul_ps(_mm256_set1_ps(0.7978845608028654f),
                    _mm256_fmadd_ps(_mm256_set1_ps(0.044715f), x3, x));
  const __m256 half = _mm256_mul_ps(_mm256_set1_ps(0.5f), x);
  return _mm256_fmadd_ps(half, tanh(u), half);
}

/// cap * tanh(x / cap) (Gemma 2's soft-capping of scores and logits).
inline __m256 softcap(__m256 x, float cap) {
  return _mm256_mul_ps(_mm256_set1_ps(cap),
                       tanh(_mm256_mul_ps(x, _mm256_set1_ps(1.0f / cap))));
}

} // namespace llmc::cpu::simd
