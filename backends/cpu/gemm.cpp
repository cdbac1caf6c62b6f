//===- gemm.cpp - Many-row linears on our tiles: round, repack, run -------===//
//
// i8 / i4 / K-quant weights on the integer tiles: activations quantized as
// for the GEMV (int8 blocks of 32 with a scale each), so prefill and decode
// round alike. f32 / bf16 / f16 / MXFP4 weights on the F32Tile at every row
// count, widened to f32 against f32 activations. For many rows each thread
// repacks one panel of kTileN weight columns by one block of K at a time
// into its own buffer (32 KB: it stays in L1/L2 while every row runs
// against it) and hands it to the level's tile; the repack costs one pass
// over the weights per call, small next to rows * K * kTileN multiply-adds.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"
#include "gemv_int.h"
#include "gemv_kquant.h"
#include "parallel.h"
#include "simd.h"

#include "llmc/support/half.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace llmc::cpu {
namespace {

struct Activations {
  std::vector<int8_t> q;
  std::vector<float> s;
  std::vector<int32_t> c;
};

// Columns of K per block: a panel's block is 32 KB (L1) and each row's
// block of x 1 KB (512 rows stay in L2 while every panel runs over them).
constexpr int64_t kF32KBlock = 256;

struct Panel {
  std::vector<uint8_t> w;
  std::vector<float> s;
};

/// fn(n0, k0, kc, panel) for every panel of kTileN columns and block
/// [k0, k0 + kc) of K: blocks in order, each block's panels in parallel.
/// Each thread gets the same panels in every block, so its part of the
/// output stays in its cache; the block of x stays in L2 across panels.
/// `panel` is the calling thread's buffer.
template <typename Fn>
void forTileBlocks(int64_t N, int64_t K, int64_t kBlock, Fn fn) {
  const int64_t panels = (N + kTileN - 1) / kTileN;
  static thread_local Panel mine;
  if (!openRegion(true)) { // already on one thread of a parallel caller
    for (int64_t k0 = 0; k0 < K; k0 += kBlock)
      for (int64_t p = 0; p < panels; ++p)
        fn(p * kTileN, k0, std::min(kBlock, K - k0), mine);
    return;
  }
#pragma omp parallel
  {
    static thread_local Panel panel;
    for (int64_t k0 = 0; k0 < K; k0 += kBlock) {
#pragma omp for schedule(static)
      for (int64_t p = 0; p < panels; ++p)
        fn(p * kTileN, k0, std::min(kBlock, K - k0), panel);
    }
  }
}

void quantize(const GemvArgs &a, int32_t offset, Activations &x) {
  const int64_t blocks = a.K / kQuantBlock;
  x.q.resize(size_t(a.rows * a.K));
  x.s.resize(size_t(a.rows * blocks));
  x.c.resize(size_t(a.rows * blocks));
  // A batched decode step's rows are worth both threads too: the other
  // one would wait at the next barrier.
  parallelFor(a.rows, a.rows > 1 && a.rows * a.K >= (1 << 12), [&](int64_t r) {
    for (int64_t b = 0; b < blocks; ++b) {
      const size_t at = size_t(r * blocks + b);
      int32_t sum;
      x.s[at] = quantizeBlockInt8(a.x + r * a.K + b * kQuantBlock,
                                  x.q.data() + r * a.K + b * kQuantBlock, &sum);
      x.c[at] = -offset * sum;
    }
  });
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
/// adds the offset: 0x80 to an i8, 0x08 to a 4-bit two's complement q; 0
/// leaves an i8 signed and nibbles, MXFP4's codes too, as they are).
__m256i loadBlock(IntFormat f, const void *w, int64_t K, int64_t n, int64_t b,
                  __m256i flip) {
  if (f == kKq) { // codes 0..63 as they are (flip is 0: offset 0)
    const auto &kw = *static_cast<const KQuantWeight *>(w);
    const kquant::Layout l = kquant::layout(kw.format);
    const uint8_t *codes =
        kw.codes + (n * (K / kquant::kBlock) + b / 8) * l.codeBytes;
    const int j = int(b % 8); // sub-block: nibbles of qs[32 * (j / 2)]
    if (kw.format == kquant::Format::Q6_K) {
      // Half j / 4 of the super-block: ql 64 bytes, qh 32; values 32c..
      // take ql[32 (c % 2)]'s low (c < 2) or high nibbles and qh's bits
      // 2c, 2c + 1, as dequantize_row_q6_K.
      const int h = j / 4, c = j % 4;
      const __m256i ql = _mm256_loadu_si256(
          reinterpret_cast<const __m256i *>(codes + 64 * h + 32 * (c % 2)));
      const __m256i qh = _mm256_loadu_si256(
          reinterpret_cast<const __m256i *>(codes + 128 + 32 * h));
      const __m256i low = _mm256_and_si256(
          c < 2 ? ql : _mm256_srli_epi16(ql, 4), _mm256_set1_epi8(0x0f));
      return _mm256_or_si256(
          low, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c),
                                                  _mm256_set1_epi8(3)),
                                 4));
    }
    const bool five = kw.format == kquant::Format::Q5_K;
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
        codes + (five ? 32 : 0) + 32 * (j / 2)));
    __m256i v = _mm256_and_si256(j % 2 ? _mm256_srli_epi16(q, 4) : q,
                                 _mm256_set1_epi8(0x0f));
    if (five) // bit j of qh[l] is value 32j + l's fifth bit
      v = _mm256_or_si256(
          v, _mm256_slli_epi16(
                 _mm256_and_si256(
                     _mm256_srli_epi16(
                         _mm256_loadu_si256(
                             reinterpret_cast<const __m256i *>(codes)),
                         j),
                     _mm256_set1_epi8(1)),
                 4));
    return v;
  }
  if (f == kI8)
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

/// Columns [n0, n0 + kTileN) x [k0, k0 + kc) of w in IntGemm's layout,
/// plus `offset` (8 for i4); columns past N get zero weights.
void packCodes(IntFormat f, int32_t offset, const void *w, int64_t K, int64_t N,
               int64_t n0, int64_t k0, int64_t kc, Panel &p) {
  const int64_t b0 = k0 / kQuantBlock;
  p.w.resize(size_t(kc * kTileN));
  const __m256i flip = _mm256_set1_epi8(char(offset));
  for (int64_t c0 = 0; c0 < kTileN; c0 += 8)
    for (int64_t b = 0; b < kc / kQuantBlock; ++b) {
      __m256i r[8];
      for (int64_t i = 0; i < 8; ++i) {
        const int64_t n = n0 + c0 + i;
        r[i] = n < N ? loadBlock(f, w, K, n, b0 + b, flip) : flip;
      }
      transpose8x8(r);
      for (int64_t q = 0; q < kQuantBlock / 4; ++q)
        _mm256_storeu_si256(
            reinterpret_cast<__m256i *>(
                p.w.data() + ((b * kQuantBlock / 4 + q) * kTileN + c0) * 4),
            r[q]);
    }
}

/// packCodes over all of K with the columns' scales; columns past N get
/// zero scales.
void pack(IntFormat f, int32_t offset, const void *w, const float *scales,
          int64_t K, int64_t N, int64_t group, int64_t n0, Panel &p) {
  packCodes(f, offset, w, K, N, n0, 0, K, p);
  const int64_t groups = K / group;
  p.s.resize(size_t(groups * kTileN));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < kTileN; ++c)
      p.s[size_t(g * kTileN + c)] =
          n0 + c < N ? scales[(n0 + c) * groups + g] : 0.0f;
}

/// Denormal f32s (as int32) to zero, as vdpbf16ps reads them: an FMA on a
/// denormal costs a microcode assist, and random or pruned bf16 weights
/// hold some (measured: 6 GFLOP/s instead of 240 with 1/64 of them).
inline __m256i flushDenormals(__m256i v) {
  const __m256i exponent = _mm256_set1_epi32(0x7f800000);
  return _mm256_andnot_si256(
      _mm256_cmpeq_epi32(_mm256_and_si256(v, exponent), _mm256_setzero_si256()),
      v);
}

/// Columns [n0, n0 + kTileN) x [k0, k0 + kc) of bf16 w [N][K] widened to
/// f32 in F32Gemm's layout, denormals flushed; columns past N are zero.
void packBf16(const uint16_t *w, int64_t K, int64_t N, int64_t n0, int64_t k0,
              int64_t kc, Panel &p) {
  p.w.resize(size_t(kc * kTileN) * sizeof(float));
  auto *out = reinterpret_cast<float *>(p.w.data());
  const __m256i high = _mm256_set1_epi32(int32_t(0xffff0000u));
  for (int64_t c0 = 0; c0 < kTileN; c0 += 8) {
    int64_t k = 0;
    for (; k + 16 <= kc; k += 16) {
      __m256i r[8];
      for (int64_t i = 0; i < 8; ++i) {
        const int64_t n = n0 + c0 + i;
        r[i] = n < N ? _mm256_loadu_si256(reinterpret_cast<const __m256i *>(
                           w + n * K + k0 + k))
                     : _mm256_setzero_si256();
      }
      // Each int32 now holds columns k + 2j (low half) and k + 2j + 1 of
      // one output column; a bf16 is the high half of its f32.
      transpose8x8(r);
      for (int64_t j = 0; j < 8; ++j) {
        float *even = out + (k + 2 * j) * kTileN + c0;
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(even),
                            flushDenormals(_mm256_slli_epi32(r[j], 16)));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(even + kTileN),
                            flushDenormals(_mm256_and_si256(r[j], high)));
      }
    }
    for (; k < kc; ++k)
      for (int64_t c = c0; c < c0 + 8; ++c) {
        const uint16_t v = n0 + c < N ? w[(n0 + c) * K + k0 + k] : 0;
        out[k * kTileN + c] = (v & 0x7f80) != 0 ? bf16ToFloat(v) : 0.0f;
      }
  }
}

} // namespace

std::shared_ptr<PackedIntWeight>
packIntWeight(const IntKernels &k, IntFormat f, const void *w,
              const float *scales, int64_t N, int64_t K, int64_t group,
              const uint8_t *e8m0, int64_t experts) {
  auto out = std::make_shared<PackedIntWeight>();
  out->format = f;
  out->N = N;
  out->K = K;
  out->groups = group >= K ? 1 : K / group;
  const bool nibbles = f != kI8;
  const int64_t perExpert = (N + kTileN - 1) / kTileN;
  const int64_t panels = perExpert * experts;
  const int64_t bytes = nibbles ? K * kTileN / 2 : K * kTileN;
  const int64_t scaleCount = out->groups * kTileN;
  out->w.resize(size_t(panels * bytes));
  if (f == kMx)
    out->e.resize(size_t(panels * scaleCount));
  else
    out->s.resize(size_t(panels * scaleCount));
  const size_t rowBytes = size_t(nibbles ? K / 2 : K);
  parallelFor(panels, N * experts * K >= (1 << 16), [&](int64_t p) {
    thread_local Panel panel; // this worker's own
    // Each expert's rows pad to whole panels: an expert's slice is panels.
    const int64_t e = p / perExpert, n0 = (p % perExpert) * kTileN;
    const auto *we = static_cast<const uint8_t *>(w) + size_t(e * N) * rowBytes;
    if (f == kMx) { // raw codes (0..15) and their E8M0 bytes
      packCodes(kI4, 0, we, K, N, n0, 0, K, panel);
      const uint8_t *es = e8m0 + e * N * out->groups;
      for (int64_t g = 0; g < out->groups; ++g)
        for (int64_t c = 0; c < kTileN; ++c)
          out->e[size_t(p * scaleCount + g * kTileN + c)] =
              n0 + c < N ? es[(n0 + c) * out->groups + g] : 0;
    } else {
      pack(f, f == kI4 ? 8 : k.q8Offset, we, scales + e * N * out->groups, K, N,
           group, n0, panel);
      std::copy(panel.s.begin(), panel.s.end(),
                out->s.begin() + p * scaleCount);
    }
    uint8_t *to = out->w.data() + p * bytes;
    if (nibbles) // quad 2j's bytes in the low nibbles, 2j + 1's high
      for (int64_t j = 0; j < K / 8; ++j)
        for (int64_t i = 0; i < 4 * kTileN; ++i)
          to[j * 4 * kTileN + i] =
              uint8_t(panel.w[size_t(2 * j * 4 * kTileN + i)] |
                      panel.w[size_t((2 * j + 1) * 4 * kTileN + i)] << 4);
    else
      std::copy(panel.w.begin(), panel.w.end(), to);
  });
  return out;
}

// Rows above which an i4 / MXFP4 panel is widened to bytes once per call
// rather than unpacked in the tile once per tile of rows (measured: the
// byte tile runs about twice the nibble tile's rate on a prompt;
// BM_BatchedDecode Q4, 12 layers of 1.1B shapes: 8 rows 25.4 ms nibbles /
// 33.4 widened, 16 rows 42.0 / 43.3, 32 rows 78.6 / 69.1).
constexpr int64_t kWidenNibbleRows = 16;

namespace {

/// panel(p, out, ldo) for every panel of kTileN result columns, on the
/// pool: into a.out, or with `gated` (SWIGLU fused) a gate panel and its
/// up panel into this thread's scratch (in cache), then silu(gate) · up,
/// as the op computes it, into gated ([rows][N / 2]).
template <typename Panel>
void runPanels(const GemvArgs &a, float *gated, const Panel &panel) {
  const bool worth = a.N * a.K >= (1 << 16);
  if (!gated) {
    parallelFor((a.N + kTileN - 1) / kTileN, worth,
                [&](int64_t p) { panel(p, a.out + p * kTileN, a.N); });
    return;
  }
  const int64_t I = a.N / 2, half = I / kTileN;
  parallelFor(half, worth, [&](int64_t p) {
    thread_local std::vector<float> gu;
    gu.resize(size_t(a.rows * 2 * kTileN));
    panel(p, gu.data(), 2 * kTileN);
    panel(p + half, gu.data() + kTileN, 2 * kTileN);
    for (int64_t r = 0; r < a.rows; ++r) {
      const float *g = gu.data() + r * 2 * kTileN;
      float *y = gated + r * I + p * kTileN;
      for (int64_t c = 0; c < kTileN; c += 8)
        _mm256_storeu_ps(y + c,
                         _mm256_mul_ps(simd::silu(_mm256_loadu_ps(g + c)),
                                       _mm256_loadu_ps(g + kTileN + c)));
    }
  });
}

} // namespace

void gemmPackedInt(const IntKernels &k, const GemvArgs &a,
                   const PackedIntWeight &w, float *gated, int64_t panel0) {
  const bool nibbles = w.format != kI8, mx = w.format == kMx;
  static thread_local Activations scratch;
  // Named inside the parallel loop, `scratch` would be each worker's own.
  Activations &x = scratch;
  quantize(a, w.format == kI4 ? 8 : mx ? kMxfp4Offset : k.q8Offset, x);
  const int64_t bytes = nibbles ? a.K * kTileN / 2 : a.K * kTileN;
  const int64_t scaleCount = w.groups * kTileN;
  // Each thread streams its run of panels, all of K at once: no barrier
  // per block of K, and a decode row's weights are one sequential read.
  // Many rows (a prompt) would unpack every nibble once per tile of rows:
  // they unpack each panel once, to bytes (MXFP4: to doubled values plus
  // kMxfp4Offset, with f32 scales), and run the byte tile. Both sum each
  // block's exact integer times the same scale.
  const bool widen = nibbles && a.rows > kWidenNibbleRows;
  const IntTile tile = !nibbles ? k.t8
                       : widen  ? k.t4
                       : mx     ? k.tMx
                                : k.t4Nibbles;
  auto panelInto = [&](int64_t p, float *out, int64_t ldo) {
    const int64_t n0 = p * kTileN;
    const uint8_t *panel = w.w.data() + (panel0 + p) * bytes;
    const float *scales = mx ? nullptr : w.s.data() + (panel0 + p) * scaleCount;
    const uint8_t *e8m0 = mx ? w.e.data() + (panel0 + p) * scaleCount : nullptr;
    if (widen) {
      thread_local std::vector<uint8_t> wide; // this worker's own
      thread_local std::vector<float> wideScales;
      wide.resize(size_t(a.K * kTileN));
      const __m256i low = _mm256_set1_epi8(0x0f);
      const __m256i table = _mm256_add_epi8(
          _mm256_broadcastsi128_si256(_mm_loadu_si128(
              reinterpret_cast<const __m128i *>(kMxfp4Doubled))),
          _mm256_set1_epi8(char(kMxfp4Offset)));
      auto value = [&](__m256i v) {
        v = _mm256_and_si256(v, low);
        return mx ? _mm256_shuffle_epi8(table, v) : v;
      };
      for (int64_t j = 0; j < a.K / 8; ++j) // quads 2j (low), 2j + 1 (high)
        for (int64_t i = 0; i < 4 * kTileN; i += 32) {
          const __m256i v = _mm256_loadu_si256(
              reinterpret_cast<const __m256i *>(panel + j * 4 * kTileN + i));
          _mm256_storeu_si256(
              reinterpret_cast<__m256i *>(wide.data() + 2 * j * 4 * kTileN + i),
              value(v));
          _mm256_storeu_si256(reinterpret_cast<__m256i *>(
                                  wide.data() + (2 * j + 1) * 4 * kTileN + i),
                              value(_mm256_srli_epi16(v, 4)));
        }
      panel = wide.data();
      if (mx) {
        const float *half = e8m0HalfTable();
        wideScales.resize(size_t(scaleCount));
        for (int64_t i = 0; i < scaleCount; ++i)
          wideScales[size_t(i)] = half[e8m0[i]];
        scales = wideScales.data();
        e8m0 = nullptr;
      }
    }
    IntGemm g{x.q.data(),
              x.s.data(),
              x.c.data(),
              a.K,
              a.rows,
              a.K,
              panel,
              scales,
              w.groups,
              a.bias ? a.bias + n0 : nullptr,
              out,
              ldo,
              std::min(kTileN, a.N - n0),
              false};
    g.we = e8m0;
    tile(g);
  };
  runPanels(a, gated, panelInto);
}

namespace {

/// Columns [n0, n0 + kTileN) x [k0, k0 + kc) of MXFP4 w decoded to f32 in
/// F32Gemm's layout; columns past N are zero.
void packMxfp4(const uint8_t *w, const uint8_t *e8m0, int64_t K, int64_t N,
               int64_t n0, int64_t k0, int64_t kc, Panel &p) {
  p.w.resize(size_t(kc * kTileN) * sizeof(float));
  auto *out = reinterpret_cast<float *>(p.w.data());
  alignas(32) float row[kQuantBlock];
  for (int64_t c = 0; c < kTileN; ++c)
    for (int64_t k = 0; k < kc; k += kQuantBlock) {
      const int64_t n = n0 + c, b = (k0 + k) / kQuantBlock;
      if (n < N)
        decodeMxfp4Block(w + n * (K / 2) + b * 16, e8m0[n * (K / 32) + b], row);
      for (int64_t i = 0; i < kQuantBlock; ++i)
        out[(k + i) * kTileN + c] = n < N ? row[i] : 0.0f;
    }
}

// Rows up to which each thread runs its panels over all of K (no barrier
// per block of K; a decode row's weights are one sequential read); above,
// blocks of K go in order with their panels in parallel (x's block stays
// in L2 across panels). Both sum in the same order.
// Up to as many rows the tile also widens bf16 / f16 weights in registers
// (each tile of 6 rows widens them again); above, each block is widened
// once into memory for all the tiles of rows. Measured (bf16, 12 layers of
// the 1.1B shapes): 16 rows 146-162 -> 127 ms in registers; a 128-token
// prompt's linears 1.37x as long in registers.
constexpr int64_t kPanelOuterRows = 48;

/// Any rows on the F32Tile; block(n0, k0, kc, scratch) gives columns
/// [n0, n0 + kTileN) x [k0, k0 + kc) of the weights in F32Gemm's layout
/// (ldw kTileN), of `type`: widened into scratch, or (`inPlace`) where
/// they are, any block of K at once. Each result sums its bias, then k in
/// order, whatever the row count, blocking and loop order: a row's result
/// is the same bits at any batch.
template <typename Block>
void gemmWidened(F32Tile tile, const GemvArgs &a, Block block,
                 PanelType type = PanelType::F32, bool inPlace = false) {
  // Few rows on weights in place: each panel's whole K in one tile call.
  const bool few = a.rows <= kPanelOuterRows;
  const int64_t kBlock = few && inPlace ? a.K : kF32KBlock;
  const int64_t tiles = (a.rows + kF32TileRows - 1) / kF32TileRows;
  const int64_t rowsP = tiles * kF32TileRows;
  static thread_local std::vector<float> scratch;
  std::vector<float> &xp = scratch; // not each worker's own, see gemmPackedInt
  xp.resize(size_t(rowsP * a.K));
  parallelFor(tiles, a.rows * a.K >= (1 << 16), [&](int64_t t) {
    for (int64_t k0 = 0; k0 < a.K; k0 += kBlock) {
      const int64_t kc = std::min(kBlock, a.K - k0);
      packTileRows(
          std::min(kF32TileRows, a.rows - t * kF32TileRows), kc,
          [&](int64_t m) { return a.x + (t * kF32TileRows + m) * a.K + k0; },
          xp.data() + k0 * rowsP + t * kF32TileRows * kc);
    }
  });
  auto run = [&](int64_t n0, int64_t k0, int64_t kc, Panel &panel) {
    tile(F32Gemm{xp.data() + k0 * rowsP, a.rows, kc, block(n0, k0, kc, panel),
                 kTileN, a.bias ? a.bias + n0 : nullptr, a.out + n0, a.N,
                 std::min(kTileN, a.N - n0), k0 > 0, type});
  };
  if (!few)
    return forTileBlocks(a.N, a.K, kBlock, run);
  parallelFor((a.N + kTileN - 1) / kTileN, a.N * a.K >= (1 << 16),
              [&](int64_t p) {
                thread_local Panel panel; // this worker's own
                for (int64_t k0 = 0; k0 < a.K; k0 += kBlock)
                  run(p * kTileN, k0, std::min(kBlock, a.K - k0), panel);
              });
}

/// Columns [n0, n0 + kTileN) x [k0, k0 + kc) of f32 / f16 w [N][K] in
/// F32Gemm's layout; columns past N are zero.
void packRows(uint32_t dtype, const void *w, int64_t K, int64_t N, int64_t n0,
              int64_t k0, int64_t kc, Panel &p) {
  p.w.resize(size_t(kc * kTileN) * sizeof(float));
  auto *out = reinterpret_cast<float *>(p.w.data());
  for (int64_t c = 0; c < kTileN; ++c) {
    const int64_t n = n0 + c;
    for (int64_t k = 0; k < kc; ++k) {
      float v = 0.0f;
      if (n < N && dtype == LLMC_F32)
        std::memcpy(&v, static_cast<const float *>(w) + n * K + k0 + k, 4);
      else if (n < N)
        v = f16ToFloat(static_cast<const uint16_t *>(w)[n * K + k0 + k]);
      out[k * kTileN + c] = v;
    }
  }
}

} // namespace

std::shared_ptr<PackedFloatWeight> packFloatWeight(uint32_t dtype,
                                                   const void *w, int64_t N,
                                                   int64_t K, bool pairs) {
  auto out = std::make_shared<PackedFloatWeight>();
  out->dtype = dtype;
  out->N = N;
  out->K = K;
  out->pairs = pairs;
  const int64_t panels = (N + kTileN - 1) / kTileN;
  const size_t size = dtype == LLMC_F32 ? 4 : 2;
  out->w.resize(size_t(panels * K * kTileN) * size);
  const bool bf16 = dtype == LLMC_BF16;
  // bf16 denormals become +0 here, so the tile's widening is a shift
  // (gemv_int.h, PanelType). A plan's bytes need not be aligned: unaligned
  // loads and memcpy only.
  auto fill = [&](auto *to) {
    using T = std::remove_reference_t<decltype(*to)>;
    const auto *from = static_cast<const uint8_t *>(w);
    parallelFor(panels, N * K >= (1 << 16), [&](int64_t p) {
      T *panel = to + p * K * kTileN;
      // f32 and bf16 pairs are 32-bit elements [K'][32]: 8 x 8 blocks of
      // them transposed in registers. bf16 / f16 in [K][32]: column by
      // column below.
      if (sizeof(T) == 4 || pairs) {
        const int64_t E = sizeof(T) == 4 ? K : K / 2; // elements a row
        const auto *rows = reinterpret_cast<const uint32_t *>(from);
        auto *dst = reinterpret_cast<uint32_t *>(panel);
        const __m256i exponents = _mm256_set1_epi16(0x7f80);
        for (int64_t c0 = 0; c0 < kTileN; c0 += 8)
          for (int64_t j = 0; j < E; j += 8) {
            __m256i r[8];
            for (int64_t i = 0; i < 8; ++i) {
              const int64_t n = p * kTileN + c0 + i;
              if (n >= N) {
                r[i] = _mm256_setzero_si256();
              } else if (j + 8 <= E) {
                r[i] = _mm256_loadu_si256(
                    reinterpret_cast<const __m256i *>(rows + n * E + j));
              } else {
                alignas(32) uint32_t tail[8] = {};
                std::memcpy(tail, rows + n * E + j, size_t(E - j) * 4);
                r[i] = _mm256_load_si256(reinterpret_cast<__m256i *>(tail));
              }
              if (bf16) // each half with a zero exponent becomes +0
                r[i] = _mm256_andnot_si256(
                    _mm256_cmpeq_epi16(_mm256_and_si256(r[i], exponents),
                                       _mm256_setzero_si256()),
                    r[i]);
            }
            transpose8x8(r);
            for (int64_t q = 0; q < 8 && j + q < E; ++q)
              _mm256_storeu_si256(
                  reinterpret_cast<__m256i *>(dst + (j + q) * kTileN + c0),
                  r[q]);
          }
        return;
      }
      for (int64_t c = 0; c < kTileN; ++c) {
        const int64_t n = p * kTileN + c;
        for (int64_t k = 0; k < K; ++k) {
          T v = 0;
          if (n < N)
            std::memcpy(&v, from + size_t(n * K + k) * sizeof(T), sizeof(T));
          if (bf16 && (v & 0x7f80) == 0)
            v = 0;
          // Pairs: k and k + 1 side by side in column c's 32-bit lane.
          panel[pairs ? (k & ~int64_t(1)) * kTileN + 2 * c + (k & 1)
                      : k * kTileN + c] = v;
        }
      }
    });
  };
  if (dtype == LLMC_F32)
    fill(reinterpret_cast<uint32_t *>(out->w.data()));
  else
    fill(reinterpret_cast<uint16_t *>(out->w.data()));
  return out;
}

void gemmPackedFloat(F32Tile tile, const GemvArgs &a,
                     const PackedFloatWeight &w) {
  const size_t size = w.dtype == LLMC_F32 ? 4 : 2;
  auto at = [&](int64_t n0, int64_t k0) {
    return w.w.data() + size_t(n0 * a.K + k0 * kTileN) * size;
  };
  if (w.dtype == LLMC_F32 || a.rows <= kPanelOuterRows)
    // The tile reads the panels in place, widening bf16 / f16 in registers.
    return gemmWidened(
        tile, a,
        [&](int64_t n0, int64_t k0, int64_t, Panel &) {
          return static_cast<const void *>(at(n0, k0));
        },
        w.dtype == LLMC_F32    ? PanelType::F32
        : w.dtype == LLMC_BF16 ? PanelType::Bf16
                               : PanelType::F16,
        true);
  // Many rows: each block widened once into this thread's panel, then read
  // by every tile of rows (the same values, so the same bits; bf16 panels
  // hold no denormals, packFloatWeight flushed them).
  const bool bf16 = w.dtype == LLMC_BF16;
  gemmWidened(tile, a, [&](int64_t n0, int64_t k0, int64_t kc, Panel &p) {
    p.w.resize(size_t(kc * kTileN) * sizeof(float));
    auto *out = reinterpret_cast<float *>(p.w.data());
    const auto *src = reinterpret_cast<const uint16_t *>(at(n0, k0));
    for (int64_t i = 0; i < kc * kTileN; i += 8) {
      const __m128i h =
          _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i));
      _mm256_storeu_ps(out + i, bf16 ? _mm256_castsi256_ps(_mm256_slli_epi32(
                                           _mm256_cvtepu16_epi32(h), 16))
                                     : _mm256_cvtph_ps(h));
    }
    return static_cast<const void *>(out);
  });
}

namespace {

/// x rounded to bf16, to nearest even (as llmc::floatToBf16 for finite x).
void toBf16(const float *x, int64_t n, uint16_t *out) {
  int64_t i = 0;
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
  auto round = [&](__m256i v) {
    return _mm256_srli_epi32(
        _mm256_add_epi32(
            v, _mm256_add_epi32(
                   bias, _mm256_and_si256(_mm256_srli_epi32(v, 16), one))),
        16);
  };
  for (; i + 16 <= n; i += 16) {
    const __m256i a = round(_mm256_castps_si256(_mm256_loadu_ps(x + i)));
    const __m256i b = round(_mm256_castps_si256(_mm256_loadu_ps(x + i + 8)));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i *>(out + i),
        _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8));
  }
  for (; i < n; ++i)
    out[i] = floatToBf16(x[i]);
}

} // namespace

void gemmPackedBf16(Bf16Tile tile, const GemvArgs &a,
                    const PackedFloatWeight &w, int64_t panel0) {
  static thread_local std::vector<uint16_t> scratch; // see gemmPackedInt
  std::vector<uint16_t> &x = scratch;
  x.resize(size_t(a.rows * a.K));
  parallelFor(a.rows, a.rows * a.K >= (1 << 16), [&](int64_t r) {
    toBf16(a.x + r * a.K, a.K, x.data() + r * a.K);
  });
  // Each thread runs every row against its panels, all of K at once: a
  // panel (K * 64 bytes) stays in L2 while the rows pass it.
  parallelFor((a.N + kTileN - 1) / kTileN, a.N * a.K >= (1 << 16),
              [&](int64_t p) {
                const int64_t n0 = p * kTileN;
                tile(Bf16Gemm{x.data(), a.rows, a.K,
                              reinterpret_cast<const uint16_t *>(w.w.data()) +
                                  (panel0 * kTileN + n0) * a.K,
                              a.bias ? a.bias + n0 : nullptr, a.out + n0, a.N,
                              std::min(kTileN, a.N - n0)});
              });
}

void gemmFloat(F32Tile tile, uint32_t dtype, const GemvArgs &a, const void *w) {
  gemmWidened(tile, a, [&](int64_t n0, int64_t k0, int64_t kc, Panel &p) {
    if (dtype == LLMC_BF16)
      packBf16(static_cast<const uint16_t *>(w), a.K, a.N, n0, k0, kc, p);
    else
      packRows(dtype, w, a.K, a.N, n0, k0, kc, p);
    return static_cast<const void *>(p.w.data());
  });
}

void gemmKQuant(const IntKernels &k, const GemvArgs &a, const KQuantWeight &w,
                float *gated) {
  // x rounded to q8_K as the dots round it; each thread packs its panels
  // whole (all of K: no barrier) with their integer scales, d, dmin and mins,
  // derived per call (kept, they would add bits to each weight's 4.5).
  const bool six = w.format == kquant::Format::Q6_K;
  const int64_t block = six ? 16 : kQuantBlock, per = kquant::kBlock / block;
  const int64_t subs = a.K / block, supers = a.K / kquant::kBlock;
  const kquant::Layout l = kquant::layout(w.format);
  struct X {
    std::vector<int8_t> q;
    std::vector<float> d;
    std::vector<int32_t> c, b;
  };
  static thread_local X scratch; // see gemmPackedInt
  X &x = scratch;
  x.q.resize(size_t(a.rows * a.K));
  x.d.resize(size_t(a.rows * supers));
  x.c.resize(six ? size_t(a.rows * subs) : 0);
  x.b.resize(six ? 0 : size_t(a.rows * supers * 4));
  parallelFor(a.rows, a.rows * a.K >= (1 << 16), [&](int64_t r) {
    thread_local std::vector<Q8K> q8; // this worker's own
    q8.resize(size_t(supers));
    quantizeQ8K(a.x + r * a.K, a.K, q8.data());
    for (int64_t s = 0; s < supers; ++s) {
      const Q8K &q = q8[size_t(s)];
      std::copy(q.q, q.q + kquant::kBlock,
                x.q.begin() + r * a.K + s * kquant::kBlock);
      x.d[size_t(r * supers + s)] = q.d;
      if (six)
        for (int64_t j = 0; j < per; ++j)
          x.c[size_t(r * subs + s * per + j)] = -32 * q.bsums[j];
      else
        for (int64_t p = 0; p < 4; ++p) {
          const int j = int(4 * p); // sub-blocks 2p, 2p + 1: sums 4p .. 4p+3
          x.b[size_t((r * supers + s) * 4 + p)] = int32_t(
              uint32_t(uint16_t(q.bsums[j] + q.bsums[j + 1])) |
              uint32_t(uint16_t(q.bsums[j + 2] + q.bsums[j + 3])) << 16);
        }
    }
  });
  runPanels(a, gated, [&](int64_t p, float *out, int64_t ldo) {
    struct W {
      Panel codes;
      std::vector<int32_t> scales, mins;
      std::vector<float> d, dmin;
    };
    thread_local W pw; // this worker's own
    const int64_t n0 = p * kTileN;
    packCodes(kKq, 0, &w, a.K, a.N, n0, 0, a.K, pw.codes);
    pw.scales.resize(size_t(subs * kTileN));
    pw.mins.resize(size_t(supers * 4 * kTileN));
    pw.d.resize(size_t(supers * kTileN));
    pw.dmin.resize(size_t(supers * kTileN));
    for (int64_t c = 0; c < kTileN; ++c)
      for (int64_t s = 0; s < supers; ++s) {
        const int64_t n = n0 + c;
        const kquant::SubScales h =
            n < a.N ? kquant::subScales(w.format, w.headers + (n * supers + s) *
                                                                  l.headerBytes)
                    : kquant::SubScales{};
        pw.d[size_t(s * kTileN + c)] = h.d;
        pw.dmin[size_t(s * kTileN + c)] = h.dmin;
        for (int64_t j = 0; j < per; ++j)
          pw.scales[size_t((s * per + j) * kTileN + c)] = h.scale[j];
        for (int64_t q = 0; q < 4; ++q)
          pw.mins[size_t((s * 4 + q) * kTileN + c)] = int32_t(
              uint32_t(h.min[2 * q]) | uint32_t(h.min[2 * q + 1]) << 16);
      }
    k.tkq(KQuantGemm{x.q.data(), x.d.data(), six ? x.c.data() : nullptr,
                     six ? nullptr : x.b.data(), a.rows, a.K, pw.codes.w.data(),
                     pw.scales.data(), pw.d.data(), pw.dmin.data(),
                     six ? nullptr : pw.mins.data(), block,
                     a.bias ? a.bias + n0 : nullptr, out, ldo,
                     std::min(kTileN, a.N - n0)});
  });
}

void gemmMxfp4(F32Tile tile, const GemvArgs &a, const uint8_t *w,
               const uint8_t *e8m0) {
  gemmWidened(tile, a, [&](int64_t n0, int64_t k0, int64_t kc, Panel &p) {
    packMxfp4(w, e8m0, a.K, a.N, n0, k0, kc, p);
    return static_cast<const void *>(p.w.data());
  });
}

} // namespace llmc::cpu
