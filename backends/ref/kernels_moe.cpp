//===- kernels_moe.cpp - Routing, the chosen experts, their weighted sum --===//
//
// Token by token, as transformers' MoE blocks read: each row picks its k
// experts (common::routeTopK), each run j of the row multiplies its input by
// expert e_j's weight only, and the runs are summed with their weights.
//
//===----------------------------------------------------------------------===//
#include "ref.h"

#include "common/moe.h"
#include "common/op_checks.h"

namespace llmc::ref {

// MOE_GATING: logits [rows, E] -> weights, experts [rows, k].
void runMoeGating(const llmc_op_desc &op, Step &step) {
  Matrix logits = step.operand(op, 0);
  Matrix weights = step.result(op, 0), experts = step.result(op, 1);
  expectRows(weights, logits.rows, "the weights");
  expectRows(experts, logits.rows, "the experts");
  const int64_t k = op.i[0];
  for (int64_t t = 0; t < logits.rows; ++t)
    common::routeTopK(logits.row(t), logits.cols, k, op.i[1] == 1, op.i[2],
                      weights.row(t), experts.ids() + t * k);
}

// EXPERT_LINEAR: run j of row t = x_j · W[experts[t][j]]ᵀ.
void runExpertLinear(const llmc_op_desc &op, Step &step) {
  const common::ExpertShape s = common::expertShape(op, step.graph);
  Matrix x = step.operand(op, common::LinearX), out = step.result(op, 0);
  Matrix experts = step.operand(op, 3);
  expectRows(out, x.rows, "the result");
  expectRows(experts, x.rows, "the experts");
  const WeightRows w(op, step);
  std::vector<float> wrow(size_t(s.K));
  for (int64_t t = 0; t < x.rows; ++t)
    for (int64_t j = 0; j < s.k; ++j) {
      const int32_t e = common::expertAt(experts.ids(), s.k, t, j, s.experts);
      const float *in = x.row(t) + (s.perRun ? j * s.K : 0);
      float *y = out.row(t) + j * s.N;
      for (int64_t n = 0; n < s.N; ++n) {
        w.row(e * s.N + n, s.K, wrow.data());
        y[n] = dot(in, wrow.data(), s.K);
      }
    }
}

// MOE_COMBINE: out[t] = sum_j weights[t][j] * y[t, run j].
void runMoeCombine(const llmc_op_desc &op, Step &step) {
  Matrix y = step.operand(op, 0), weights = step.operand(op, 1);
  Matrix out = step.result(op, 0);
  expectRows(weights, y.rows, "the weights");
  expectRows(out, y.rows, "the result");
  const int64_t k = op.i[0], N = out.cols;
  for (int64_t t = 0; t < y.rows; ++t)
    for (int64_t n = 0; n < N; ++n) {
      float sum = 0.0f;
      for (int64_t j = 0; j < k; ++j)
        sum += weights.row(t)[j] * y.row(t)[j * N + n];
      out.row(t)[n] = sum;
    }
}

} // namespace llmc::ref

namespace llmc::ref {

// EXPERT_BIAS: run j of row t += bias[experts[t][j]].
void runExpertBias(const llmc_op_desc &op, Step &step) {
  Matrix y = step.operand(op, 0), experts = step.operand(op, 2);
  Matrix out = step.result(op, 0);
  expectRows(out, y.rows, "the result");
  expectRows(experts, y.rows, "the experts");
  const llmc_weight_desc &bias = step.weight(op, 1);
  const int64_t k = op.i[0], N = y.cols / k, E = bias.shape[0];
  std::vector<float> b(static_cast<size_t>(N));
  for (int64_t t = 0; t < y.rows; ++t)
    for (int64_t j = 0; j < k; ++j) {
      const int32_t e = common::expertAt(experts.ids(), k, t, j, E);
      loadWeight(bias, e * N, N, b.data());
      for (int64_t n = 0; n < N; ++n)
        out.row(t)[j * N + n] = y.row(t)[j * N + n] + b[size_t(n)];
    }
}

} // namespace llmc::ref
