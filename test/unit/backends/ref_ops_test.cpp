//===- ref_ops_test.cpp - ref's pointwise, norm and lookup ops vs doubles
//--===//
#include "op_graph.h"

#include <gtest/gtest.h>

#include <cmath>

namespace llmc::testing {
namespace {

constexpr double kTol = 2e-6;

class RefOps : public ::testing::Test {
protected:
  BackendInstance backend = openBackend("ref");
  std::mt19937 rng{1234};
};

std::vector<double> rmsNormRef(const std::vector<float> &x,
                               const std::vector<float> &w, int64_t cols,
                               double eps) {
  std::vector<double> out(x.size());
  for (size_t r = 0; r < x.size() / cols; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < cols; ++i)
      ss += double(x[r * cols + i]) * x[r * cols + i];
    double inv = 1.0 / std::sqrt(ss / cols + eps);
    for (int64_t i = 0; i < cols; ++i)
      out[r * cols + i] = x[r * cols + i] * inv * w[i];
  }
  return out;
}

std::vector<float> rounded(llmc_dtype dtype, std::vector<float> v) {
  for (float &x : v)
    x = roundTo(dtype, x);
  return v;
}

TEST_F(RefOps, RmsNormEveryWeightDtypeAndShape) {
  for (llmc_dtype dtype : {LLMC_F32, LLMC_BF16, LLMC_F16}) {
    for (auto [rows, cols] : {std::pair{1, 8}, {5, 64}, {3, 1000}}) {
      SCOPED_TRACE(::testing::Message()
                   << "dtype " << dtype << " " << rows << "x" << cols);
      auto x = randomVector(rng, size_t(rows * cols), -3, 3);
      auto w = rounded(dtype, randomVector(rng, size_t(cols), 0.5, 1.5));
      OpGraph g;
      uint32_t in = g.feed(x, cols);
      uint32_t wi = g.weight(dtype, {cols}, w);
      uint32_t out = g.buffer(rowsT(), cols);
      g.add(makeOp(LLMC_OP_RMS_NORM, {buf(in), wt(wi)}, {out}, {}, {1e-5}));
      StepData step = StepData::simple(rows, rows);
      auto got = runGraph(backend, g, out, step);
      EXPECT_LT(maxRelativeError(got, rmsNormRef(x, w, cols, 1e-5)), kTol);
    }
  }
}

TEST_F(RefOps, AddRmsNormReturnsSumAndNormed) {
  int rows = 4, cols = 48;
  auto x = randomVector(rng, size_t(rows * cols));
  auto r = randomVector(rng, size_t(rows * cols));
  auto w = randomVector(rng, size_t(cols), 0.5, 1.5);
  std::vector<float> sum(x.size());
  std::vector<double> sumRef(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    sum[i] = x[i] + r[i];
    sumRef[i] = sum[i];
  }
  for (int which = 0; which < 2; ++which) {
    OpGraph g;
    uint32_t xi = g.feed(x, cols), ri = g.feed(r, cols);
    uint32_t wi = g.weight(LLMC_F32, {cols}, w);
    uint32_t s = g.buffer(rowsT(), cols), n = g.buffer(rowsT(), cols);
    g.add(makeOp(LLMC_OP_ADD_RMS_NORM, {buf(xi), buf(ri), wt(wi)}, {s, n}, {},
                 {1e-6}));
    StepData step = StepData::simple(rows, rows);
    auto got = runGraph(backend, g, which == 0 ? s : n, step);
    auto want = which == 0 ? sumRef : rmsNormRef(sum, w, cols, 1e-6);
    EXPECT_LT(maxRelativeError(got, want), kTol) << "result " << which;
  }
}

TEST_F(RefOps, LayerNormUsesBiasedVariance) {
  for (llmc_dtype dtype : {LLMC_F32, LLMC_BF16}) {
    int rows = 3, cols = 40;
    auto x = randomVector(rng, size_t(rows * cols), -2, 4);
    auto w = rounded(dtype, randomVector(rng, size_t(cols), 0.5, 1.5));
    auto b = rounded(dtype, randomVector(rng, size_t(cols)));
    OpGraph g;
    uint32_t xi = g.feed(x, cols);
    uint32_t wi = g.weight(dtype, {cols}, w), bi = g.weight(dtype, {cols}, b);
    uint32_t out = g.buffer(rowsT(), cols);
    g.add(makeOp(LLMC_OP_LAYER_NORM, {buf(xi), wt(wi), wt(bi)}, {out}, {},
                 {1e-5}));
    StepData step = StepData::simple(rows, rows);
    auto got = runGraph(backend, g, out, step);
    std::vector<double> want(x.size());
    for (int r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int i = 0; i < cols; ++i)
        mean += x[r * cols + i];
      mean /= cols;
      for (int i = 0; i < cols; ++i)
        var += (x[r * cols + i] - mean) * (x[r * cols + i] - mean);
      var /= cols;
      for (int i = 0; i < cols; ++i)
        want[r * cols + i] =
            (x[r * cols + i] - mean) / std::sqrt(var + 1e-5) * w[i] + b[i];
    }
    EXPECT_LT(maxRelativeError(got, want), kTol) << "dtype " << dtype;
  }
}

// Runs a one-operand op over x [rows, cols] and compares with f(x).
template <typename F>
void checkUnary(const BackendInstance &backend, std::mt19937 &rng,
                llmc_op_kind kind, int64_t attr, F f) {
  int rows = 3, cols = 37;
  auto x = randomVector(rng, size_t(rows * cols), -6, 6);
  OpGraph g;
  uint32_t xi = g.feed(x, cols), out = g.buffer(rowsT(), cols);
  g.add(makeOp(kind, {buf(xi)}, {out}, {attr}));
  StepData step = StepData::simple(rows, rows);
  auto got = runGraph(backend, g, out, step);
  std::vector<double> want(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    want[i] = f(double(x[i]));
  EXPECT_LT(maxRelativeError(got, want), kTol) << "kind " << kind;
}

TEST_F(RefOps, SiluAndBothGelus) {
  checkUnary(backend, rng, LLMC_OP_SILU, 0,
             [](double x) { return x / (1 + std::exp(-x)); });
  checkUnary(backend, rng, LLMC_OP_GELU, 0, [](double x) {
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  });
  checkUnary(backend, rng, LLMC_OP_GELU, 1, [](double x) {
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  });
}

TEST_F(RefOps, AddAndMul) {
  int rows = 4, cols = 19;
  auto a = randomVector(rng, size_t(rows * cols));
  auto b = randomVector(rng, size_t(rows * cols));
  for (llmc_op_kind kind : {LLMC_OP_ADD, LLMC_OP_MUL}) {
    OpGraph g;
    uint32_t ai = g.feed(a, cols), bi = g.feed(b, cols);
    uint32_t out = g.buffer(rowsT(), cols);
    g.add(makeOp(kind, {buf(ai), buf(bi)}, {out}));
    StepData step = StepData::simple(rows, rows);
    auto got = runGraph(backend, g, out, step);
    std::vector<double> want(a.size());
    for (size_t i = 0; i < a.size(); ++i)
      want[i] = kind == LLMC_OP_ADD ? double(a[i]) + b[i] : double(a[i]) * b[i];
    EXPECT_LT(maxRelativeError(got, want), kTol);
  }
}

TEST_F(RefOps, SwigluTakesTheGateFirst) {
  int rows = 2, inter = 24;
  auto x = randomVector(rng, size_t(rows * 2 * inter), -4, 4);
  OpGraph g;
  uint32_t xi = g.feed(x, 2 * inter), out = g.buffer(rowsT(), inter);
  g.add(makeOp(LLMC_OP_SWIGLU, {buf(xi)}, {out}));
  StepData step = StepData::simple(rows, rows);
  auto got = runGraph(backend, g, out, step);
  std::vector<double> want(size_t(rows * inter));
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < inter; ++i) {
      double gate = x[r * 2 * inter + i], up = x[r * 2 * inter + inter + i];
      want[r * inter + i] = gate / (1 + std::exp(-gate)) * up;
    }
  EXPECT_LT(maxRelativeError(got, want), kTol);
}

TEST_F(RefOps, SliceAndTakeRows) {
  int rows = 5, cols = 30, from = 7, width = 11;
  auto x = randomVector(rng, size_t(rows * cols));
  OpGraph g;
  uint32_t xi = g.feed(x, cols), s = g.buffer(rowsT(), width);
  uint32_t picked = g.buffer(rowsB(), width);
  g.add(makeOp(LLMC_OP_SLICE, {buf(xi)}, {s}, {from}));
  g.add(makeOp(LLMC_OP_TAKE_ROWS, {buf(s)}, {picked}));
  StepData step = StepData::simple(rows, 2);
  step.logitsRows = {4, 1};
  // Two sequences so that the result (rows = B) has room for two rows.
  step.numSeqs = 2;
  step.queryStart = {0, 3, 5};
  step.contextLens = {3, 2};
  auto got = runGraph(backend, g, picked, step);
  std::vector<double> want;
  for (int r : {4, 1})
    for (int c = 0; c < width; ++c)
      want.push_back(x[r * cols + from + c]);
  EXPECT_LT(maxRelativeError(got, want), 0.0 + 1e-12);
}

TEST_F(RefOps, EmbeddingByTokensOrPositionsInEveryDtype) {
  int vocab = 11, dim = 6;
  for (llmc_dtype dtype : {LLMC_F32, LLMC_BF16, LLMC_F16}) {
    auto table = rounded(dtype, randomVector(rng, size_t(vocab * dim)));
    for (llmc_operand ids : {tokensInput(), positionsInput()}) {
      OpGraph g;
      uint32_t ti = g.weight(dtype, {vocab, dim}, table);
      uint32_t out = g.buffer(rowsT(), dim);
      g.add(makeOp(LLMC_OP_EMBEDDING, {wt(ti), ids}, {out}));
      StepData step = StepData::simple(3, 3);
      step.tokens = {10, 0, 4};
      step.positions = {2, 3, 9};
      auto got = runGraph(backend, g, out, step);
      std::vector<double> want;
      for (int32_t id : ids.index == 0 ? step.tokens : step.positions)
        for (int c = 0; c < dim; ++c)
          want.push_back(table[id * dim + c]);
      EXPECT_EQ(maxRelativeError(got, want), 0.0) << "dtype " << dtype;
    }
  }
}

// Hugging Face's rotary embedding, with the angle rounded to f32 as HF
// computes it (inv_freq f32 * position f32) and the rest in double.
std::vector<double> ropeRef(const std::vector<float> &x,
                            const std::vector<int32_t> &pos,
                            const std::vector<float> &invFreq, int heads,
                            int headDim, int rot, bool interleaved,
                            double scaling) {
  std::vector<double> out(x.begin(), x.end());
  for (size_t t = 0; t < pos.size(); ++t)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < rot / 2; ++i) {
        float angle = float(pos[t]) * invFreq[i];
        double c = std::cos(double(angle)) * scaling;
        double s = std::sin(double(angle)) * scaling;
        size_t base = t * heads * headDim + h * headDim;
        size_t a = base + (interleaved ? 2 * i : i);
        size_t b = base + (interleaved ? 2 * i + 1 : i + rot / 2);
        out[a] = x[a] * c - double(x[b]) * s;
        out[b] = x[b] * c + double(x[a]) * s;
      }
  return out;
}

TEST_F(RefOps, RopeHalfAndInterleavedPartialAndScaled) {
  int heads = 3, headDim = 16;
  std::vector<int32_t> positions = {0, 7, 1000, 3, 65535};
  for (int style : {0, 1}) {
    for (int rot : {16, 8}) {
      for (double scaling : {1.0, 1.25}) {
        SCOPED_TRACE(::testing::Message() << "style " << style << " rot " << rot
                                          << " scaling " << scaling);
        std::vector<float> invFreq(size_t(rot / 2));
        for (int i = 0; i < rot / 2; ++i)
          invFreq[i] = float(1.0 / std::pow(10000.0, 2.0 * i / rot));
        int T = int(positions.size());
        auto x = randomVector(rng, size_t(T * heads * headDim));
        OpGraph g;
        uint32_t xi = g.feed(x, heads * headDim);
        uint32_t fi = g.weight(LLMC_F32, {rot / 2}, invFreq);
        // In place, as the ABI allows.
        g.add(makeOp(LLMC_OP_ROPE, {buf(xi), positionsInput(), wt(fi)}, {xi},
                     {heads, headDim, rot, style}, {scaling}));
        StepData step = StepData::simple(T, T);
        step.positions = positions;
        auto got = runGraph(backend, g, xi, step);
        EXPECT_LT(
            maxRelativeError(got, ropeRef(x, positions, invFreq, heads, headDim,
                                          rot, style == 1, scaling)),
            kTol);
      }
    }
  }
}

TEST_F(RefOps, PlannedWorkspacePlacesBuffersAtTheirOffsets) {
  // x at 0, y after x: both [T, 8] f32, so x takes 32*T bytes.
  int rows = 3, cols = 8;
  auto x = randomVector(rng, size_t(rows * cols));
  OpGraph g;
  uint32_t xi = g.feed(x, cols), y = g.buffer(rowsT(), cols);
  g.add(makeOp(LLMC_OP_SILU, {buf(xi)}, {y}));
  g.bufferDesc(y).offset_t = 32;
  llmc_graph_desc desc = g.desc(y);
  desc.workspace_t = 64;
  PreparedGraph prepared = backend.prepare(desc);
  StepData step = StepData::simple(rows, rows);
  llmc_step_args args = step.args(cols);
  backend.execute(prepared, nullptr, args);
  std::vector<double> want(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    want[i] = x[i] / (1 + std::exp(-double(x[i])));
  EXPECT_LT(maxRelativeError(step.logits, want), kTol);

  // A workspace too small for the plan is an error, not an overflow.
  desc.workspace_t = 48;
  PreparedGraph small = backend.prepare(desc);
  args = step.args(cols);
  EXPECT_THROW(backend.execute(small, nullptr, args), BackendError);
}

} // namespace
} // namespace llmc::testing
