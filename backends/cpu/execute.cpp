//===- execute.cpp - Preparing and running a graph ------------------------===//
#include "execute.h"

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

} // namespace

void prepareGraph(Backend &b, const llmc_graph_desc &desc, Prepared &p) {
  p.graph = common::loadGraph(desc);
  p.kernels.reserve(p.graph.ops.size());
  for (const llmc_op_desc &op : p.graph.ops) {
    p.kernels.push_back(makeKernel(op, p.graph, b));
    // A linear's time depends on its weights' format most of all.
    std::string label = common::opName(op.kind);
    if ((op.kind == LLMC_OP_LINEAR || op.kind == LLMC_OP_EXPERT_LINEAR) &&
        op.num_operands > 1 && op.operands[1].kind == LLMC_OPERAND_WEIGHT)
      label = label + " " +
              llmc_dtype_name(p.graph.weights[op.operands[1].index].dtype);
    p.labels.push_back(std::move(label));
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
