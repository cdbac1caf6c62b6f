//===- op_checks.cpp - What prepare checks of each op ---------------------===//
#include "common/op_checks.h"

#include <cmath>

namespace llmc::common {

// EMBEDDING: out[t] = table[ids[t]], ids being the step's tokens or
// positions (GPT-2's learned position table uses the latter).
// An i8 table takes a third operand, its f32 scales [vocab, dim / group],
// with i0 = group.
void checkEmbedding(const llmc_op_desc &op, const Graph &g) {
  const bool quantized = op.num_operands == 3;
  expectArity(op, g, quantized ? 3 : 2, 1);
  const llmc_weight_desc &table = expectWeight(op, g, 0);
  expectInput(op, 1);
  if (table.rank != 2)
    throw InvalidArgument("the table must be [vocab, dim]");
  const int64_t vocab = table.shape[0], dim = table.shape[1];
  if (isKQuant(table.dtype)) {
    const kquant::Layout l = kquant::layout(kquantFormat(table.dtype));
    if (!quantized || op.i[0] != kquant::kBlock || dim % kquant::kBlock)
      throw InvalidArgument(std::string(l.ggml) +
                            " tables take headers (operand 2), group 256 "
                            "(i0) and a width of whole 256-blocks");
    const int64_t blocks = dim / kquant::kBlock;
    if (int64_t(table.nbytes) < vocab * blocks * l.codeBytes)
      throw InvalidArgument("the " + std::string(l.ggml) +
                            " table is truncated");
    expectCols(resultDesc(op, g, 0).cols, dim, "the result");
    const llmc_weight_desc &s = expectWeight(op, g, 2);
    if (s.dtype != LLMC_KQ_HEADER ||
        weightElements(s) != vocab * blocks * l.headerBytes ||
        int64_t(s.nbytes) < vocab * blocks * l.headerBytes)
      throw InvalidArgument("the " + std::string(l.ggml) +
                            " table's headers must be kq_header [" +
                            std::to_string(vocab) + ", " +
                            std::to_string(blocks * l.headerBytes) + "]");
    return;
  }
  if (quantized) {
    int64_t group = op.i[0];
    if (table.dtype != LLMC_I8)
      throw InvalidArgument("a table with scales must be i8");
    if (int64_t(table.nbytes) < vocab * dim)
      throw InvalidArgument("the table is truncated");
    if (group <= 0 || dim % group != 0)
      throw InvalidArgument("group size " + std::to_string(group) +
                            " does not divide the table width " +
                            std::to_string(dim));
    const llmc_weight_desc &s = expectWeight(op, g, 2);
    if (s.dtype != LLMC_F32)
      throw InvalidArgument("the scales must be f32");
    expectFloatWeight(s, vocab * (dim / group), "the scales");
  } else {
    expectFloatWeight(table, vocab * dim, "the table");
  }
  expectCols(resultDesc(op, g, 0).cols, dim, "the result");
}

int64_t rmsNormWidth(const llmc_op_desc &op, int64_t cols) {
  const int64_t width = op.i[0] == 0 ? cols : op.i[0];
  if (width <= 0 || cols % width != 0)
    throw InvalidArgument("RMS_NORM: the width i0 (" + std::to_string(op.i[0]) +
                          ") must be positive and divide the row (" +
                          std::to_string(cols) + " columns)");
  return width;
}

// RMS_NORM. in: x, w. f0 = eps, i0 = width (0: the row).
void checkRmsNorm(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 2, 1);
  int64_t n = expectBuffer(op, g, 0).cols;
  int64_t width = rmsNormWidth(op, n);
  expectFloatWeight(expectWeight(op, g, 1), width, "the weight");
  expectCols(resultDesc(op, g, 0).cols, n, "the result");
}

// ADD_RMS_NORM. in: x, r, w. out: sum = x + r, normed = rms_norm(sum) * w.
void checkAddRmsNorm(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 3, 2);
  int64_t n = expectBuffer(op, g, 0).cols;
  expectCols(expectBuffer(op, g, 1).cols, n, "the residual");
  expectFloatWeight(expectWeight(op, g, 2), n, "the weight");
  expectCols(resultDesc(op, g, 0).cols, n, "the sum");
  expectCols(resultDesc(op, g, 1).cols, n, "the normed result");
}

// LAYER_NORM. in: x, w, b. f0 = eps.
void checkLayerNorm(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 3, 1);
  int64_t n = expectBuffer(op, g, 0).cols;
  expectFloatWeight(expectWeight(op, g, 1), n, "the weight");
  expectFloatWeight(expectWeight(op, g, 2), n, "the bias");
  expectCols(resultDesc(op, g, 0).cols, n, "the result");
}

const llmc_operand &linearSlot(const llmc_op_desc &op, int s) {
  static const llmc_operand kNone = {LLMC_OPERAND_NONE, 0};
  return uint32_t(s) < op.num_operands ? op.operands[s] : kNone;
}

void checkQuantScales(const llmc_op_desc &op, const Graph &g,
                      const llmc_weight_desc &w, int64_t rows, int64_t K) {
  const int64_t group = op.i[0];
  if (op.i[2] != 0 &&
      (op.i[2] != 1 || (w.dtype != LLMC_MXFP4 && !isKQuant(w.dtype))))
    throw InvalidArgument("i2 (int8 activations) must be 0, or 1 with an "
                          "MXFP4 or K-quant W");
  if (isKQuant(w.dtype)) {
    const kquant::Layout l = kquant::layout(kquantFormat(w.dtype));
    if (group != kquant::kBlock || K % kquant::kBlock != 0)
      throw InvalidArgument(std::string(l.ggml) +
                            " has groups of 256 (i0) dividing K, got i0 = " +
                            std::to_string(group) +
                            ", K = " + std::to_string(K));
    const int64_t blocks = rows * (K / kquant::kBlock);
    if (weightElements(w) != rows * K ||
        int64_t(w.nbytes) < blocks * l.codeBytes)
      throw InvalidArgument("the " + std::string(l.ggml) + " codes must hold " +
                            std::to_string(blocks * l.codeBytes) + " bytes");
    if (linearSlot(op, LinearScales).kind != LLMC_OPERAND_WEIGHT)
      throw InvalidArgument("operand 2 must be the scales weight");
    const llmc_weight_desc &s = expectWeight(op, g, LinearScales);
    if (s.dtype != LLMC_KQ_HEADER)
      throw InvalidArgument(std::string(l.ggml) + " scales must be kq_header");
    if (weightElements(s) != blocks * l.headerBytes ||
        int64_t(s.nbytes) < blocks * l.headerBytes)
      throw InvalidArgument("the " + std::string(l.ggml) +
                            " headers must hold " +
                            std::to_string(blocks * l.headerBytes) + " bytes");
    return;
  }
  if (w.dtype == LLMC_MXFP4 && group != 32)
    throw InvalidArgument("MXFP4 has groups of 32 (i0), got " +
                          std::to_string(group));
  if (group <= 0 || K % group != 0)
    throw InvalidArgument("group size " + std::to_string(group) +
                          " does not divide K = " + std::to_string(K));
  if (w.dtype != LLMC_I8 && (K % 2 != 0 || group % 2 != 0))
    throw InvalidArgument("4-bit weights need an even K and group size");
  const int64_t bytes = w.dtype == LLMC_I8 ? rows * K : rows * K / 2;
  if (int64_t(w.nbytes) < bytes)
    throw InvalidArgument("the quantized weight must hold " +
                          std::to_string(bytes) + " bytes");
  if (linearSlot(op, LinearScales).kind != LLMC_OPERAND_WEIGHT)
    throw InvalidArgument("operand 2 must be the scales weight");
  const llmc_weight_desc &s = expectWeight(op, g, LinearScales);
  const int64_t scales = rows * (K / group);
  if (w.dtype == LLMC_MXFP4) {
    if (s.dtype != LLMC_E8M0)
      throw InvalidArgument("MXFP4 scales must be e8m0");
    if (weightElements(s) != scales || int64_t(s.nbytes) < scales)
      throw InvalidArgument("the scales must hold " + std::to_string(scales) +
                            " bytes");
    return;
  }
  if (s.dtype != LLMC_F32)
    throw InvalidArgument("the scales must be f32");
  expectFloatWeight(s, scales, "the scales");
}

// LINEAR: [0] x [rows, K], [1] W [N, K], [2] scales (i8/i4/MXFP4) or NONE,
// [3] bias [N] or NONE; i0 = group size.
void checkLinear(const llmc_op_desc &op, const Graph &g) {
  if (op.num_operands < 2 || op.num_operands > 4 || op.num_results != 1)
    throw InvalidArgument("expects x, W, scales, bias and one result");
  expectArity(op, g, op.num_operands, 1);
  int64_t K = expectBuffer(op, g, LinearX).cols;
  int64_t N = resultDesc(op, g, 0).cols;
  const llmc_weight_desc &w = expectWeight(op, g, LinearW);

  if (isQuantized(w.dtype)) {
    if (w.shape[0] != N)
      throw InvalidArgument("the quantized weight must hold " +
                            std::to_string(N) + " rows");
    checkQuantScales(op, g, w, N, K);
  } else {
    if (w.rank != 2 || w.shape[0] != N || w.shape[1] != K)
      throw InvalidArgument("W must be [" + std::to_string(N) + ", " +
                            std::to_string(K) + "]");
    expectFloatWeight(w, N * K, "W");
    if (linearSlot(op, LinearScales).kind != LLMC_OPERAND_NONE)
      throw InvalidArgument("a float W takes no scales");
  }
  if (linearSlot(op, LinearBias).kind != LLMC_OPERAND_NONE)
    expectFloatWeight(expectWeight(op, g, LinearBias), N, "the bias");
}

// ROPE. in: x, positions, inv_freq (and LongRoPE's long inv_freq when
// i4 > 0). i0 heads, i1 head_dim, i2 rotary_dim, i3 style (0 half,
// 1 interleaved), i4 the LongRoPE switch length; f0 attention scaling.
void checkRope(const llmc_op_desc &op, const Graph &g) {
  if (op.i[4] < 0)
    throw InvalidArgument("the LongRoPE switch length (i4) must be >= 0");
  expectArity(op, g, op.i[4] > 0 ? 4 : 3, 1);
  int64_t heads = op.i[0], headDim = op.i[1], rot = op.i[2];
  if (heads <= 0 || headDim <= 0)
    throw InvalidArgument("heads and head_dim must be positive");
  if (rot <= 0 || rot > headDim || rot % 2 != 0)
    throw InvalidArgument("rotary_dim must be even and in (0, head_dim]");
  if (op.i[3] != 0 && op.i[3] != 1)
    throw InvalidArgument("style must be 0 (half) or 1 (interleaved)");
  expectCols(expectBuffer(op, g, 0).cols, heads * headDim, "x");
  expectInput(op, 1);
  expectFloatWeight(expectWeight(op, g, 2), rot / 2, "inv_freq");
  if (op.i[4] > 0)
    expectFloatWeight(expectWeight(op, g, 3), rot / 2, "the long inv_freq");
  expectCols(resultDesc(op, g, 0).cols, heads * headDim, "the result");
}

// ADD, MUL: a and b of one shape.
void checkBinary(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 2, 1);
  int64_t n = expectBuffer(op, g, 0).cols;
  expectCols(expectBuffer(op, g, 1).cols, n, "operand 1");
  expectCols(resultDesc(op, g, 0).cols, n, "the result");
}

// SILU, GELU (i0 = 1: tanh approximation).
void checkUnary(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 1, 1);
  expectCols(resultDesc(op, g, 0).cols, expectBuffer(op, g, 0).cols,
             "the result");
  if (op.kind == LLMC_OP_GELU && op.i[0] != 0 && op.i[0] != 1)
    throw InvalidArgument("i0 must be 0 (erf) or 1 (tanh)");
}

// SWIGLU: [rows, 2I] -> [rows, I], act(gate) * up with gate first;
// i0 = 0 silu, 1 tanh GELU, 2 gpt-oss (f0 limit, f1 alpha); i1 = runs of
// [2I] per row (0: one); i2 = 1: gate and up interleaved.
void checkSwiglu(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 1, 1);
  expectCols(expectBuffer(op, g, 0).cols, 2 * resultDesc(op, g, 0).cols, "x");
  if (op.i[0] < 0 || op.i[0] > 2)
    throw InvalidArgument("i0 must be 0 (silu), 1 (tanh GELU) or 2 (gpt-oss's "
                          "clamped SwiGLU), got " +
                          std::to_string(op.i[0]));
  if (op.i[2] != 0 && (op.i[2] != 1 || op.i[0] != 2))
    throw InvalidArgument("i2 must be 0 (gate, up halves), or 1 (interleaved) "
                          "with i0 = 2");
  if (op.i[0] == 2 &&
      !(op.f[0] > 0 && std::isfinite(op.f[0]) && std::isfinite(op.f[1])))
    throw InvalidArgument("the clamp limit f0 must be finite and > 0, alpha "
                          "f1 finite");
  if (op.i[1] < 0 || resultDesc(op, g, 0).cols % gatedRuns(op) != 0)
    throw InvalidArgument("the runs per row i1 (" + std::to_string(op.i[1]) +
                          ") must divide the result's " +
                          std::to_string(resultDesc(op, g, 0).cols) +
                          " columns");
}

// SCALE: out = x * f0. SOFTCAP: out = f0 * tanh(x / f0), f0 > 0.
void checkScale(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 1, 1);
  expectCols(resultDesc(op, g, 0).cols, expectBuffer(op, g, 0).cols,
             "the result");
  const double f = op.f[0];
  if (!std::isfinite(f) || (op.kind == LLMC_OP_SOFTCAP && !(f > 0)))
    throw InvalidArgument(std::string(op.kind == LLMC_OP_SOFTCAP
                                          ? "the cap f0 must be finite and > 0"
                                          : "the factor f0 must be finite") +
                          ", got " + std::to_string(f));
}

// SLICE: out = x[:, i0 : i0 + out.cols].
void checkSlice(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 1, 1);
  int64_t cols = expectBuffer(op, g, 0).cols;
  if (op.i[0] < 0 || op.i[0] + resultDesc(op, g, 0).cols > cols)
    throw InvalidArgument("columns [" + std::to_string(op.i[0]) + ", " +
                          std::to_string(op.i[0] + resultDesc(op, g, 0).cols) +
                          ") are not inside x's " + std::to_string(cols));
}

// TAKE_ROWS: out[i] = x[logits_rows[i]] for the step's num_logits rows.
void checkTakeRows(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 1, 1);
  expectCols(resultDesc(op, g, 0).cols, expectBuffer(op, g, 0).cols,
             "the result");
}

// KV_WRITE. in: k, v [T, kv_heads * head_dim]. i0 = layer.
void checkKvWrite(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 2, 0);
  int64_t cols = expectBuffer(op, g, 0).cols;
  expectCols(expectBuffer(op, g, 1).cols, cols, "v");
  if (op.i[0] < 0)
    throw InvalidArgument("layer must not be negative");
}

AttentionShape attentionShape(const llmc_op_desc &op) {
  return {op.i[0], op.i[1],        op.i[2],       op.i[3],
          op.i[4], float(op.f[0]), float(op.f[1])};
}

// PREFILL_ATTENTION, DECODE_ATTENTION. in: q [rows, heads * head_dim],
// sinks (weight [heads] f32; optional).
void checkAttention(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, op.num_operands == 2 ? 2 : 1, 1);
  AttentionShape s = attentionShape(op);
  if (op.num_operands == 2) {
    if (s.heads <= 0)
      throw InvalidArgument("heads must be positive");
    const llmc_weight_desc &sinks = expectWeight(op, g, 1);
    if (sinks.dtype != LLMC_F32)
      throw InvalidArgument("the sinks must be f32");
    expectFloatWeight(sinks, s.heads, "the sinks");
  }
  if (s.layer < 0 || s.heads <= 0 || s.kvHeads <= 0 || s.headDim <= 0 ||
      s.window < 0)
    throw InvalidArgument("layer, heads, kv_heads, head_dim and window must "
                          "be positive (window and layer may be 0)");
  if (!(s.softcap >= 0) || !std::isfinite(s.softcap))
    throw InvalidArgument("the logit soft-cap f1 must be finite and >= 0 "
                          "(0: none), got " +
                          std::to_string(op.f[1]));
  if (s.heads % s.kvHeads != 0)
    throw InvalidArgument(std::to_string(s.heads) +
                          " heads are not a multiple of " +
                          std::to_string(s.kvHeads) + " kv heads");
  expectCols(expectBuffer(op, g, 0).cols, s.heads * s.headDim, "q");
  expectCols(resultDesc(op, g, 0).cols, s.heads * s.headDim, "the result");
}

} // namespace llmc::common

namespace llmc::common {

// MOE_GATING. in: logits [rows, E]. out: weights, experts [rows, k].
// i0 = k, i1 = renormalise, i2 = 0 softmax then top-k, 1 top-k then softmax.
void checkMoeGating(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 1, 2);
  const int64_t experts = expectBuffer(op, g, 0).cols, k = op.i[0];
  if (k <= 0 || k > experts)
    throw InvalidArgument("k (i0 = " + std::to_string(k) + ") must be in 1.." +
                          std::to_string(experts) + " (the logits' experts)");
  if (op.i[1] != 0 && op.i[1] != 1)
    throw InvalidArgument("i1 must be 0 or 1 (renormalise)");
  if (op.i[2] != 0 && op.i[2] != 1)
    throw InvalidArgument("i2 must be 0 (softmax, top-k) or 1 (top-k, "
                          "softmax)");
  if (op.i[2] == 1 && op.i[1] != 0)
    throw InvalidArgument("top-k then softmax (i2 = 1) takes no "
                          "renormalisation (i1 must be 0)");
  expectCols(resultDesc(op, g, 0).cols, k, "the weights");
  expectCols(resultDesc(op, g, 1).cols, k, "the experts");
}

ExpertShape expertShape(const llmc_op_desc &op, const Graph &g) {
  const llmc_weight_desc &w = g.weights[op.operands[LinearW].index];
  ExpertShape s{};
  s.experts = w.shape[0];
  s.N = w.shape[1];
  s.K = w.rank == 3 ? w.shape[2] : 0;
  s.k = op.i[1];
  s.group = op.i[0];
  s.perRun = s.k > 1 && g.buffers[op.operands[LinearX].index].cols == s.k * s.K;
  return s;
}

// EXPERT_LINEAR: [0] x, [1] W [E, N, K], [2] scales or NONE, [3] experts.
// i0 = group, i1 = k.
void checkExpertLinear(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 4, 1);
  const llmc_weight_desc &w = expectWeight(op, g, LinearW);
  if (w.rank != 3)
    throw InvalidArgument("W must stack the experts: [E, N, K]");
  const ExpertShape s = expertShape(op, g);
  if (s.k <= 0 || s.k > s.experts)
    throw InvalidArgument("k (i1 = " + std::to_string(s.k) +
                          ") must be in 1.." + std::to_string(s.experts));
  const int64_t xCols = expectBuffer(op, g, LinearX).cols;
  if (xCols != s.K && xCols != s.k * s.K)
    throw InvalidArgument("x has " + std::to_string(xCols) +
                          " columns, expected K = " + std::to_string(s.K) +
                          " or k * K = " + std::to_string(s.k * s.K));
  expectCols(resultDesc(op, g, 0).cols, s.k * s.N, "the result");
  expectCols(expectBuffer(op, g, 3).cols, s.k, "the experts");
  const int64_t values = s.experts * s.N * s.K;
  if (isQuantized(w.dtype)) {
    checkQuantScales(op, g, w, s.experts * s.N, s.K);
  } else {
    expectFloatWeight(w, values, "W");
    if (op.operands[LinearScales].kind != LLMC_OPERAND_NONE)
      throw InvalidArgument("float experts take no scales");
  }
}

// EXPERT_BIAS. in: y [rows, k*N], bias (weight [E, N] f32, or [E, a, b]
// with a * b = N), experts
// [rows, k]. i0 = k.
void checkExpertBias(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 3, 1);
  const int64_t k = op.i[0], cols = expectBuffer(op, g, 0).cols;
  if (k <= 0 || cols % k != 0)
    throw InvalidArgument("k (i0 = " + std::to_string(k) +
                          ") must be positive and divide y's " +
                          std::to_string(cols) + " columns");
  const llmc_weight_desc &bias = expectWeight(op, g, 1);
  if (bias.rank < 2 || weightElements(bias) != bias.shape[0] * (cols / k))
    throw InvalidArgument("the bias must hold [E, " + std::to_string(cols / k) +
                          "] values");
  if (bias.dtype != LLMC_F32)
    throw InvalidArgument("the bias must be f32");
  expectFloatWeight(bias, weightElements(bias), "the bias");
  expectCols(expectBuffer(op, g, 2).cols, k, "the experts");
  expectCols(resultDesc(op, g, 0).cols, cols, "the result");
}

// MOE_COMBINE. in: y [rows, k*N], weights [rows, k]. i0 = k.
void checkMoeCombine(const llmc_op_desc &op, const Graph &g) {
  expectArity(op, g, 2, 1);
  const int64_t k = op.i[0], N = resultDesc(op, g, 0).cols;
  if (k <= 0)
    throw InvalidArgument("k (i0) must be positive");
  expectCols(expectBuffer(op, g, 0).cols, k * N, "y");
  expectCols(expectBuffer(op, g, 1).cols, k, "the weights");
}

} // namespace llmc::common
