//===- ref_linear_test.cpp - ref's LINEAR over every weight format
//---------===//
#include "op_graph.h"

#include <gtest/gtest.h>

namespace llmc::testing {
namespace {

struct LinearCase {
  llmc_dtype dtype;
  int64_t rows, k, n, group;
  bool bias;
};

std::string describe(const LinearCase &c) {
  return "dtype " + std::to_string(c.dtype) + " rows " +
         std::to_string(c.rows) + " K " + std::to_string(c.k) + " N " +
         std::to_string(c.n) + " group " + std::to_string(c.group) +
         (c.bias ? " +bias" : "");
}

TEST(RefLinear, EveryWeightFormatMatchesDequantizedDoubleMath) {
  BackendInstance backend = openBackend("ref");
  std::mt19937 rng(7);
  const LinearCase cases[] = {
      {LLMC_F32, 3, 64, 24, 0, false}, {LLMC_F32, 1, 33, 5, 0, true},
      {LLMC_BF16, 4, 64, 16, 0, true}, {LLMC_F16, 2, 96, 8, 0, false},
      {LLMC_I8, 3, 64, 12, 64, false}, {LLMC_I8, 5, 256, 7, 256, true},
      {LLMC_I4, 3, 64, 12, 32, false}, {LLMC_I4, 2, 256, 9, 128, true},
      {LLMC_I4, 1, 256, 4, 32, true},
  };
  for (const LinearCase &c : cases) {
    SCOPED_TRACE(describe(c));
    auto x = randomVector(rng, size_t(c.rows * c.k), -2, 2);
    auto w = randomVector(rng, size_t(c.n * c.k));
    auto bias = randomVector(rng, size_t(c.n));
    OpGraph g;
    uint32_t xi = g.feed(x, c.k), out = g.buffer(rowsT(), c.n);
    llmc_operand scales = none(), b = none();
    std::vector<float> effective; // what W means after storage
    if (c.dtype == LLMC_I8 || c.dtype == LLMC_I4) {
      Quantized q = quantize(c.dtype, w, c.n, c.k, c.group);
      int64_t cols = c.dtype == LLMC_I8 ? c.k : c.k / 2;
      uint32_t wi = g.weight(c.dtype, {c.n, cols}, q.bytes);
      scales = wt(g.weight(LLMC_F32, {c.n, c.k / c.group}, q.scales));
      effective = q.dequantized;
      if (c.bias)
        b = wt(g.weight(LLMC_F32, {c.n}, bias));
      g.add(makeOp(LLMC_OP_LINEAR, {buf(xi), wt(wi), scales, b}, {out},
                   {c.group}));
    } else {
      for (float v : w)
        effective.push_back(roundTo(c.dtype, v));
      uint32_t wi = g.weight(c.dtype, {c.n, c.k}, w);
      if (c.bias)
        b = wt(g.weight(LLMC_F32, {c.n}, bias));
      g.add(makeOp(LLMC_OP_LINEAR, {buf(xi), wt(wi), scales, b}, {out}));
    }
    StepData step = StepData::simple(int32_t(c.rows), int32_t(c.rows));
    auto got = runGraph(backend, g, out, step);
    std::vector<double> want(size_t(c.rows * c.n));
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t n = 0; n < c.n; ++n) {
        double sum = c.bias ? bias[n] : 0.0;
        for (int64_t k = 0; k < c.k; ++k)
          sum += double(x[r * c.k + k]) * effective[n * c.k + k];
        want[r * c.n + n] = sum;
      }
    EXPECT_LT(maxRelativeError(got, want), 5e-6);
  }
}

TEST(RefLinear, Int4NibblesAreSignedLowFirst) {
  // One row, K = 4: bytes 0x8F, 0x71 hold -1, -8, 1, 7 (low nibble first).
  BackendInstance backend = openBackend("ref");
  OpGraph g;
  uint32_t xi = g.feed({1.0f, 10.0f, 100.0f, 1000.0f}, 4);
  uint32_t wi = g.weight(LLMC_I4, {1, 2}, std::vector<uint8_t>{0x8f, 0x71});
  uint32_t si = g.weight(LLMC_F32, {1, 2}, std::vector<float>{0.5f, 2.0f});
  uint32_t out = g.buffer(rowsT(), 1);
  g.add(makeOp(LLMC_OP_LINEAR, {buf(xi), wt(wi), wt(si), none()}, {out}, {2}));
  StepData step = StepData::simple(1, 1);
  auto got = runGraph(backend, g, out, step);
  // (-1 * 1 + -8 * 10) * 0.5 + (1 * 100 + 7 * 1000) * 2
  EXPECT_EQ(got.at(0), -40.5f + 14200.0f);
}

} // namespace
} // namespace llmc::testing
