//===- gemv_int.cpp - Quantizing activations and running the panels -------===//
#include "gemv_int.h"
#include "cpu.h"
#include "gemv.h"
#include "parallel.h"

#include "simd.h"

#include <array>
#include <cmath>

namespace llmc::cpu {
namespace {

/// Runs `panel(n0, n1, r0, R)` over panels of output columns in parallel and
/// groups of up to four rows.
template <typename Panel>
void forPanels(int64_t rows, int64_t K, int64_t N, Panel panel) {
  int64_t panels = (N + kGemvPanel - 1) / kGemvPanel;
  parallelFor(panels, N * K >= (1 << 16), [&](int64_t p) {
    int64_t n0 = p * kGemvPanel, n1 = std::min(N, n0 + kGemvPanel);
    for (int64_t r0 = 0; r0 < rows; r0 += kGemvRowGroup)
      panel(n0, n1, r0, std::min(kGemvRowGroup, rows - r0));
  });
}

struct Scratch {
  std::vector<int8_t> q;
  std::vector<float> s;
  std::vector<int32_t> n;
};

Scratch &scratch() {
  thread_local Scratch s;
  return s;
}

/// How quantizeRows lays out a row's blocks (IntGemv).
enum class XOrder { Natural, Nibble, PairedNibble };

/// x rows to int8 blocks of 32 with a scale each, laid out as IntGemv says.
/// In the nibble orders each block's (or pair's) even columns go first and
/// the i4 offset's start values go to s.n.
void quantizeRows(const GemvArgs &a, XOrder order, Scratch &s) {
  const int64_t L = a.K / 4;
  const bool nibbles = order != XOrder::Natural;
  s.q.resize(size_t(a.rows * a.K));
  s.s.resize(size_t(a.rows * L));
  s.n.resize(nibbles ? size_t(a.rows * L) : 0);
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t k0 = 0; k0 < a.K; k0 += kQuantBlock) {
      alignas(32) int32_t v[kQuantBlock];
      const float d = quantizeBlock(a.x + r * a.K + k0, v);
      // A pair starts at an even block with a block after it.
      const int64_t block = k0 / kQuantBlock;
      const bool paired = order == XOrder::PairedNibble &&
                          k0 + (block % 2 ? 0 : kQuantBlock) < a.K &&
                          (block % 2 == 1 || k0 + 2 * kQuantBlock <= a.K);
      int8_t *base = s.q.data() + r * a.K +
                     (paired ? (k0 - (block % 2) * kQuantBlock) : k0);
      for (int64_t i = 0; i < kQuantBlock; ++i) {
        // Paired: [even of b, even of b+1, odd of b, odd of b+1], 16 each.
        const int64_t at = !nibbles ? i
                           : paired ? (i % 2) * 32 + (block % 2) * 16 + i / 2
                                    : (i % 2) * 16 + i / 2;
        base[at] = int8_t(v[i]);
      }
      for (int64_t l = 0; l < kQuantBlock / 4; ++l) {
        // The int32 lane that holds these columns' products: 4 per 16.
        const int64_t local =
            paired ? (l / 4) * 8 + (block % 2) * 4 + l % 4 : l;
        const size_t lane =
            size_t(r * L + (base - (s.q.data() + r * a.K)) / 4 + local);
        s.s[lane] = d;
      }
    }
  if (!nibbles)
    return;
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t lane = 0; lane < L; ++lane) {
      const int8_t *q = s.q.data() + r * a.K + 4 * lane;
      s.n[size_t(r * L + lane)] = -8 * (q[0] + q[1] + q[2] + q[3]);
    }
}

} // namespace

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
  b.kquant = isa >= Isa::Avx512 ? kquantDotsAvx512() : kquantDotsAvx2();
  static const RowKernels rowsAvx512 = rowKernelsAvx512();
  b.rows = isa >= Isa::Avx512 ? &rowsAvx512 : nullptr;
}

bool intGemvApplies(int64_t K, int64_t group) {
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

void gemvInt(const IntKernels &k, IntFormat f, const GemvArgs &a, const void *w,
             const float *scales, int64_t group, const uint8_t *e8m0) {
  Scratch &s = scratch();
  quantizeRows(a,
               f == kI8           ? XOrder::Natural
               : k.q4PairedBlocks ? XOrder::PairedNibble
                                  : XOrder::Nibble,
               s);
  IntGemv g{s.q.data(), s.s.data(), f == kI4 ? s.n.data() : nullptr,
            a.rows,     a.K,        a.N,
            w,          scales,     group,
            a.bias,     a.out,      f == kMx ? e8m0 : nullptr};
  IntPanel panel = f == kI4 ? k.q4 : f == kMx ? k.mx : k.q8;
  forPanels(a.rows, a.K, a.N,
            [&](int64_t n0, int64_t n1, int64_t r0, int64_t R) {
              panel(g, n0, n1, r0, R);
            });
}

} // namespace llmc::cpu
