//===- kernels_elementwise.cpp - Pointwise ops, slices and row picks
//-------===//
#include "ref.h"

#include "common/moe.h"

#include <cmath>
#include <cstring>

namespace llmc::ref {
namespace {

float silu(float x) { return x / (1.0f + std::exp(-x)); }

// GPT-2's gelu_new (tanh) and torch.nn.GELU() (erf).
float gelu(float x, bool tanhApprox) {
  if (tanhApprox) {
    const float k = 0.7978845608028654f; // sqrt(2 / pi)
    return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
  }
  return 0.5f * x * (1.0f + std::erf(x * 0.7071067811865476f));
}

float softcap(float x, float cap) { return cap * std::tanh(x / cap); }

template <typename F> void binary(const llmc_op_desc &op, Step &step, F f) {
  Matrix a = step.operand(op, 0), b = step.operand(op, 1);
  Matrix out = step.result(op, 0);
  expectRows(b, a.rows, "operand 1");
  expectRows(out, a.rows, "the result");
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t c = 0; c < a.cols; ++c)
      out.row(r)[c] = f(a.row(r)[c], b.row(r)[c]);
}

template <typename F> void unary(const llmc_op_desc &op, Step &step, F f) {
  Matrix x = step.operand(op, 0), out = step.result(op, 0);
  expectRows(out, x.rows, "the result");
  for (int64_t r = 0; r < x.rows; ++r)
    for (int64_t c = 0; c < x.cols; ++c)
      out.row(r)[c] = f(x.row(r)[c]);
}

} // namespace

// ADD, MUL: a and b of one shape.
void runAdd(const llmc_op_desc &op, Step &step) {
  binary(op, step, [](float a, float b) { return a + b; });
}

void runMul(const llmc_op_desc &op, Step &step) {
  binary(op, step, [](float a, float b) { return a * b; });
}

// SILU, GELU (i0 = 1: tanh approximation).
void runSilu(const llmc_op_desc &op, Step &step) { unary(op, step, silu); }

void runGelu(const llmc_op_desc &op, Step &step) {
  bool tanhApprox = op.i[0] == 1;
  unary(op, step, [=](float x) { return gelu(x, tanhApprox); });
}

// SWIGLU: [rows, 2I] -> [rows, I], act(gate) * up with gate first; i0 = 1
// takes the tanh GELU (GeGLU), 2 gpt-oss's clamped unit; i1 = g runs of
// [2I] per row (one per expert); i2 = 1: gate and up interleaved.
void runSwiglu(const llmc_op_desc &op, Step &step) {
  Matrix x = step.operand(op, 0), out = step.result(op, 0);
  expectRows(out, x.rows, "the result");
  const int64_t act = op.i[0];
  const int64_t runs = common::gatedRuns(op), width = out.cols / runs;
  // Interleaved (i2): gate c at column 2c, up c at 2c + 1.
  const int64_t stride = op.i[2] == 1 ? 2 : 1, upAt = op.i[2] == 1 ? 1 : width;
  const float limit = float(op.f[0]), alpha = float(op.f[1]);
  for (int64_t r = 0; r < x.rows * runs; ++r) {
    const float *in = x.data + r * 2 * width;
    float *y = out.data + r * width;
    for (int64_t c = 0; c < width; ++c) {
      const float gate = in[c * stride], up = in[c * stride + upAt];
      y[c] = act == 2   ? common::clampedSwiglu(gate, up, limit, alpha)
             : act == 1 ? gelu(gate, true) * up
                        : silu(gate) * up;
    }
  }
}

// SCALE: out = x * f0.
void runScale(const llmc_op_desc &op, Step &step) {
  const float f = float(op.f[0]);
  unary(op, step, [=](float x) { return x * f; });
}

// SOFTCAP: out = f0 * tanh(x / f0).
void runSoftcap(const llmc_op_desc &op, Step &step) {
  const float cap = float(op.f[0]);
  unary(op, step, [=](float x) { return softcap(x, cap); });
}

// SLICE: out = x[:, i0 : i0 + out.cols].
void runSlice(const llmc_op_desc &op, Step &step) {
  Matrix x = step.operand(op, 0), out = step.result(op, 0);
  expectRows(out, x.rows, "the result");
  for (int64_t r = 0; r < x.rows; ++r)
    std::memcpy(out.row(r), x.row(r) + op.i[0], size_t(out.cols) * 4);
}

// TAKE_ROWS: out[i] = x[logits_rows[i]] for the step's num_logits rows; the
// result may have more rows (say B) than a step asks for, and those stay 0.
void runTakeRows(const llmc_op_desc &op, Step &step) {
  Matrix x = step.operand(op, 0), out = step.result(op, 0);
  int64_t n = step.args.num_logits;
  if (n > out.rows)
    throw InvalidArgument("num_logits " + std::to_string(n) +
                          " exceeds the result's " + std::to_string(out.rows) +
                          " rows");
  std::memset(out.data, 0, size_t(out.rows * out.cols) * 4);
  for (int64_t i = 0; i < n; ++i) {
    int32_t row = step.args.logits_rows[i];
    if (row >= x.rows)
      throw InvalidArgument("logits_rows[" + std::to_string(i) + "] = " +
                            std::to_string(row) + " is not a row of x");
    std::memcpy(out.row(i), x.row(row), size_t(x.cols) * 4);
  }
}

} // namespace llmc::ref
