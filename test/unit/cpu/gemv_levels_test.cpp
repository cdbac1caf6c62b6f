//===- gemv_levels_test.cpp - Each ISA level's dot products, exactly ------===//
//
// The expected values redo the kernels' arithmetic in double: the same int8
// quantization of the activations (blocks of 32, round to nearest), the
// same bf16 rounding. What remains is f32 summation order, so the bound is
// tight: a wrong lane, block, nibble or scale is off by far more.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"

#include "llmc/support/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iterator>
#include <random>

namespace llmc::cpu {
namespace {

constexpr double kSummationOrder = 1e-10;

double nmse(const std::vector<float> &got, const std::vector<double> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return num / den;
}

struct Level {
  Isa isa;
  IntKernels ints;
  F32Tile f32Tile;
  Bf16Tile bf16Tile; // null below Avx512Bf16
};

/// Every level this CPU runs, with the kernels useLevel picks for it.
std::vector<Level> levelsHere() {
  std::vector<Level> out;
  const Isa best = detectIsa();
  for (Isa isa : {Isa::Avx2, Isa::AvxVnni, Isa::Avx512, Isa::Avx512Bf16}) {
    // AVX-VNNI is its own level only where AVX-512 is absent (isa.h).
    if (isa > best || (isa == Isa::AvxVnni && best != Isa::AvxVnni))
      continue;
    Backend b;
    useLevel(b, isa);
    out.push_back({isa, b.ints, b.f32Tile, b.bf16Tile});
  }
  return out;
}

std::vector<float> random(std::mt19937 &rng, size_t n, float scale = 1.0f) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = u(rng);
  return v;
}

/// x quantized as gemv_int.cpp does, in natural column order.
std::vector<double> quantized(const std::vector<float> &x) {
  std::vector<double> out(x.size());
  for (size_t b = 0; b < x.size(); b += 32) {
    float amax = 0;
    for (size_t i = b; i < b + 32; ++i)
      amax = std::max(amax, std::fabs(x[i]));
    float d = amax / 127.0f, id = amax > 0 ? 127.0f / amax : 0.0f;
    for (size_t i = b; i < b + 32; ++i)
      out[i] = std::nearbyint(x[i] * id) * double(d);
  }
  return out;
}

struct Shape {
  int64_t rows, K, N, group;
};

const Shape kShapes[] = {{1, 256, 96, 32},  {3, 96, 70, 32},
                         {4, 512, 64, 128}, {5, 384, 130, 128},
                         {7, 64, 33, 64},   {2, 4096, 256, 4096}};

// Rows past kGemvMaxRows take the GEMM: every tile height (6 and 2 rows,
// and each remainder), a column count off the 32-column panel (and off 8
// and 16), grouped and per-row weight scales.
const Shape kGemmShapes[] = {{9, 256, 96, 32},   {13, 96, 70, 32},
                             {17, 512, 64, 128}, {23, 384, 130, 128},
                             {40, 64, 33, 64},   {11, 4096, 256, 4096},
                             {12, 128, 7, 128},  {31, 160, 45, 32}};

using IntLinear = void (*)(const IntKernels &, IntFormat, const GemvArgs &,
                           const void *, const float *, int64_t,
                           const uint8_t *);

/// MXFP4 code q (E2M1, bit 3 the sign) as a value.
double e2m1(int q) {
  static const double v[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (q & 8) ? -v[q & 7] : v[q & 7];
}

void checkIntLevels(IntLinear linear, const Shape *shapes, size_t count,
                    uint32_t seed) {
  std::mt19937 rng(seed);
  for (const Level &level : levelsHere())
    for (Shape s : std::vector<Shape>(shapes, shapes + count))
      for (IntFormat f : {kI8, kI4, kMx})
        for (bool withBias : {false, true}) {
          const bool q4 = f != kI8, mx = f == kMx;
          if (mx)
            s.group = 32; // MXFP4's blocks
          SCOPED_TRACE(std::string(isaName(level.isa)) +
                       (mx   ? " mxfp4"
                        : q4 ? " i4"
                             : " i8") +
                       " rows " + std::to_string(s.rows) + " K " +
                       std::to_string(s.K) + " N " + std::to_string(s.N) +
                       " group " + std::to_string(s.group));
          const int64_t groups = s.K / s.group;
          std::vector<float> x = random(rng, size_t(s.rows * s.K), 3.0f);
          std::vector<float> scales = random(rng, size_t(s.N * groups), 0.1f);
          std::vector<uint8_t> e8m0(size_t(s.N * groups));
          std::uniform_int_distribution<int> e(118, 134);
          for (uint8_t &v : e8m0)
            v = uint8_t(e(rng));
          std::vector<float> bias = random(rng, size_t(s.N));
          std::uniform_int_distribution<int> q(mx   ? 0
                                               : q4 ? -8
                                                    : -128,
                                               mx   ? 15
                                               : q4 ? 7
                                                    : 127);
          std::vector<int> wq(size_t(s.N * s.K));
          for (int &v : wq)
            v = q(rng);
          std::vector<int8_t> w8(wq.begin(), wq.end());
          std::vector<uint8_t> w4(size_t(s.N * s.K / 2));
          for (size_t i = 0; i < w4.size(); ++i)
            w4[i] = uint8_t((wq[2 * i] & 0xf) | ((wq[2 * i + 1] & 0xf) << 4));

          std::vector<double> want(size_t(s.rows * s.N));
          for (int64_t r = 0; r < s.rows; ++r) {
            std::vector<double> xq = quantized(std::vector<float>(
                x.begin() + r * s.K, x.begin() + (r + 1) * s.K));
            for (int64_t n = 0; n < s.N; ++n) {
              double acc = withBias ? bias[size_t(n)] : 0.0;
              for (int64_t k = 0; k < s.K; ++k) {
                const size_t g = size_t(n * groups + k / s.group);
                const int c = wq[size_t(n * s.K + k)];
                acc += mx ? xq[size_t(k)] * e2m1(c) *
                                std::ldexp(1.0, int(e8m0[g]) - 127)
                          : xq[size_t(k)] * c * scales[g];
              }
              want[size_t(r * s.N + n)] = acc;
            }
          }
          // Past the last row: the kernels must not write there.
          std::vector<float> out(want.size() + 64, -7.0f);
          GemvArgs a{
              x.data(),  s.rows, s.K, s.N, withBias ? bias.data() : nullptr,
              out.data()};
          linear(level.ints, f, a,
                 q4 ? static_cast<const void *>(w4.data()) : w8.data(),
                 scales.data(), s.group, mx ? e8m0.data() : nullptr);
          for (size_t i = want.size(); i < out.size(); ++i)
            ASSERT_EQ(out[i], -7.0f) << "written past the output at " << i;
          out.resize(want.size());
          EXPECT_LE(nmse(out, want), kSummationOrder);
        }
}

/// The packed panels (LINEAR's and the experts' path) for every row count.
void packedInt(const IntKernels &k, IntFormat f, const GemvArgs &a,
               const void *w, const float *scales, int64_t group,
               const uint8_t *e8m0) {
  gemmPackedInt(k, a, *packIntWeight(k, f, w, scales, a.N, a.K, group, e8m0));
}

TEST(GemvLevels, Int8Int4AndMxfp4AtEveryLevel) {
  checkIntLevels(packedInt, kShapes, std::size(kShapes), 19);
  checkIntLevels(packedInt, kGemmShapes, std::size(kGemmShapes), 29);
}

// An expert stack packs each expert into whole panels (N = 40: two panels,
// the second padded), so expert e's slice from panel 2e on gives what the
// expert packed alone gives.
TEST(GemvLevels, ExpertStacksPackEachExpertIntoWholePanels) {
  std::mt19937 rng(31);
  const int64_t E = 3, N = 40, K = 128, rows = 5;
  std::vector<float> x = random(rng, size_t(rows * K));
  std::vector<uint8_t> w4(size_t(E * N * K / 2)), e8m0(size_t(E * N * K / 32));
  for (auto &v : w4)
    v = uint8_t(rng());
  for (auto &v : e8m0)
    v = uint8_t(120 + rng() % 10);
  std::vector<float> s4 = random(rng, size_t(E * N * K / 32), 0.01f);
  for (const Level &l : levelsHere())
    for (IntFormat f : {kI4, kMx}) {
      SCOPED_TRACE(std::string(isaName(l.isa)) + (f == kMx ? " mxfp4" : " i4"));
      auto stack = packIntWeight(l.ints, f, w4.data(), s4.data(), N, K, 32,
                                 e8m0.data(), E);
      for (int64_t e = 0; e < E; ++e) {
        auto alone = packIntWeight(l.ints, f, w4.data() + e * N * K / 2,
                                   s4.data() + e * N * K / 32, N, K, 32,
                                   e8m0.data() + e * N * K / 32);
        std::vector<float> got(size_t(rows * N)), want(size_t(rows * N));
        gemmPackedInt(l.ints, {x.data(), rows, K, N, nullptr, got.data()},
                      *stack, nullptr, 2 * e);
        gemmPackedInt(l.ints, {x.data(), rows, K, N, nullptr, want.data()},
                      *alone);
        EXPECT_EQ(got, want) << "expert " << e;
      }
    }
  // bf16 stacks (vdpbf16ps levels) pack only experts of whole panels.
  std::vector<uint16_t> wb(size_t(E * 64 * K));
  for (auto &v : wb)
    v = floatToBf16(random(rng, 1)[0]);
  for (const Level &l : levelsHere()) {
    if (!l.bf16Tile)
      continue;
    auto stack = packFloatWeight(LLMC_BF16, wb.data(), E * 64, K, true);
    for (int64_t e = 0; e < E; ++e) {
      auto alone =
          packFloatWeight(LLMC_BF16, wb.data() + e * 64 * K, 64, K, true);
      std::vector<float> got(size_t(rows * 64)), want(size_t(rows * 64));
      gemmPackedBf16(l.bf16Tile, {x.data(), rows, K, 64, nullptr, got.data()},
                     *stack, 2 * e);
      gemmPackedBf16(l.bf16Tile, {x.data(), rows, K, 64, nullptr, want.data()},
                     *alone);
      EXPECT_EQ(got, want) << "bf16 expert " << e;
    }
  }
}

/// A weight of f32 / bf16 / f16 values drawn from [-1, 1], as stored.
struct FloatWeight {
  uint32_t dtype;
  std::vector<uint8_t> bytes;
  std::vector<double> values;
  /// bf16: weight row 1 all denormals (read as +0 by every path, so a
  /// path that did not flush them would give that column other bits).
  FloatWeight(uint32_t d, std::mt19937 &rng, int64_t N, int64_t K) : dtype(d) {
    const int64_t n = N * K;
    const size_t size = d == LLMC_F32 ? 4 : 2;
    bytes.resize(size_t(n) * size);
    for (int64_t i = 0; i < n; ++i) {
      float f = random(rng, 1)[0];
      if (d == LLMC_F32) {
        std::memcpy(bytes.data() + i * 4, &f, 4);
      } else {
        uint16_t h = d == LLMC_BF16 ? floatToBf16(f) : floatToF16(f);
        if (d == LLMC_BF16 && (i % 97 == 3 || i / K == 1))
          h = uint16_t(0x8000 | (i % 127 + 1));
        std::memcpy(bytes.data() + i * 2, &h, 2);
        f = d == LLMC_BF16 ? ((h & 0x7f80) ? bf16ToFloat(h) : 0.0f)
                           : f16ToFloat(h);
      }
      values.push_back(f);
    }
  }
};

// f32, bf16 and f16 weights on each level's F32Tile, packed once and packed
// per call (expert stacks): f32 activations against the exact weights.
TEST(GemvLevels, FloatWeightsOnTheF32Tile) {
  std::mt19937 rng(17);
  std::vector<Shape> shapes(std::begin(kShapes), std::end(kShapes));
  shapes.insert(shapes.end(), std::begin(kGemmShapes), std::end(kGemmShapes));
  shapes.push_back({53, 520, 40, 32}); // above kPanelOuterRows: K-blocked
  for (const Level &level : levelsHere())
    for (uint32_t dtype : {LLMC_F32, LLMC_BF16, LLMC_F16})
      for (const Shape &t : shapes)
        for (int64_t K : {t.K, t.K + 7}) { // a tail that is not a vector
          SCOPED_TRACE(std::string(isaName(level.isa)) + " dtype " +
                       std::to_string(dtype) + " rows " +
                       std::to_string(t.rows) + " K " + std::to_string(K) +
                       " N " + std::to_string(t.N));
          std::vector<float> x = random(rng, size_t(t.rows * K));
          FloatWeight w(dtype, rng, t.N, K);
          std::vector<float> bias = random(rng, size_t(t.N));
          if (t.N > 1)
            bias[1] = 0.0f; // column 1's denormals alone decide its bits
          std::vector<double> want(size_t(t.rows * t.N));
          for (int64_t r = 0; r < t.rows; ++r)
            for (int64_t n = 0; n < t.N; ++n) {
              double acc = bias[size_t(n)];
              for (int64_t k = 0; k < K; ++k)
                acc +=
                    double(x[size_t(r * K + k)]) * w.values[size_t(n * K + k)];
              want[size_t(r * t.N + n)] = acc;
            }
          std::vector<float> packed(want.size() + 64, -7.0f),
              perCall(want.size());
          auto p = packFloatWeight(dtype, w.bytes.data(), t.N, K);
          gemmPackedFloat(
              level.f32Tile,
              {x.data(), t.rows, K, t.N, bias.data(), packed.data()}, *p);
          gemmFloat(level.f32Tile, dtype,
                    {x.data(), t.rows, K, t.N, bias.data(), perCall.data()},
                    w.bytes.data());
          for (size_t i = want.size(); i < packed.size(); ++i)
            ASSERT_EQ(packed[i], -7.0f) << "written past the output at " << i;
          packed.resize(want.size());
          EXPECT_LE(nmse(packed, want), kSummationOrder);
          EXPECT_EQ(packed, perCall) << "packed once and per call differ";
        }
}

// bf16 weights on vdpbf16ps (levels with AVX512-BF16): x rounded to bf16
// to nearest even, then the exact products summed in f32.
TEST(GemvLevels, Bf16WeightsOnVdpbf16ps) {
  std::mt19937 rng(37);
  std::vector<Shape> shapes(std::begin(kShapes), std::end(kShapes));
  shapes.insert(shapes.end(), std::begin(kGemmShapes), std::end(kGemmShapes));
  shapes.push_back({53, 520, 40, 32});
  int levels = 0;
  for (const Level &level : levelsHere()) {
    if (!level.bf16Tile)
      continue;
    ++levels;
    for (const Shape &t : shapes) {
      SCOPED_TRACE(std::string(isaName(level.isa)) + " rows " +
                   std::to_string(t.rows) + " K " + std::to_string(t.K) +
                   " N " + std::to_string(t.N));
      std::vector<float> x = random(rng, size_t(t.rows * t.K));
      FloatWeight w(LLMC_BF16, rng, t.N, t.K);
      std::vector<float> bias = random(rng, size_t(t.N));
      std::vector<double> want(size_t(t.rows * t.N));
      for (int64_t r = 0; r < t.rows; ++r)
        for (int64_t n = 0; n < t.N; ++n) {
          double acc = 0;
          for (int64_t k = 0; k < t.K; ++k)
            acc += double(bf16ToFloat(floatToBf16(x[size_t(r * t.K + k)]))) *
                   w.values[size_t(n * t.K + k)];
          want[size_t(r * t.N + n)] = acc + bias[size_t(n)];
        }
      std::vector<float> got(want.size() + 64, -7.0f);
      auto p = packFloatWeight(LLMC_BF16, w.bytes.data(), t.N, t.K, true);
      gemmPackedBf16(level.bf16Tile,
                     {x.data(), t.rows, t.K, t.N, bias.data(), got.data()}, *p);
      for (size_t i = want.size(); i < got.size(); ++i)
        ASSERT_EQ(got[i], -7.0f) << "written past the output at " << i;
      got.resize(want.size());
      EXPECT_LE(nmse(got, want), kSummationOrder);
      // Many rows run in blocks of K (K 520: two), one row all of K at
      // once: the same bits.
      for (int64_t r = 0; r < t.rows; ++r) {
        std::vector<float> one(size_t(t.N));
        gemmPackedBf16(
            level.bf16Tile,
            {x.data() + r * t.K, 1, t.K, t.N, bias.data(), one.data()}, *p);
        ASSERT_EQ(one, std::vector<float>(got.begin() + r * t.N,
                                          got.begin() + (r + 1) * t.N))
            << "row " << r << " alone";
      }
    }
  }
  if (levels == 0)
    GTEST_SKIP() << "no AVX512-BF16 on this CPU";
}

// Every linear path serves any number of rows; a row's result must not
// depend on the rows beside it (a batched decode step equals each sequence
// alone), bit for bit, including i4's and MXFP4's widened panels above 32
// rows and the
// F32Tile's K-blocked order above 48.
TEST(GemvLevels, PackedWeightsGiveEachRowTheSameResultAtAnyBatch) {
  std::mt19937 rng(23);
  const int64_t K = 384, N = 72, rows = 60;
  std::vector<float> x = random(rng, size_t(rows * K)), bias = random(rng, N);
  std::vector<int8_t> w8(size_t(N * K));
  std::vector<uint8_t> w4(size_t(N * K / 2));
  std::vector<uint16_t> wbf(size_t(N * K));
  std::vector<float> wf = random(rng, size_t(N * K));
  std::vector<uint8_t> e8m0(size_t(N * K / 32));
  for (auto &v : e8m0)
    v = uint8_t(120 + rng() % 10);
  for (auto &v : w8)
    v = int8_t(int(rng() % 255) - 127);
  for (auto &v : w4)
    v = uint8_t(rng());
  for (auto &v : wbf)
    v = floatToBf16(random(rng, 1)[0]);
  std::vector<float> s8 = random(rng, N, 0.01f),
                     s4 = random(rng, size_t(N * K / 32), 0.01f);
  for (const Level &l : levelsHere()) {
    SCOPED_TRACE(isaName(l.isa));
    Backend b;
    useLevel(b, l.isa);
    struct Path {
      const char *name;
      std::function<void(const GemvArgs &)> run;
    };
    auto p8 = packIntWeight(b.ints, kI8, w8.data(), s8.data(), N, K, K);
    auto p4 = packIntWeight(b.ints, kI4, w4.data(), s4.data(), N, K, 32);
    auto pm =
        packIntWeight(b.ints, kMx, w4.data(), nullptr, N, K, 32, e8m0.data());
    std::vector<Path> paths = {
        {"i8", [&](const GemvArgs &a) { gemmPackedInt(b.ints, a, *p8); }},
        {"i4", [&](const GemvArgs &a) { gemmPackedInt(b.ints, a, *p4); }},
        {"mxfp4 int8 x",
         [&](const GemvArgs &a) { gemmPackedInt(b.ints, a, *pm); }}};
    auto pb = packFloatWeight(LLMC_BF16, wbf.data(), N, K);
    auto pf = packFloatWeight(LLMC_F32, wf.data(), N, K);
    paths.push_back({"bf16", [&](const GemvArgs &a) {
                       gemmPackedFloat(b.f32Tile, a, *pb);
                     }});
    paths.push_back({"f32", [&](const GemvArgs &a) {
                       gemmPackedFloat(b.f32Tile, a, *pf);
                     }});
    auto pp = packFloatWeight(LLMC_BF16, wbf.data(), N, K, true);
    if (b.bf16Tile)
      paths.push_back({"bf16 pairs", [&](const GemvArgs &a) {
                         gemmPackedBf16(b.bf16Tile, a, *pp);
                       }});
    paths.push_back({"bf16 per call", [&](const GemvArgs &a) {
                       gemmFloat(b.f32Tile, LLMC_BF16, a, wbf.data());
                     }});
    paths.push_back({"mxfp4", [&](const GemvArgs &a) {
                       gemmMxfp4(b.f32Tile, a, w4.data(), e8m0.data());
                     }});
    for (const Path &p : paths) {
      SCOPED_TRACE(p.name);
      std::vector<float> all(size_t(rows * N)), one(static_cast<size_t>(N));
      p.run({x.data(), rows, K, N, bias.data(), all.data()});
      int64_t differ = 0, firstRow = -1;
      for (int64_t r = 0; r < rows; ++r) {
        p.run({x.data() + r * K, 1, K, N, bias.data(), one.data()});
        for (int64_t n = 0; n < N; ++n)
          if (all[size_t(r * N + n)] != one[size_t(n)] && differ++ == 0)
            firstRow = r;
      }
      EXPECT_EQ(differ, 0) << "results differ from the row alone, first in "
                              "row "
                           << firstRow;
    }
  }
}

TEST(GemvLevels, CapFromTheEnvironment) {
  setenv("LLMC_CPU_ISA", "avx2", 1);
  EXPECT_EQ(selectIsa(), Isa::Avx2);
  setenv("LLMC_CPU_ISA", "amx", 1);
  EXPECT_EQ(selectIsa(), detectIsa()); // a cap above the CPU is the CPU
  setenv("LLMC_CPU_ISA", "avx1024", 1);
  EXPECT_THROW(selectIsa(), common::InvalidArgument);
  unsetenv("LLMC_CPU_ISA");
  EXPECT_EQ(selectIsa(), detectIsa());
}

} // namespace
} // namespace llmc::cpu
