//===- attention_bf16_avx512.cpp - Softmax of a chunk to bf16 P -----------===//
//
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512bf16. On the bf16 tile
// (attendTile's prompt rows over a bf16 cache) the products cost half what
// they do in f32, and the chunk's softmax became a third of the time: here
// it runs 16 lanes wide and writes P straight to bf16 for P·V.
//
//===----------------------------------------------------------------------===//
#include "attention_rows.h"
#include "simd.h"

#include <immintrin.h>

// Nothing here calls the standard library, and of simd.h only its
// internal-linkage pieces: no inline function compiled for AVX-512 can
// reach AVX2 code through the linker (isa.h).
namespace llmc::cpu {
namespace {

/// simd::exp, 16 lanes (Cephes' expf; 0 below the smallest normal result).
inline __m512 exp16(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.0f);
  const __mmask16 normal = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ);
  x = _mm512_min_ps(_mm512_max_ps(x, lo), _mm512_set1_ps(88.3762626647949f));
  const __m512 fx = _mm512_roundscale_ps(
      _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f),
                      _mm512_set1_ps(0.5f)),
      _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  const __m512i n = _mm512_slli_epi32(
      _mm512_add_epi32(_mm512_cvttps_epi32(fx), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mul_ps(normal, simd::expReduced(x, fx),
                             _mm512_castsi512_ps(n));
}

/// One row's chunk of V * 16 scores (keys [lo, hi) seen) to probabilities
/// against its running max m and sum l: store(v, p) takes vector v's 16
/// (0 outside [lo, hi)), for v < vectors; returns the factor the row's
/// earlier output is rescaled by. The scaled scores stay in registers for
/// both passes.
template <int V, typename Store>
float softmaxChunk16(const float *scores, int64_t lo, int64_t hi, float scale,
                     float &m, float &l, int vectors, const Store &store) {
  const float ninf = -__builtin_inff();
  const __m512 vscale = _mm512_set1_ps(scale);
  auto lanes = [](int64_t x) { return x < 0 ? 0 : x > 16 ? 16 : x; };
  __m512 s[V];
  __mmask16 seen[V];
  __m512 vmax = _mm512_set1_ps(ninf);
  for (int v = 0; v < V; ++v) {
    const int64_t a = lanes(lo - 16 * v), b = lanes(hi - 16 * v);
    seen[v] = __mmask16(((1u << b) - 1) & ~((1u << a) - 1));
    s[v] = _mm512_mul_ps(_mm512_loadu_ps(scores + 16 * v), vscale);
    vmax = _mm512_mask_max_ps(vmax, seen[v], vmax, s[v]);
  }
  const float top = _mm512_reduce_max_ps(vmax), mNew = m > top ? m : top;
  const float alpha = m == ninf ? 0.0f
                      : m == mNew
                          ? 1.0f
                          : _mm512_cvtss_f32(exp16(_mm512_set1_ps(m - mNew)));
  const __m512 vm = _mm512_set1_ps(mNew);
  __m512 psum = _mm512_setzero_ps();
  for (int v = 0; v < V && v < vectors; ++v) {
    const __m512 p = _mm512_maskz_mov_ps(
        seen[v], exp16(_mm512_maskz_sub_ps(seen[v], s[v], vm)));
    psum = _mm512_add_ps(psum, p);
    store(v, p);
  }
  l = l * alpha + _mm512_reduce_add_ps(psum);
  m = mNew;
  return alpha;
}

} // namespace

float softmaxToBf16Avx512(const float *scores, int64_t lo, int64_t hi,
                          float scale, float &m, float &l, uint16_t *out,
                          int64_t outN) {
  return softmaxChunk16<kSoftmaxChunk / 16>(
      scores, lo, hi, scale, m, l, int((outN + 15) / 16), [&](int v, __m512 p) {
        const int64_t left = outN - 16 * v < 16 ? outN - 16 * v : 16;
        const __m256bh bh = _mm512_cvtneps_pbh(p);
        _mm256_mask_storeu_epi16(out + 16 * v, __mmask16((1u << left) - 1),
                                 reinterpret_cast<const __m256i &>(bh));
      });
}

} // namespace llmc::cpu
