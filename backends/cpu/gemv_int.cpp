//===- gemv_int.cpp - Quantizing activations; the kernels of each level --===//
#include "gemv_int.h"
#include "cpu.h"
#include "gemv.h"
#include "parallel.h"

#include "simd.h"

#include <array>
#include <cmath>

namespace llmc::cpu {
namespace {

float quantizeBlock(const float *x, int32_t *q) {
  // Once per block of every linear: vectors, and the rounding of cvtps (to
  // nearest even, as std::nearbyint).
  const __m256 absMask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 vmax = _mm256_setzero_ps();
  for (int64_t i = 0; i < kQuantBlock; i += 8)
    vmax = _mm256_max_ps(vmax, _mm256_and_ps(_mm256_loadu_ps(x + i), absMask));
  const float amax = simd::hmax(vmax);
  const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
  for (int64_t i = 0; i < kQuantBlock; i += 8)
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(q + i),
                        _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i),
                                                         _mm256_set1_ps(id))));
  return amax / 127.0f;
}

} // namespace

float quantizeBlockInt8(const float *x, int8_t *q, int32_t *sum) {
  alignas(32) int32_t v[kQuantBlock];
  const float d = quantizeBlock(x, v);
  __m256i n[4];
  for (int i = 0; i < 4; ++i)
    n[i] = _mm256_load_si256(reinterpret_cast<const __m256i *>(v + 8 * i));
  // |v| <= 127: the packs saturate nothing; they work per 128-bit lane, so
  // the 32 bytes go back in order after.
  const __m256i bytes = _mm256_permutevar8x32_epi32(
      _mm256_packs_epi16(_mm256_packs_epi32(n[0], n[1]),
                         _mm256_packs_epi32(n[2], n[3])),
      _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(q), bytes);
  const __m256i s = _mm256_add_epi32(_mm256_add_epi32(n[0], n[1]),
                                     _mm256_add_epi32(n[2], n[3]));
  const __m128i h =
      _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  const __m128i h2 = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
  *sum = _mm_cvtsi128_si32(_mm_add_epi32(h2, _mm_shuffle_epi32(h2, 0xb1)));
  return d;
}

void useLevel(Backend &b, Isa isa) {
  b.isa = isa;
  b.ints = isa >= Isa::Avx512    ? intKernelsAvx512()
           : isa == Isa::AvxVnni ? intKernelsAvxVnni()
                                 : intKernelsAvx2();
  b.f32Tile = isa >= Isa::Avx512 ? f32TileAvx512 : f32TileAvx2;
  b.bf16Tile = isa >= Isa::Avx512Bf16 ? bf16TileAvx512 : nullptr;
  b.kquant = isa >= Isa::Avx512 ? kquantDotsAvx512() : kquantDotsAvx2();
  static const RowKernels rowsAvx512 = rowKernelsAvx512();
  b.rows = isa >= Isa::Avx512 ? &rowsAvx512 : nullptr;
}

bool intTilesApply(int64_t K, int64_t group) {
  return K % kQuantBlock == 0 && group % kQuantBlock == 0 && K % group == 0;
}

const float *e8m0HalfTable() {
  static const auto table = [] {
    std::array<float, 256> t{};
    for (int e = 0; e < 256; ++e)
      t[size_t(e)] = std::ldexp(1.0f, e - 128);
    return t;
  }();
  return table.data();
}

} // namespace llmc::cpu
