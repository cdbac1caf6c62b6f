#include "llmc/weights/rope_permute.h"
#include "llmc/weights/tensor.h"

#include "llmc/support/half.h"
#include "test_util.h"

#include <cmath>
#include <cstring>
#include <random>

namespace llmc::weights::test {
namespace {

std::vector<float> randomFloats(size_t n, unsigned seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto &x : v)
    x = dist(rng);
  return v;
}

float blockScale(const uint8_t *block) {
  uint16_t h;
  std::memcpy(&h, block, 2);
  return f16ToFloat(h);
}

TEST(DType, NamesAndSizes) {
  EXPECT_STREQ(dtypeName(DType::BF16), "BF16");
  EXPECT_STREQ(dtypeName(DType::Q8_0), "Q8_0");
  EXPECT_EQ(dtypeBytes(DType::F32, 10), 40u);
  EXPECT_EQ(dtypeBytes(DType::Bool, 3), 3u);
  EXPECT_EQ(dtypeBytes(DType::Q8_0, 64), 68u);
  EXPECT_EQ(dtypeBytes(DType::Q4_0, 96), 54u);
  expectError([] { dtypeBytes(DType::Q4_0, 33); }, {"Q4_0", "33"});
  expectError([] { dtypeBytes(DType::F32, -1); }, {"negative"});
  expectError([] { dtypeBytes(DType::F64, int64_t{1} << 62); }, {"overflow"});
}

// x[j] = j - 16: hand-computed against ggml's reference formulas.
TEST(Quantize, KnownBlock) {
  float x[32];
  for (int j = 0; j < 32; ++j)
    x[j] = static_cast<float>(j - 16);
  uint8_t q8[34];
  quantizeQ8_0(x, 32, q8);
  EXPECT_EQ(blockScale(q8), f16ToFloat(floatToF16(16.0f / 127.0f)));
  EXPECT_EQ(static_cast<int8_t>(q8[2]), -127);     // -16 * 127/16
  EXPECT_EQ(static_cast<int8_t>(q8[2 + 31]), 119); // round(15 * 7.9375)
  EXPECT_EQ(static_cast<int8_t>(q8[2 + 16]), 0);
  uint8_t q4[18];
  quantizeQ4_0(x, 32, q4);
  EXPECT_EQ(blockScale(q4), 2.0f); // max = -16 -> d = -16 / -8
  EXPECT_EQ(q4[2], 0x80);          // x=-16 -> 0, x=0 -> 8
  EXPECT_EQ(q4[2 + 15], 0xf8);     // x=-1 -> 8, x=15 -> 16 clamped to 15
  float back[32];
  dequantizeQ4_0(q4, 32, back);
  EXPECT_EQ(back[0], -16.0f);
  EXPECT_EQ(back[31], 14.0f);
}

TEST(Quantize, ZeroBlock) {
  float x[32] = {};
  uint8_t q8[34], q4[18];
  quantizeQ8_0(x, 32, q8);
  quantizeQ4_0(x, 32, q4);
  EXPECT_EQ(blockScale(q8), 0.0f);
  for (int j = 0; j < 16; ++j)
    EXPECT_EQ(q4[2 + j], 0x88);
}

TEST(Quantize, RoundTripErrorBounds) {
  const int64_t n = 32 * 256;
  auto x = randomFloats(n, 7, 0.05f);
  std::vector<uint8_t> q8(dtypeBytes(DType::Q8_0, n)),
      q4(dtypeBytes(DType::Q4_0, n));
  quantizeQ8_0(x.data(), n, q8.data());
  quantizeQ4_0(x.data(), n, q4.data());
  TensorRef t8{"q8", DType::Q8_0, {n}, q8.data(), q8.size(), "mem"};
  TensorRef t4{"q4", DType::Q4_0, {n}, q4.data(), q4.size(), "mem"};
  std::vector<float> y8(n), y4(n);
  toFloat32(t8, y8.data());
  toFloat32(t4, y4.data());
  for (int64_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (int j = 0; j < 32; ++j)
      amax = std::max(amax, std::fabs(x[b * 32 + j]));
    float d8 = std::fabs(blockScale(&q8[b * 34]));
    float d4 = std::fabs(blockScale(&q4[b * 18]));
    EXPECT_NEAR(d8, amax / 127, amax * 1e-3f);
    EXPECT_NEAR(d4, amax / 8, amax * 1e-3f);
    for (int j = 0; j < 32; ++j) {
      int64_t i = b * 32 + j;
      // Half a step, plus slack for the f16 rounding of the scale.
      ASSERT_LE(std::fabs(y8[i] - x[i]), 0.5f * d8 + amax * 1e-3f) << i;
      // Q4_0 clamps the extreme opposite the max to 7 steps: a full step.
      ASSERT_LE(std::fabs(y4[i] - x[i]), d4 + amax * 1e-3f) << i;
    }
  }
}

// A Q4_0 block requantized by llmc's int4 (groups of 32) gets ggml's own
// scale and integers back; anything else keeps max|x| / 7.
TEST(Quantize, Int4ScaleOfAQ4_0BlockIsItsOwn) {
  const int64_t n = 32 * 64;
  auto x = randomFloats(n, 11, 0.05f);
  std::vector<uint8_t> q4(dtypeBytes(DType::Q4_0, n));
  quantizeQ4_0(x.data(), n, q4.data());
  std::vector<float> y(n);
  dequantizeQ4_0(q4.data(), n, y.data());
  int negative = 0;
  for (int64_t b = 0; b < n / 32; ++b) {
    const float d = blockScale(&q4[b * 18]);
    negative += d < 0;
    const float s = symmetricScale(&y[b * 32], 32, true);
    ASSERT_EQ(s, d) << "block " << b;
    for (int j = 0; j < 16; ++j) {
      const uint8_t byte = q4[b * 18 + 2 + j];
      ASSERT_EQ(y[b * 32 + j] / s, float((byte & 0xf) - 8));
      ASSERT_EQ(y[b * 32 + j + 16] / s, float((byte >> 4) - 8));
    }
  }
  EXPECT_GT(negative, 0); // both signs of d were seen
  float amax = 0;
  for (int j = 0; j < 32; ++j)
    amax = std::max(amax, std::fabs(x[j]));
  EXPECT_EQ(symmetricScale(x.data(), 32, true), amax / 7);
  EXPECT_EQ(symmetricScale(x.data(), 32, false), amax / 127);
  std::vector<float> zeros(32, 0.0f);
  EXPECT_EQ(symmetricScale(zeros.data(), 32, true), 1.0f);
}

TEST(Quantize, RejectsPartialBlocks) {
  float x[40] = {};
  uint8_t out[64];
  expectError([&] { quantizeQ8_0(x, 40, out); }, {"40", "multiple of 32"});
  expectError([&] { quantizeQ4_0(x, 31, out); }, {"31"});
}

TEST(ToFloat, F16AndSizeMismatch) {
  uint16_t h[2] = {floatToF16(1.5f), floatToF16(-0.25f)};
  TensorRef t{"h", DType::F16, {2}, reinterpret_cast<uint8_t *>(h), 4, "f"};
  float out[2];
  toFloat32(t, out);
  EXPECT_EQ(out[0], 1.5f);
  EXPECT_EQ(out[1], -0.25f);
  t.nbytes = 2;
  expectError([&] { toFloat32(t, out); }, {"'h'", "2 bytes", "expected 4"});
}

TEST(RopePermute, MatchesNumpyDefinitionAndInverts) {
  // rows = 2 heads * 4; row r of the result is row perm[r] of the input:
  // reshape(2, 2, 2).swapaxes(1, 2) -> per head [0, 2, 1, 3].
  const int64_t rows = 8, cols = 3;
  std::vector<float> w(rows * cols);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>(i);
  std::vector<float> p(w.size()), back(w.size());
  permuteGGUFRope(w.data(), p.data(), rows, cols, 2);
  const int perm[rows] = {0, 2, 1, 3, 4, 6, 5, 7};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      EXPECT_EQ(p[r * cols + c], w[perm[r] * cols + c]);
  unpermuteGGUFRope(p.data(), back.data(), rows, cols, 2);
  EXPECT_EQ(back, w);

  // A realistic size, bytes API (as for quantized rows).
  auto big = randomFloats(128 * 64, 3, 1.0f);
  std::vector<float> bp(big.size()), bb(big.size());
  permuteGGUFRope(big.data(), bp.data(), 128, 64, 8);
  EXPECT_NE(bp, big);
  unpermuteGGUFRope(reinterpret_cast<const uint8_t *>(bp.data()),
                    reinterpret_cast<uint8_t *>(bb.data()), 128, 64 * 4, 8);
  EXPECT_EQ(bb, big);
  expectError([&] { permuteGGUFRope(w.data(), p.data(), 6, cols, 2); },
              {"6 rows", "2 heads"});
}

} // namespace
} // namespace llmc::weights::test
