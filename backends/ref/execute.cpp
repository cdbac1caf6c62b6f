//===- execute.cpp - Running a prepared graph for one step
//-----------------===//
//
// A step evaluates every buffer's rows for its T and B, places the buffers
// (at their planned workspace offsets, or each on its own when the graph
// has no memory plan), runs the ops in order and copies the logits out.
//
//===----------------------------------------------------------------------===//
#include "ref.h"

#include <cstring>

namespace llmc::ref {
namespace {

int64_t evalRows(const llmc_rows &r, int64_t T, int64_t B) {
  return r.t_coef * T + r.b_coef * B + r.constant;
}

bool hasMemoryPlan(const Graph &g) {
  return g.workspaceT || g.workspaceB || g.workspaceC;
}

std::vector<Matrix> placeBuffers(Prepared &p, int64_t T, int64_t B) {
  const Graph &g = p.graph;
  std::vector<Matrix> out(g.buffers.size());
  if (!hasMemoryPlan(g)) {
    p.separate.resize(g.buffers.size());
    for (size_t i = 0; i < g.buffers.size(); ++i) {
      const llmc_buffer_desc &b = g.buffers[i];
      out[i] = {nullptr, evalRows(b.rows, T, B), b.cols};
      p.separate[i].resize(size_t(out[i].rows * out[i].cols));
      out[i].data = p.separate[i].data();
    }
    return out;
  }
  int64_t bytes = g.workspaceT * T + g.workspaceB * B + g.workspaceC;
  if (p.workspace.size() * 4 < size_t(bytes))
    p.workspace.resize(size_t(bytes + 3) / 4);
  for (size_t i = 0; i < g.buffers.size(); ++i) {
    const llmc_buffer_desc &b = g.buffers[i];
    int64_t offset = b.offset_t * T + b.offset_b * B + b.offset_const;
    out[i] = {p.workspace.data() + offset / 4, evalRows(b.rows, T, B), b.cols};
    if (offset + out[i].rows * out[i].cols * 4 > bytes)
      throw InvalidArgument("graph '" + g.name + "': buffer " +
                            std::to_string(i) +
                            " does not fit in the workspace of " +
                            std::to_string(bytes) + " bytes");
  }
  return out;
}

// Row-wise ops read all of a row before writing it, so their result may be
// one of their operands; nothing else may overlap.
bool mayRunInPlace(uint32_t kind) {
  switch (kind) {
  case LLMC_OP_RMS_NORM:
  case LLMC_OP_ADD_RMS_NORM:
  case LLMC_OP_LAYER_NORM:
  case LLMC_OP_ROPE:
  case LLMC_OP_ADD:
  case LLMC_OP_MUL:
  case LLMC_OP_SILU:
  case LLMC_OP_GELU:
    return true;
  default:
    return false;
  }
}

bool overlap(const Matrix &a, const Matrix &b) {
  return a.data < b.data + b.rows * b.cols && b.data < a.data + a.rows * a.cols;
}

bool same(const Matrix &a, const Matrix &b) {
  return a.data == b.data && a.rows == b.rows && a.cols == b.cols;
}

void checkAliasing(const llmc_op_desc &op, const Step &step) {
  for (uint32_t r = 0; r < op.num_results; ++r) {
    Matrix res = step.result(op, r);
    for (uint32_t r2 = r + 1; r2 < op.num_results; ++r2)
      if (overlap(res, step.result(op, r2)))
        throw InvalidArgument("results overlap in the workspace");
    for (uint32_t i = 0; i < op.num_operands; ++i) {
      if (op.operands[i].kind != LLMC_OPERAND_BUFFER)
        continue;
      Matrix in = step.operand(op, i);
      if (overlap(res, in) && !(mayRunInPlace(op.kind) && same(res, in)))
        throw InvalidArgument("result " + std::to_string(r) +
                              " overlaps operand " + std::to_string(i) +
                              " in the workspace");
    }
  }
}

} // namespace

void execute(Prepared &p, KvCache *cache, const llmc_step_args &args) {
  const Graph &g = p.graph;
  checkStepArgs(g, cache, args);
  Step step{g, args, cache, placeBuffers(p, args.num_tokens, args.num_seqs)};
  const Matrix &logits = step.buffers[g.logitsBuffer];
  if (args.num_logits > logits.rows)
    throw InvalidArgument("step: num_logits " +
                          std::to_string(args.num_logits) +
                          " exceeds the logits buffer's " +
                          std::to_string(logits.rows) + " rows");

  for (size_t i = 0; i < g.ops.size(); ++i) {
    const llmc_op_desc &op = g.ops[i];
    const OpKernel *kernel = findKernel(op.kind);
    try {
      checkAliasing(op, step);
      kernel->run(op, step);
    } catch (const InvalidArgument &e) {
      throw InvalidArgument("graph '" + g.name + "' op " + std::to_string(i) +
                            " (" + kernel->name + "): " + e.what());
    }
  }

  if (args.num_logits > 0)
    std::memcpy(args.logits, logits.data,
                size_t(args.num_logits * logits.cols) * sizeof(float));
}

} // namespace llmc::ref
