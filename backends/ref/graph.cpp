//===- graph.cpp - Validating a graph descriptor at prepare time ----------===//
//
// Everything a graph says about itself is checked once here, so the kernels
// can index buffers and weights without asking again.
//
//===----------------------------------------------------------------------===//
#include "ref.h"

namespace llmc::ref {
namespace {

const OpKernel kKernels[LLMC_OP_COUNT] = {
    {"embedding", checkEmbedding, runEmbedding},
    {"rms_norm", checkRmsNorm, runRmsNorm},
    {"add_rms_norm", checkAddRmsNorm, runAddRmsNorm},
    {"layer_norm", checkLayerNorm, runLayerNorm},
    {"linear", checkLinear, runLinear},
    {"rope", checkRope, runRope},
    {"add", checkBinary, runAdd},
    {"mul", checkBinary, runMul},
    {"silu", checkUnary, runSilu},
    {"gelu", checkUnary, runGelu},
    {"swiglu", checkSwiglu, runSwiglu},
    {"slice", checkSlice, runSlice},
    {"kv_write", checkKvWrite, runKvWrite},
    {"prefill_attention", checkAttention, runPrefillAttention},
    {"decode_attention", checkAttention, runDecodeAttention},
    {"take_rows", checkTakeRows, runTakeRows},
};

void checkBufferDesc(const llmc_buffer_desc &b, uint32_t index) {
  std::string where = "buffer " + std::to_string(index);
  if (b.dtype != LLMC_F32)
    throw InvalidArgument(where + ": the ref backend keeps activations in f32");
  if (b.cols <= 0)
    throw InvalidArgument(where + ": cols must be positive");
  if (b.rows.t_coef < 0 || b.rows.b_coef < 0 || b.rows.constant < 0)
    throw InvalidArgument(where + ": rows must not shrink as T or B grow");
  if (b.offset_t < 0 || b.offset_b < 0 || b.offset_const < 0)
    throw InvalidArgument(where + ": negative workspace offset");
  if (b.offset_t % 4 || b.offset_b % 4 || b.offset_const % 4)
    throw InvalidArgument(where + ": workspace offset is not f32-aligned");
}

void checkWeightDesc(const llmc_weight_desc &w, uint32_t index) {
  std::string where = "weight " + std::to_string(index);
  if (w.name)
    where += " '" + std::string(w.name) + "'";
  if (w.dtype > LLMC_I32)
    throw InvalidArgument(where + ": unknown dtype " + std::to_string(w.dtype));
  if (w.rank < 1 || w.rank > 4)
    throw InvalidArgument(where + ": rank must be 1..4");
  for (uint32_t d = 0; d < w.rank; ++d)
    if (w.shape[d] <= 0)
      throw InvalidArgument(where + ": dimensions must be positive");
  if (!w.data && w.nbytes)
    throw InvalidArgument(where + ": no data");
}

} // namespace

const OpKernel *findKernel(uint32_t kind) {
  return kind < LLMC_OP_COUNT ? &kKernels[kind] : nullptr;
}

Graph loadGraph(const llmc_graph_desc &desc) {
  Graph g;
  g.name = desc.name ? desc.name : "graph";
  if ((desc.num_ops && !desc.ops) || (desc.num_buffers && !desc.buffers) ||
      (desc.num_weights && !desc.weights))
    throw InvalidArgument("graph '" + g.name +
                          "': missing ops, buffers or "
                          "weights array");
  g.ops.assign(desc.ops, desc.ops + desc.num_ops);
  g.buffers.assign(desc.buffers, desc.buffers + desc.num_buffers);
  g.weights.assign(desc.weights, desc.weights + desc.num_weights);
  g.logitsBuffer = desc.logits_buffer;
  g.workspaceT = desc.workspace_t;
  g.workspaceB = desc.workspace_b;
  g.workspaceC = desc.workspace_c;

  try {
    if (g.workspaceT < 0 || g.workspaceB < 0 || g.workspaceC < 0)
      throw InvalidArgument("negative workspace size");
    for (uint32_t i = 0; i < g.buffers.size(); ++i)
      checkBufferDesc(g.buffers[i], i);
    for (uint32_t i = 0; i < g.weights.size(); ++i)
      checkWeightDesc(g.weights[i], i);
    if (g.logitsBuffer >= g.buffers.size())
      throw InvalidArgument("logits_buffer " + std::to_string(g.logitsBuffer) +
                            " is not a buffer");
    for (size_t i = 0; i < g.ops.size(); ++i) {
      const llmc_op_desc &op = g.ops[i];
      const OpKernel *kernel = findKernel(op.kind);
      if (!kernel)
        throw InvalidArgument("op " + std::to_string(i) + ": unknown kind " +
                              std::to_string(op.kind));
      try {
        kernel->check(op, g);
      } catch (const InvalidArgument &e) {
        throw InvalidArgument("op " + std::to_string(i) + " (" + kernel->name +
                              "): " + e.what());
      }
    }
  } catch (const InvalidArgument &e) {
    throw InvalidArgument("graph '" + g.name + "': " + e.what());
  }
  return g;
}

void expectArity(const llmc_op_desc &op, const Graph &g, uint32_t operands,
                 uint32_t results) {
  if (op.num_operands != operands || op.num_results != results)
    throw InvalidArgument("expects " + std::to_string(operands) +
                          " operands and " + std::to_string(results) +
                          " results, has " + std::to_string(op.num_operands) +
                          " and " + std::to_string(op.num_results));
  for (uint32_t r = 0; r < results; ++r)
    if (op.results[r] >= g.buffers.size())
      throw InvalidArgument("result " + std::to_string(r) + " is buffer " +
                            std::to_string(op.results[r]) +
                            ", which does not exist");
}

const llmc_buffer_desc &expectBuffer(const llmc_op_desc &op, const Graph &g,
                                     int slot) {
  const llmc_operand &o = op.operands[slot];
  if (o.kind != LLMC_OPERAND_BUFFER || o.index >= g.buffers.size())
    throw InvalidArgument("operand " + std::to_string(slot) +
                          " must be a buffer");
  return g.buffers[o.index];
}

const llmc_buffer_desc &resultDesc(const llmc_op_desc &op, const Graph &g,
                                   int slot) {
  return g.buffers[op.results[slot]];
}

const llmc_weight_desc &expectWeight(const llmc_op_desc &op, const Graph &g,
                                     int slot) {
  const llmc_operand &o = op.operands[slot];
  if (o.kind != LLMC_OPERAND_WEIGHT || o.index >= g.weights.size())
    throw InvalidArgument("operand " + std::to_string(slot) +
                          " must be a weight");
  return g.weights[o.index];
}

void expectInput(const llmc_op_desc &op, int slot) {
  const llmc_operand &o = op.operands[slot];
  if (o.kind != LLMC_OPERAND_INPUT || o.index > 1)
    throw InvalidArgument("operand " + std::to_string(slot) +
                          " must be INPUT 0 (tokens) or 1 (positions)");
}

void expectNone(const llmc_op_desc &op, int slot) {
  if (op.operands[slot].kind != LLMC_OPERAND_NONE)
    throw InvalidArgument("operand " + std::to_string(slot) + " must be NONE");
}

void expectCols(int64_t actual, int64_t expected, const char *what) {
  if (actual != expected)
    throw InvalidArgument(std::string(what) + " has " + std::to_string(actual) +
                          " columns, expected " + std::to_string(expected));
}

void expectRows(const Matrix &m, int64_t rows, const char *what) {
  if (m.rows != rows)
    throw InvalidArgument(std::string(what) + " has " + std::to_string(m.rows) +
                          " rows in this step, expected " +
                          std::to_string(rows));
}

KvCache &Step::kv() const {
  if (!cache)
    throw InvalidArgument("this graph uses the KV cache but none was given");
  return *cache;
}

} // namespace llmc::ref
