//===- mxfp4_decode.cpp - MXFP4 blocks decoded to f32 ---------------------===//
//
// The exact path (an f32 plan, op i2 = 0): gemmMxfp4 decodes each panel's
// blocks here (a table lookup per 16 codes, one scale per 32) and runs the
// F32Tile on them; the plan's 4.25 bits per weight are all that is read.
// With i2 = 1 the integer-dot kernels take MXFP4 instead (gemv_int.h).
//
//===----------------------------------------------------------------------===//
#include "cpu.h"
#include "gemv_int.h"

#include <immintrin.h>

namespace llmc::cpu {

void decodeMxfp4Block(const uint8_t *codes, uint8_t e8m0, float *out) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(codes));
  const __m128i low = _mm_set1_epi8(0x0f);
  const __m128i table =
      _mm_loadu_si128(reinterpret_cast<const __m128i *>(kMxfp4Doubled));
  // Byte j holds columns 2j (low nibble) and 2j + 1: interleave back.
  const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(v, low));
  const __m128i hi =
      _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(v, 4), low));
  const __m128i first = _mm_unpacklo_epi8(lo, hi),
                second = _mm_unpackhi_epi8(lo, hi);
  const __m256 s = _mm256_set1_ps(e8m0HalfTable()[e8m0]);
  const __m128i parts[4] = {first, _mm_srli_si128(first, 8), second,
                            _mm_srli_si128(second, 8)};
  for (int i = 0; i < 4; ++i)
    _mm256_storeu_ps(
        out + 8 * i,
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(parts[i])), s));
}

} // namespace llmc::cpu
