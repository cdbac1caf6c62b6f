//===- execute.cpp - Preparing and running a graph ------------------------===//
#include "execute.h"

#include "common/op_checks.h"

namespace llmc::cpu {
namespace {

Kernel makeKernel(const llmc_op_desc &op, const Graph &g, Backend &b) {
  switch (op.kind) {
  case LLMC_OP_EMBEDDING:
    return makeEmbedding(op, g, b);
  case LLMC_OP_RMS_NORM:
  case LLMC_OP_ADD_RMS_NORM:
  case LLMC_OP_LAYER_NORM:
    return makeNorm(op, g, b);
  case LLMC_OP_LINEAR:
    return makeLinear(op, g, b);
  case LLMC_OP_ROPE:
    return makeRope(op, g, b);
  case LLMC_OP_KV_WRITE:
    return makeKvWrite(op, g, b);
  case LLMC_OP_PREFILL_ATTENTION:
    return makePrefillAttention(op, g, b);
  case LLMC_OP_DECODE_ATTENTION:
    return makeDecodeAttention(op, g, b);
  case LLMC_OP_MOE_GATING:
  case LLMC_OP_EXPERT_LINEAR:
  case LLMC_OP_MOE_COMBINE:
  case LLMC_OP_EXPERT_BIAS:
    return makeMoe(op, g, b);
  case LLMC_OP_ALL_REDUCE:
    return [op, &b](Step &step) { b.allReduce(op, step); };
  default:
    return makeElementwise(op, g, b);
  }
}

/// The SWIGLU (SiLU, one run a row) that is the only reader of LINEAR op
/// i's result, which is not the logits; -1 when there is none.
int64_t swigluAfter(const Graph &g, size_t i) {
  const uint32_t result = g.ops[i].results[0];
  if (result == g.logitsBuffer)
    return -1;
  int64_t reader = -1;
  for (size_t j = i + 1; j < g.ops.size(); ++j)
    for (uint32_t s = 0; s < g.ops[j].num_operands; ++s)
      if (g.ops[j].operands[s].kind == LLMC_OPERAND_BUFFER &&
          g.ops[j].operands[s].index == result) {
        if (reader >= 0 || s != 0)
          return -1;
        reader = int64_t(j);
      }
  if (reader < 0)
    return -1;
  const llmc_op_desc &op = g.ops[size_t(reader)];
  return op.kind == LLMC_OP_SWIGLU && op.i[0] == 0 && common::gatedRuns(op) == 1
             ? reader
             : -1;
}

} // namespace

void prepareGraph(Backend &b, const llmc_graph_desc &desc, Prepared &p) {
  p.graph = common::loadGraph(desc);
  const Graph &g = p.graph;
  p.kernels.resize(g.ops.size());
  p.labels.resize(g.ops.size());
  std::vector<bool> fused(g.ops.size(), false);
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const llmc_op_desc &op = g.ops[i];
    // A linear's time depends on its weights' format most of all.
    std::string label = common::opName(op.kind);
    if ((op.kind == LLMC_OP_LINEAR || op.kind == LLMC_OP_EXPERT_LINEAR) &&
        op.num_operands > 1 && op.operands[1].kind == LLMC_OPERAND_WEIGHT)
      label =
          label + " " + llmc_dtype_name(g.weights[op.operands[1].index].dtype);
    if (fused[i]) { // run by the linear before it
      p.kernels[i] = [](Step &) {};
      p.labels[i] = label + " (in the linear)";
      continue;
    }
    // gate/up then SWIGLU: the linear writes silu(gate) · up itself, and
    // its 2I-wide result (a prompt's largest activation) is never stored.
    const int64_t swiglu = op.kind == LLMC_OP_LINEAR ? swigluAfter(g, i) : -1;
    if (swiglu >= 0)
      p.kernels[i] = makeLinearSwiglu(op, g.ops[size_t(swiglu)], g, b);
    if (p.kernels[i]) {
      fused[size_t(swiglu)] = true;
      label += " + swiglu";
    } else {
      p.kernels[i] = makeKernel(op, g, b);
    }
    p.labels[i] = std::move(label);
  }
}

namespace {

/// The profile's name for a step: its graph, with a prefill step that also
/// carries single-token (decode) sequences counted apart as "mixed".
std::string stepLabel(const std::string &graph, const llmc_step_args &a) {
  if (graph != "prefill" || !a.query_start)
    return graph;
  bool one = false, many = false;
  for (int32_t s = 0; s < a.num_seqs; ++s)
    (a.query_start[s + 1] - a.query_start[s] == 1 ? one : many) = true;
  return one && many ? "mixed" : graph;
}

} // namespace

void executeGraph(Prepared &p, KvCache *cache, const llmc_step_args &args,
                  OpProfile *profile) {
  if (!profile) {
    common::runHostStep(p.graph, p.workspace, cache, args,
                        [&](size_t i, Step &step) { p.kernels[i](step); });
    return;
  }
  const std::string graph = stepLabel(p.graph.name, args);
  common::runHostStep(
      p.graph, p.workspace, cache, args, [&](size_t i, Step &step) {
        auto t0 = std::chrono::steady_clock::now();
        p.kernels[i](step);
        std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
        profile->add(graph, p.labels[i], d.count());
      });
}

} // namespace llmc::cpu
