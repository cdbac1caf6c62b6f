//===- gemm_int.cpp - Many-row integer linears: quantize, pack, tile ------===//
//
// Prefill on i8 / i4 weights. The activations are quantized as for the
// GEMV (blocks of 32, one scale each), so prefill and decode round alike.
// Each thread repacks one panel of kTileN weight columns at a time into its
// own buffer (32 * K bytes: it stays in L2 while every row runs against it)
// and hands it to the level's tile; the repack costs one pass over the
// weights per call, small next to rows * K * kTileN multiply-adds.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"
#include "gemv_int.h"

#include <immintrin.h>

#include <algorithm>

namespace llmc::cpu {
namespace {

struct Activations {
  std::vector<int8_t> q;
  std::vector<float> s;
  std::vector<int32_t> c;
};

struct Panel {
  std::vector<uint8_t> w;
  std::vector<float> s;
};

void quantize(const GemvArgs &a, int32_t offset, Activations &x) {
  const int64_t blocks = a.K / kQuantBlock;
  x.q.resize(size_t(a.rows * a.K));
  x.s.resize(size_t(a.rows * blocks));
  x.c.resize(size_t(a.rows * blocks));
#pragma omp parallel for schedule(static) if (a.rows * a.K >= (1 << 16))
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      alignas(32) int32_t v[kQuantBlock];
      const size_t at = size_t(r * blocks + b);
      x.s[at] = quantizeBlock(a.x + r * a.K + b * kQuantBlock, v);
      int32_t sum = 0;
      for (int64_t i = 0; i < kQuantBlock; ++i) {
        x.q[size_t(r * a.K + b * kQuantBlock + i)] = int8_t(v[i]);
        sum += v[i];
      }
      x.c[at] = -offset * sum;
    }
}

/// Eight rows of eight int32 each, transposed in place.
void transpose8x8(__m256i r[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
    u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
    u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
    u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x31);
  }
}

/// Block b of weight column n as 32 bytes in column order, XOR flip (which
/// adds the offset: 0x80 to an i8, 0x08 to a 4-bit two's complement q).
__m256i loadBlock(bool q4, const void *w, int64_t K, int64_t n, int64_t b,
                  __m256i flip) {
  if (!q4)
    return _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
            static_cast<const int8_t *>(w) + n * K + b * kQuantBlock)),
        flip);
  const __m128i low = _mm_set1_epi8(0x0f);
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(
      static_cast<const uint8_t *>(w) + n * (K / 2) + b * 16));
  const __m128i lo = _mm_and_si128(v, low);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), low);
  return _mm256_xor_si256(
      _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi), _mm_unpacklo_epi8(lo, hi)),
      flip);
}

/// Columns [n0, n0 + kTileN) of w in IntGemm's layout; columns past N get
/// zero weights and zero scales.
void pack(bool q4, int32_t offset, const void *w, const float *scales,
          int64_t K, int64_t N, int64_t group, int64_t n0, Panel &p) {
  const int64_t blocks = K / kQuantBlock, groups = K / group;
  p.w.resize(size_t(K * kTileN));
  p.s.resize(size_t(groups * kTileN));
  const __m256i flip = _mm256_set1_epi8(char(q4 ? 8 : offset));
  for (int64_t c0 = 0; c0 < kTileN; c0 += 8)
    for (int64_t b = 0; b < blocks; ++b) {
      __m256i r[8];
      for (int64_t i = 0; i < 8; ++i) {
        const int64_t n = n0 + c0 + i;
        r[i] = n < N ? loadBlock(q4, w, K, n, b, flip) : flip;
      }
      transpose8x8(r);
      for (int64_t q = 0; q < kQuantBlock / 4; ++q)
        _mm256_storeu_si256(
            reinterpret_cast<__m256i *>(
                p.w.data() + ((b * kQuantBlock / 4 + q) * kTileN + c0) * 4),
            r[q]);
    }
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < kTileN; ++c)
      p.s[size_t(g * kTileN + c)] =
          n0 + c < N ? scales[(n0 + c) * groups + g] : 0.0f;
}

} // namespace

void gemmInt(const IntKernels &k, bool q4, const GemvArgs &a, const void *w,
             const float *scales, int64_t group) {
  const int32_t offset = q4 ? 8 : k.q8Offset;
  static thread_local Activations scratch;
  // Named inside the parallel loop, `scratch` would be each worker's own.
  Activations &x = scratch;
  quantize(a, offset, x);
  const IntTile tile = q4 ? k.t4 : k.t8;
  const int64_t panels = (a.N + kTileN - 1) / kTileN;
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < panels; ++p) {
    static thread_local Panel panel;
    const int64_t n0 = p * kTileN;
    pack(q4, offset, w, scales, a.K, a.N, group, n0, panel);
    tile(IntGemm{x.q.data(), x.s.data(), x.c.data(), a.rows, a.K,
                 panel.w.data(), panel.s.data(), a.K / group,
                 a.bias ? a.bias + n0 : nullptr, a.out + n0, a.N,
                 std::min(kTileN, a.N - n0)});
  }
}

} // namespace llmc::cpu
