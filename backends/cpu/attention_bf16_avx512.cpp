//===- attention_bf16_avx512.cpp - Softmax of a chunk to bf16 P -----------===//
//
// Built with -mavx512f -mavx512bw -mavx512vl -mavx512bf16. On the bf16 tile
// (attendTile's prompt rows over a bf16 cache) the products cost half what
// they do in f32, and the chunk's softmax became a third of the time: here
// it runs 16 lanes wide and writes P straight to bf16 for P·V.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"
#include "simd.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

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

} // namespace

float softmaxToBf16Avx512(const float *scores, int64_t lo, int64_t hi,
                          float scale, float &m, float &l, uint16_t *out,
                          int64_t outN) {
  constexpr int V = kSoftmaxChunk / 16;
  const float ninf = -std::numeric_limits<float>::infinity();
  const __m512 vscale = _mm512_set1_ps(scale);
  // The chunk's scaled scores stay in registers for both passes, each
  // vector with its lanes of keys [lo, hi).
  __m512 s[V];
  __mmask16 seen[V];
  __m512 vmax = _mm512_set1_ps(ninf);
  for (int v = 0; v < V; ++v) {
    const int64_t a = std::clamp<int64_t>(lo - 16 * v, 0, 16),
                  b = std::clamp<int64_t>(hi - 16 * v, 0, 16);
    seen[v] = __mmask16(((1u << b) - 1) & ~((1u << a) - 1));
    s[v] = _mm512_mul_ps(_mm512_loadu_ps(scores + 16 * v), vscale);
    vmax = _mm512_mask_max_ps(vmax, seen[v], vmax, s[v]);
  }
  // Halves folded by hand: GCC 12's _mm512_reduce_max_ps trips
  // -Wuninitialized in its own header.
  vmax = _mm512_max_ps(vmax, _mm512_shuffle_f32x4(vmax, vmax, 0x4e));
  const float mNew = std::max(m, simd::hmax(_mm512_castps512_ps256(vmax)));
  const float alpha = m == ninf ? 0.0f : m == mNew ? 1.0f : std::exp(m - mNew);
  const __m512 vm = _mm512_set1_ps(mNew);
  __m512 psum = _mm512_setzero_ps();
  for (int v = 0; v < V && 16 * v < outN; ++v) {
    const __m512 p = _mm512_maskz_mov_ps(
        seen[v], exp16(_mm512_maskz_sub_ps(seen[v], s[v], vm)));
    psum = _mm512_add_ps(psum, p);
    const int64_t left = std::min<int64_t>(16, outN - 16 * v);
    const __m256bh bh = _mm512_cvtneps_pbh(p);
    _mm256_mask_storeu_epi16(out + 16 * v, __mmask16((1u << left) - 1),
                             reinterpret_cast<const __m256i &>(bh));
  }
  l = l * alpha + _mm512_reduce_add_ps(psum);
  m = mNew;
  return alpha;
}

} // namespace llmc::cpu
