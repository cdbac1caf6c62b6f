//===- graph.cpp - Validating a graph descriptor at prepare time ----------===//
#include "common/graph.h"
#include "common/mxfp4.h"
#include "common/op_checks.h"

#include "llmc/support/half.h"

#include <cstring>

namespace llmc::common {
namespace {

using CheckFn = void (*)(const llmc_op_desc &, const Graph &);

struct OpInfo {
  const char *name;
  CheckFn check;
};

const OpInfo kOps[LLMC_OP_COUNT] = {
    {"embedding", checkEmbedding},
    {"rms_norm", checkRmsNorm},
    {"add_rms_norm", checkAddRmsNorm},
    {"layer_norm", checkLayerNorm},
    {"linear", checkLinear},
    {"rope", checkRope},
    {"add", checkBinary},
    {"mul", checkBinary},
    {"silu", checkUnary},
    {"gelu", checkUnary},
    {"swiglu", checkSwiglu},
    {"slice", checkSlice},
    {"kv_write", checkKvWrite},
    {"prefill_attention", checkAttention},
    {"decode_attention", checkAttention},
    {"take_rows", checkTakeRows},
    {"scale", checkScale},
    {"softcap", checkScale},
    {"moe_gating", checkMoeGating},
    {"expert_linear", checkExpertLinear},
    {"moe_combine", checkMoeCombine},
    {"expert_bias", checkExpertBias},
    {"all_reduce", checkUnary},
};

/// Every buffer an op reads or writes is f32 but MOE_GATING's experts
/// result and EXPERT_LINEAR's and EXPERT_BIAS's experts operand, which are
/// I32.
void checkBufferDtypes(const llmc_op_desc &op, const Graph &g) {
  auto want = [](bool ids) { return ids ? LLMC_I32 : LLMC_F32; };
  for (uint32_t i = 0; i < op.num_operands && i < LLMC_MAX_OPERANDS; ++i) {
    const llmc_operand &o = op.operands[i];
    if (o.kind != LLMC_OPERAND_BUFFER || o.index >= g.buffers.size())
      continue;
    const uint32_t w = want((op.kind == LLMC_OP_EXPERT_LINEAR && i == 3) ||
                            (op.kind == LLMC_OP_EXPERT_BIAS && i == 2));
    if (g.buffers[o.index].dtype != w)
      throw InvalidArgument("operand " + std::to_string(i) + " must be an " +
                            (w == LLMC_I32 ? "i32" : "f32") + " buffer");
  }
  for (uint32_t r = 0; r < op.num_results && r < LLMC_MAX_RESULTS; ++r) {
    if (op.results[r] >= g.buffers.size())
      continue;
    const uint32_t w = want(op.kind == LLMC_OP_MOE_GATING && r == 1);
    if (g.buffers[op.results[r]].dtype != w)
      throw InvalidArgument("result " + std::to_string(r) + " must be an " +
                            (w == LLMC_I32 ? "i32" : "f32") + " buffer");
  }
}

void checkBufferDesc(const llmc_buffer_desc &b, uint32_t index) {
  std::string where = "buffer " + std::to_string(index);
  if (b.dtype != LLMC_F32 && b.dtype != LLMC_I32)
    throw InvalidArgument(where + ": activations must be f32 (or i32 "
                                  "expert ids)");
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
  if (w.dtype > LLMC_KQ_HEADER || w.dtype == LLMC_FP8_E4M3)
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

const char *opName(uint32_t kind) {
  return kind < LLMC_OP_COUNT ? kOps[kind].name : nullptr;
}

std::string opWhere(const Graph &g, size_t index) {
  const char *name = opName(g.ops[index].kind);
  return "graph '" + g.name + "' op " + std::to_string(index) + " (" +
         (name ? name : "unknown") + ")";
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
  g.weightsFileMapped = desc.flags & LLMC_GRAPH_WEIGHTS_FILE_MAPPED;
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
      if (op.kind >= LLMC_OP_COUNT)
        throw InvalidArgument("op " + std::to_string(i) + ": unknown kind " +
                              std::to_string(op.kind));
      try {
        kOps[op.kind].check(op, g);
        checkBufferDtypes(op, g);
      } catch (const InvalidArgument &e) {
        throw InvalidArgument("op " + std::to_string(i) + " (" +
                              kOps[op.kind].name + "): " + e.what());
      }
    }
  } catch (const InvalidArgument &e) {
    throw InvalidArgument("graph '" + g.name + "': " + e.what());
  }
  return g;
}

bool checksPass(const llmc_op_desc &op, const llmc_graph_desc &graph) {
  if (op.kind >= LLMC_OP_COUNT)
    return false;
  try {
    // Only the descriptors matter to the checks; weights are not copied.
    Graph g;
    g.buffers.assign(graph.buffers, graph.buffers + graph.num_buffers);
    g.weights.assign(graph.weights, graph.weights + graph.num_weights);
    kOps[op.kind].check(op, g);
    checkBufferDtypes(op, g);
    return true;
  } catch (...) {
    return false;
  }
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

void expectCols(int64_t actual, int64_t expected, const char *what) {
  if (actual != expected)
    throw InvalidArgument(std::string(what) + " has " + std::to_string(actual) +
                          " columns, expected " + std::to_string(expected));
}

size_t dtypeSize(uint32_t dtype) {
  switch (dtype) {
  case LLMC_F32:
  case LLMC_I32:
    return 4;
  case LLMC_F16:
  case LLMC_BF16:
    return 2;
  default:
    return 0;
  }
}

int64_t weightElements(const llmc_weight_desc &w) {
  int64_t n = 1;
  for (uint32_t d = 0; d < w.rank; ++d)
    n *= w.shape[d];
  return n;
}

void expectFloatWeight(const llmc_weight_desc &w, int64_t elements,
                       const char *what) {
  if (w.dtype != LLMC_F32 && w.dtype != LLMC_BF16 && w.dtype != LLMC_F16)
    throw InvalidArgument(std::string(what) + " must be f32, bf16 or f16");
  if (weightElements(w) != elements)
    throw InvalidArgument(std::string(what) + " has " +
                          std::to_string(weightElements(w)) +
                          " values, expected " + std::to_string(elements));
  if (w.nbytes < size_t(elements) * dtypeSize(w.dtype))
    throw InvalidArgument(std::string(what) + " is truncated");
}

void loadWeight(const llmc_weight_desc &w, int64_t offset, int64_t count,
                float *out) {
  const auto *bytes = static_cast<const uint8_t *>(w.data);
  for (int64_t i = 0; i < count; ++i) {
    int64_t e = offset + i;
    // memcpy: plan weights are only guaranteed to be byte-addressable here.
    if (w.dtype == LLMC_F32) {
      std::memcpy(&out[i], bytes + e * 4, 4);
    } else if (w.dtype == LLMC_E8M0) {
      out[i] = e8m0ToFloat(bytes[e]);
    } else {
      uint16_t h;
      std::memcpy(&h, bytes + e * 2, 2);
      out[i] = w.dtype == LLMC_BF16 ? bf16ToFloat(h) : f16ToFloat(h);
    }
  }
}

void kquantRow(const llmc_weight_desc &w, const llmc_weight_desc &headers,
               int64_t n, int64_t K, float *out) {
  const kquant::Format f = kquantFormat(w.dtype);
  const kquant::Layout l = kquant::layout(f);
  const int64_t blocks = K / kquant::kBlock;
  const auto *codes =
      static_cast<const uint8_t *>(w.data) + n * blocks * l.codeBytes;
  const auto *head =
      static_cast<const uint8_t *>(headers.data) + n * blocks * l.headerBytes;
  for (int64_t b = 0; b < blocks; ++b)
    kquant::decode(f, head + b * l.headerBytes, codes + b * l.codeBytes,
                   out + b * kquant::kBlock);
}

} // namespace llmc::common
