//===- execute.cpp - Preparing and running a graph ------------------------===//
//
// Prepare validates the graph with ref's checks and compiles each op into a
// Kernel. A step validates its metadata with ref's checks, places the
// buffers as ref does (planned affine offsets, or one allocation each) and
// runs the kernels in order.
//
//===----------------------------------------------------------------------===//
#include "execute.h"

#include <cstring>
#include <new>

namespace llmc::cpu {
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
      out[i].data = p.separate[i].reserve(size_t(out[i].rows * out[i].cols));
    }
    return out;
  }
  int64_t bytes = g.workspaceT * T + g.workspaceB * B + g.workspaceC;
  float *base = p.workspace.reserve(size_t(bytes + 3) / 4);
  for (size_t i = 0; i < g.buffers.size(); ++i) {
    const llmc_buffer_desc &b = g.buffers[i];
    int64_t offset = b.offset_t * T + b.offset_b * B + b.offset_const;
    out[i] = {base + offset / 4, evalRows(b.rows, T, B), b.cols};
    if (offset + out[i].rows * out[i].cols * 4 > bytes)
      throw InvalidArgument("graph '" + g.name + "': buffer " +
                            std::to_string(i) +
                            " does not fit in the workspace of " +
                            std::to_string(bytes) + " bytes");
  }
  return out;
}

// Row-wise ops read all of a row before writing it, so their result may be
// one of their operands; nothing else may overlap (as in ref).
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
  default:
    return makeElementwise(op, g, b);
  }
}

} // namespace

float *AlignedBuffer::reserve(size_t n) {
  if (n > floats || !data) {
    size_t bytes = (std::max<size_t>(n, 1) * 4 + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, bytes);
    if (!p)
      throw std::bad_alloc();
    data.reset(static_cast<float *>(p));
    floats = n;
  }
  return data.get();
}

void prepareGraph(Backend &b, const llmc_graph_desc &desc, Prepared &p) {
  p.graph = ref::loadGraph(desc); // every check ref makes, with its messages
  p.kernels.reserve(p.graph.ops.size());
  for (const llmc_op_desc &op : p.graph.ops)
    p.kernels.push_back(makeKernel(op, p.graph, b));
}

void executeGraph(Prepared &p, KvCache *cache, const llmc_step_args &args) {
  const Graph &g = p.graph;
  ref::checkStepArgs(g, cache, args);
  Step step{g, args, cache, placeBuffers(p, args.num_tokens, args.num_seqs)};
  const Matrix &logits = step.buffers[g.logitsBuffer];
  if (args.num_logits > logits.rows)
    throw InvalidArgument("step: num_logits " +
                          std::to_string(args.num_logits) +
                          " exceeds the logits buffer's " +
                          std::to_string(logits.rows) + " rows");

  for (size_t i = 0; i < g.ops.size(); ++i) {
    const llmc_op_desc &op = g.ops[i];
    try {
      checkAliasing(op, step);
      p.kernels[i](step);
    } catch (const InvalidArgument &e) {
      throw InvalidArgument("graph '" + g.name + "' op " + std::to_string(i) +
                            " (" + ref::findKernel(op.kind)->name +
                            "): " + e.what());
    }
  }

  if (args.num_logits > 0)
    std::memcpy(args.logits, logits.data,
                size_t(args.num_logits * logits.cols) * sizeof(float));
}

} // namespace llmc::cpu
