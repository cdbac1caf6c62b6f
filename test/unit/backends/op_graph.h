//===- op_graph.h - Hand-built graphs for backend tests --------*- C++ -*-===//
//
// Tests feed activations the way a real graph does: an EMBEDDING of an f32
// table by the step's tokens. A table row per token gives any x, and a graph
// built this way is one every backend must accept. The op under test writes
// the buffer that becomes the logits.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/backend.h"
#include "llmc/runtime/backend_registry.h"

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

namespace llmc::testing {

inline llmc_operand buf(uint32_t i) { return {LLMC_OPERAND_BUFFER, i}; }
inline llmc_operand wt(uint32_t i) { return {LLMC_OPERAND_WEIGHT, i}; }
inline llmc_operand tokensInput() { return {LLMC_OPERAND_INPUT, 0}; }
inline llmc_operand positionsInput() { return {LLMC_OPERAND_INPUT, 1}; }
inline llmc_operand none() { return {LLMC_OPERAND_NONE, 0}; }

inline llmc_rows rowsT() { return {1, 0, 0}; }
inline llmc_rows rowsB() { return {0, 1, 0}; }

llmc_op_desc makeOp(llmc_op_kind kind, std::initializer_list<llmc_operand> in,
                    std::initializer_list<uint32_t> out,
                    std::initializer_list<int64_t> ints = {},
                    std::initializer_list<double> floats = {});

/// Values as stored in a weight of `dtype` (f32, bf16 or f16).
std::vector<uint8_t> encode(llmc_dtype dtype, const std::vector<float> &v);
/// What a value becomes after a round trip through `dtype`.
float roundTo(llmc_dtype dtype, float v);
/// What K or V rows [*, headDim] become in a KV cache of `dtype`: for i8
/// and fp8 each head's row is scaled by its max |x| (backend.h's rule),
/// worked out here by brute force, independently of the backends' code.
std::vector<float> roundKv(llmc_dtype dtype, const std::vector<float> &x,
                           int64_t headDim);

/// A quantized [N, K] weight: bytes, f32 scales [N, K/group], and the values
/// it dequantizes to.
struct Quantized {
  std::vector<uint8_t> bytes;
  std::vector<float> scales, dequantized;
};
Quantized quantize(llmc_dtype dtype, const std::vector<float> &w, int64_t n,
                   int64_t k, int64_t group);

class OpGraph {
public:
  uint32_t buffer(llmc_rows rows, int64_t cols);
  uint32_t weight(llmc_dtype dtype, std::vector<int64_t> shape,
                  std::vector<uint8_t> bytes);
  uint32_t weight(llmc_dtype dtype, std::vector<int64_t> shape,
                  const std::vector<float> &values) {
    return weight(dtype, std::move(shape), encode(dtype, values));
  }
  /// A [T, cols] buffer holding table[tokens[t]].
  uint32_t feed(const std::vector<float> &table, int64_t cols);
  void add(const llmc_op_desc &op) { ops_.push_back(op); }

  /// The descriptor; valid while this OpGraph lives and is not changed.
  llmc_graph_desc desc(uint32_t logitsBuffer, const char *name = "test");
  llmc_buffer_desc &bufferDesc(uint32_t i) { return buffers_[i]; }

private:
  std::vector<llmc_op_desc> ops_;
  std::vector<llmc_buffer_desc> buffers_;
  std::vector<llmc_weight_desc> weights_;
  std::deque<std::vector<uint8_t>> data_;
};

/// The arrays behind one llmc_step_args.
struct StepData {
  std::vector<int32_t> tokens, positions, slots, queryStart, contextLens,
      blockTables, logitsRows;
  int32_t numSeqs = 1, maxBlocks = 0, numLogits = 0;
  std::vector<float> logits;

  /// T tokens 0..T-1 at positions 0..T-1 of one sequence; `logits` rows are
  /// wanted (and logits_rows is 0..logits-1).
  static StepData simple(int32_t tokens, int32_t logits);
  llmc_step_args args(int64_t vocab);
};

/// Prepares `graph` on `backend`, runs one step and returns the logits
/// (`step.numLogits` rows of the logits buffer's columns).
std::vector<float> runGraph(const BackendInstance &backend, OpGraph &graph,
                            uint32_t logitsBuffer, StepData &step,
                            DeviceKvCache *cache = nullptr);

std::vector<float> randomVector(std::mt19937 &rng, size_t n, float lo = -1.0f,
                                float hi = 1.0f);

/// max |a - b| / max(1, max |b|): a scale-free error for comparing with a
/// reference.
double maxRelativeError(const std::vector<float> &a,
                        const std::vector<double> &b);

/// Loads the registry from LLMC_BACKEND_PATH and the test binary's dir.
const BackendRegistry &registry();

} // namespace llmc::testing

namespace llmc::testing {

/// A backend object of the named plugin (throws if it was not found).
inline BackendInstance openBackend(const std::string &name) {
  const LoadedBackend *b = registry().find(name);
  if (!b)
    throw Error("backend '" + name + "' was not found");
  return BackendInstance(*b);
}

} // namespace llmc::testing
