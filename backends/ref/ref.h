//===- ref.h - The reference backend's internals ---------------*- C++ -*-===//
//
// The ref backend is the oracle every other backend is compared with, so it
// is written to be read: each op is a plain loop in f32 over rows, in the
// order the math is written (llama2.c's run.c). Nothing here is fast.
//
// What every backend shares (graph and step checks, buffer placement, the
// host KV pool, the C entries) is backends/common; an op here is one `run*`
// function in a kernels_*.cpp file, which checks what only a step knows
// (rows, ids) and computes. Errors are thrown; the kit turns them into a
// status and a last_error message.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/host.h"

namespace llmc::ref {

using common::Graph;
using common::InvalidArgument;
using common::KvCache;
using common::Matrix;
using common::Step;

using common::AttentionShape;
using common::attentionShape;
using common::expectCacheFits;
using common::expectCols;
using common::expectRows;
using common::loadKvRow;
using common::loadWeight;
using common::storeKvRow;
using common::weightElements;

/// A LINEAR or EXPERT_LINEAR weight (operand 1, its scales operand 2) read
/// as rows of f32: f32/bf16/f16, i8/i4/MXFP4 with scales [N, K / group],
/// or a K-quant with its headers. Stacked experts are rows e * N + n.
class WeightRows {
public:
  WeightRows(const llmc_op_desc &op, Step &step);
  void row(int64_t n, int64_t K, float *out) const;

private:
  const llmc_weight_desc &w_;
  const llmc_weight_desc *headers_ = nullptr; // a K-quant's
  std::vector<float> scales_;                 // i8/i4/MXFP4's, as floats
  int64_t group_;
};
float dot(const float *a, const float *b, int64_t n);

void runEmbedding(const llmc_op_desc &, Step &);
void runRmsNorm(const llmc_op_desc &, Step &);
void runAddRmsNorm(const llmc_op_desc &, Step &);
void runLayerNorm(const llmc_op_desc &, Step &);
void runLinear(const llmc_op_desc &, Step &);
void runRope(const llmc_op_desc &, Step &);
void runAdd(const llmc_op_desc &, Step &);
void runMul(const llmc_op_desc &, Step &);
void runSilu(const llmc_op_desc &, Step &);
void runGelu(const llmc_op_desc &, Step &);
void runSwiglu(const llmc_op_desc &, Step &);
void runSlice(const llmc_op_desc &, Step &);
void runTakeRows(const llmc_op_desc &, Step &);
void runScale(const llmc_op_desc &, Step &);
void runSoftcap(const llmc_op_desc &, Step &);
void runKvWrite(const llmc_op_desc &, Step &);
void runPrefillAttention(const llmc_op_desc &, Step &);
void runDecodeAttention(const llmc_op_desc &, Step &);
void runMoeGating(const llmc_op_desc &, Step &);
void runExpertLinear(const llmc_op_desc &, Step &);
void runMoeCombine(const llmc_op_desc &, Step &);
void runExpertBias(const llmc_op_desc &, Step &);

} // namespace llmc::ref
