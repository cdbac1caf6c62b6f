//===- graph.h - A validated copy of a graph descriptor ---------*- C++ -*-===//
//
// Every backend starts prepare the same way: copy the llmc_graph_desc and
// check everything it says about itself (buffers, weights, each op's
// operands and attributes), so kernels index buffers and weights without
// asking again and every backend refuses the same graph with the same
// message. The per-op checks live in op_checks.h; this file holds the graph
// and the helpers those checks are written with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/backend.h"
#include "llmc/support/error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::common {

/// Bad input from the caller (graph or step): LLMC_INVALID_ARGUMENT.
/// Anything else thrown as llmc::Error is LLMC_ERROR.
struct InvalidArgument : Error {
  using Error::Error;
};

/// The descriptors of a prepared graph. Weight data stays in the caller's
/// memory, which the ABI says outlives the prepared graph.
struct Graph {
  std::string name;
  std::vector<llmc_op_desc> ops;
  std::vector<llmc_buffer_desc> buffers;
  std::vector<llmc_weight_desc> weights;
  uint32_t logitsBuffer = 0;
  bool weightsFileMapped = false; // LLMC_GRAPH_WEIGHTS_FILE_MAPPED
  int64_t workspaceT = 0, workspaceB = 0, workspaceC = 0;

  bool hasMemoryPlan() const { return workspaceT || workspaceB || workspaceC; }
};

/// Copies and validates a graph descriptor (throws InvalidArgument naming
/// the graph, the op and what is wrong).
Graph loadGraph(const llmc_graph_desc &desc);

/// The op's name ("linear", "prefill_attention", ...), or nullptr for a kind
/// this ABI version does not know.
const char *opName(uint32_t kind);

/// "graph 'decode' op 7 (linear)": how errors name an op.
std::string opWhere(const Graph &g, size_t index);

/// Whether the op, in a graph with these buffers and weights, passes the
/// checks and keeps its activations in f32 (the `supports` entry of the
/// backends that compute in f32).
bool checksPass(const llmc_op_desc &op, const llmc_graph_desc &graph);

//===-- Helpers the per-op checks are written with ------------------------===//

/// The op has exactly this many operands and results, and every result is a
/// buffer of the graph.
void expectArity(const llmc_op_desc &op, const Graph &g, uint32_t operands,
                 uint32_t results);
/// Operand `slot` is a buffer; returns its descriptor.
const llmc_buffer_desc &expectBuffer(const llmc_op_desc &op, const Graph &g,
                                     int slot);
const llmc_buffer_desc &resultDesc(const llmc_op_desc &op, const Graph &g,
                                   int slot);
/// Operand `slot` is a weight; returns its descriptor.
const llmc_weight_desc &expectWeight(const llmc_op_desc &op, const Graph &g,
                                     int slot);
/// Operand `slot` is INPUT 0 (tokens) or 1 (positions).
void expectInput(const llmc_op_desc &op, int slot);
void expectCols(int64_t actual, int64_t expected, const char *what);

//===-- Weights -----------------------------------------------------------===//

size_t dtypeSize(uint32_t dtype); // 0 for the packed integer types
int64_t weightElements(const llmc_weight_desc &w);
/// A f32/bf16/f16 weight of `elements` values whose bytes are all there.
void expectFloatWeight(const llmc_weight_desc &w, int64_t elements,
                       const char *what);
/// Values [offset, offset + count) of a f32/bf16/f16 weight, as floats.
void loadWeight(const llmc_weight_desc &w, int64_t offset, int64_t count,
                float *out);
/// Row n (K values) of a K-quant weight, codes `w` and headers `headers`,
/// decoded as ggml decodes it.
void kquantRow(const llmc_weight_desc &w, const llmc_weight_desc &headers,
               int64_t n, int64_t K, float *out);

} // namespace llmc::common
