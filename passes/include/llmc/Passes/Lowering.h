//===- Lowering.h - llmc IR -> the executable graphs of a plan --*- C++ -*-===//
//
// The final lowering, shared by the llmc-serialize pass (which records it in
// the IR for tests) and `llmc compile` (which writes it into the plan).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/graph.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::llmc {

/// One weight of the plan: either derived from checkpoint tensors (a param's
/// name or packed `sources`, with its conversions) or synthesized by the
/// compiler (`data`, e.g. a rotary inv_freq table).
struct WeightSpec {
  std::string name;
  llmc_dtype dtype = LLMC_F32;
  std::vector<int64_t> shape;
  std::vector<std::string> sources; // checkpoint tensors stacked row-wise
  /// > 0: [experts, N, K] stacked experts; each source is per expert
  /// ("{e}" in its name) or stacks them, and expert e's rows are every
  /// source's rows of expert e.
  int64_t experts = 0;
  bool transposed = false;
  int64_t ropeUnpermuteHeads = 0;
  float offset = 0;         // added to every value (Gemma's 1 + w norms)
  std::string quant;        // "", "int8", "int4"
  bool quantScales = false; // this is the scales half of a quantized weight
  int64_t groupSize = 0;
  std::string ggmlType;    // the checkpoint's GGUF block format, if one
  std::vector<float> data; // synthesized weights
  /// Split over tp ranks (llmc-shard): rank r's slice of dimension shardDim
  /// of the logical weight is the runs at shardStarts[r * S .. + S), S runs
  /// per rank each shape[shardDim] / S long (a start of -1: zeros); shardDim
  /// -1: every rank reads it all.
  int64_t shardDim = -1;
  std::vector<int64_t> shardStarts;
};

struct LoweredModule {
  std::vector<::llmc::Graph> graphs;
  std::vector<WeightSpec> weights;
};

/// Lowers @prefill, @decode and @verify. Fails (with an error on the op) if
/// an op has no kernel or a function is missing.
FailureOr<LoweredModule> lowerToGraphs(ModuleOp module);

/// One line per kernel call, e.g. "b4 = LINEAR(b3, w2, -, w3) i=[0]".
std::vector<std::string> describeGraph(const ::llmc::Graph &graph);

/// HF's rotary tables for a rope op's theta, rotary_dim and scaling.
struct RopeTables {
  std::vector<float> invFreq;
  /// LongRoPE: the table of sequences longer than `switchLength` tokens
  /// (invFreq is the short one); empty otherwise.
  std::vector<float> longInvFreq;
  int64_t switchLength = 0;
  double attentionScaling = 1.0; // yarn's mscale, LongRoPE's factor
};

/// Fails for scaling it cannot express as fixed tables.
LogicalResult ropeTables(Operation *rope, double theta, int64_t rotaryDim,
                         DictionaryAttr scaling, RopeTables &tables);

} // namespace mlir::llmc
