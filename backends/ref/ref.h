//===- ref.h - The reference backend's internals ---------------*- C++ -*-===//
//
// The ref backend is the oracle every other backend is compared with, so it
// is written to be read: each op is a plain loop in f32 over rows, in the
// order the math is written (llama2.c's run.c). Nothing here is fast.
//
// An op lives in one kernels_*.cpp file as a pair of functions: `check*`
// validates what prepare can know (operand kinds, dtypes, columns,
// attributes) and `run*` validates what only a step knows (rows, ids, cache
// slots) and computes. Both throw; the C entries in ref_backend.cpp turn the
// exception into a status and a last_error message.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/backend.h"
#include "llmc/support/error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::ref {

/// Bad input from the caller (graph or step): LLMC_INVALID_ARGUMENT.
/// Anything else thrown as llmc::Error is LLMC_ERROR.
struct InvalidArgument : Error {
  using Error::Error;
};

/// The prepared graph: a copy of the descriptors (weight data stays in the
/// caller's memory, which the ABI says outlives us).
struct Graph {
  std::string name;
  std::vector<llmc_op_desc> ops;
  std::vector<llmc_buffer_desc> buffers;
  std::vector<llmc_weight_desc> weights;
  uint32_t logitsBuffer = 0;
  int64_t workspaceT = 0, workspaceB = 0, workspaceC = 0;
};

/// An f32 activation, rows x cols, row-major and contiguous.
struct Matrix {
  float *data = nullptr;
  int64_t rows = 0, cols = 0;
  float *row(int64_t r) const { return data + r * cols; }
};

/// The paged KV pool: per layer, K and V each [num_blocks, block_size,
/// kv_heads, head_dim] in the cache dtype.
struct KvCache {
  llmc_kv_cache_desc desc{};
  std::vector<std::vector<uint8_t>> k, v; // one per layer

  int64_t slots() const { return int64_t(desc.num_blocks) * desc.block_size; }
  int64_t rowElements() const { return int64_t(desc.kv_heads) * desc.head_dim; }
};

/// Creates a pool, or throws InvalidArgument for an unusable descriptor.
void initKvCache(KvCache &cache, const llmc_kv_cache_desc &desc);
void copyKvBlock(KvCache &cache, int32_t src, int32_t dst);
/// One K or V row (kv_heads * head_dim values) at a slot of a layer.
void storeKvRow(const KvCache &cache, std::vector<uint8_t> &layer, int64_t slot,
                const float *row);
void loadKvRow(const KvCache &cache, const std::vector<uint8_t> &layer,
               int64_t slot, float *row);

/// Everything an op sees while one step runs.
struct Step {
  const Graph &graph;
  const llmc_step_args &args;
  KvCache *cache;
  std::vector<Matrix> buffers; // placed for this step's T and B

  Matrix operand(const llmc_op_desc &op, int slot) const {
    return buffers[op.operands[slot].index];
  }
  Matrix result(const llmc_op_desc &op, int slot) const {
    return buffers[op.results[slot]];
  }
  const llmc_weight_desc &weight(const llmc_op_desc &op, int slot) const {
    return graph.weights[op.operands[slot].index];
  }
  /// tokens (INPUT 0) or positions (INPUT 1), T values.
  const int32_t *input(const llmc_op_desc &op, int slot) const {
    return op.operands[slot].index == 0 ? args.tokens : args.positions;
  }
  KvCache &kv() const;
};

//===-- Prepare-time checks shared by the op families ---------------------===//

/// The op has exactly this many operands and results, and every result is a
/// valid f32 buffer.
void expectArity(const llmc_op_desc &op, const Graph &g, uint32_t operands,
                 uint32_t results);
/// Operand `slot` is an f32 buffer; returns its descriptor.
const llmc_buffer_desc &expectBuffer(const llmc_op_desc &op, const Graph &g,
                                     int slot);
const llmc_buffer_desc &resultDesc(const llmc_op_desc &op, const Graph &g,
                                   int slot);
/// Operand `slot` is a weight; returns its descriptor.
const llmc_weight_desc &expectWeight(const llmc_op_desc &op, const Graph &g,
                                     int slot);
/// Operand `slot` is INPUT 0 (tokens) or 1 (positions).
void expectInput(const llmc_op_desc &op, int slot);
void expectNone(const llmc_op_desc &op, int slot);
void expectCols(int64_t actual, int64_t expected, const char *what);

//===-- Weights
//------------------------------------------------------------===//

size_t dtypeSize(uint32_t dtype); // 0 for the packed integer types
int64_t weightElements(const llmc_weight_desc &w);
/// A f32/bf16/f16 weight of `elements` values whose bytes are all there.
void expectFloatWeight(const llmc_weight_desc &w, int64_t elements,
                       const char *what);
/// Values [offset, offset + count) of a f32/bf16/f16 weight, as floats.
void loadWeight(const llmc_weight_desc &w, int64_t offset, int64_t count,
                float *out);

//===-- Step-time checks
//---------------------------------------------------===//

void expectRows(const Matrix &m, int64_t rows, const char *what);
void checkStepArgs(const Graph &g, const KvCache *cache,
                   const llmc_step_args &args);

//===-- The ops -----------------------------------------------------------===//

using CheckFn = void (*)(const llmc_op_desc &, const Graph &);
using RunFn = void (*)(const llmc_op_desc &, Step &);

struct OpKernel {
  const char *name;
  CheckFn check;
  RunFn run;
};

/// The kernel of an op kind, or nullptr for a kind this backend does not
/// know.
const OpKernel *findKernel(uint32_t kind);

void checkEmbedding(const llmc_op_desc &, const Graph &);
void runEmbedding(const llmc_op_desc &, Step &);
void checkRmsNorm(const llmc_op_desc &, const Graph &);
void runRmsNorm(const llmc_op_desc &, Step &);
void checkAddRmsNorm(const llmc_op_desc &, const Graph &);
void runAddRmsNorm(const llmc_op_desc &, Step &);
void checkLayerNorm(const llmc_op_desc &, const Graph &);
void runLayerNorm(const llmc_op_desc &, Step &);
void checkLinear(const llmc_op_desc &, const Graph &);
void runLinear(const llmc_op_desc &, Step &);
void checkRope(const llmc_op_desc &, const Graph &);
void runRope(const llmc_op_desc &, Step &);
void checkBinary(const llmc_op_desc &, const Graph &);
void runAdd(const llmc_op_desc &, Step &);
void runMul(const llmc_op_desc &, Step &);
void checkUnary(const llmc_op_desc &, const Graph &);
void runSilu(const llmc_op_desc &, Step &);
void runGelu(const llmc_op_desc &, Step &);
void checkSwiglu(const llmc_op_desc &, const Graph &);
void runSwiglu(const llmc_op_desc &, Step &);
void checkSlice(const llmc_op_desc &, const Graph &);
void runSlice(const llmc_op_desc &, Step &);
void checkTakeRows(const llmc_op_desc &, const Graph &);
void runTakeRows(const llmc_op_desc &, Step &);
void checkKvWrite(const llmc_op_desc &, const Graph &);
void runKvWrite(const llmc_op_desc &, Step &);
void checkAttention(const llmc_op_desc &, const Graph &);
void runPrefillAttention(const llmc_op_desc &, Step &);
void runDecodeAttention(const llmc_op_desc &, Step &);

//===-- Graphs
//-------------------------------------------------------------===//

/// Copies and validates a graph descriptor (throws InvalidArgument).
Graph loadGraph(const llmc_graph_desc &desc);

/// A prepared graph and the workspace it reuses from step to step.
struct Prepared {
  Graph graph;
  std::vector<float> workspace;
  std::vector<std::vector<float>> separate; // graphs without a memory plan
};

/// Runs one step and writes the logits (throws on bad input).
void execute(Prepared &prepared, KvCache *cache, const llmc_step_args &args);

} // namespace llmc::ref
