//===- ops.cpp - Compiling each op into a closure that enqueues kernels ---===//
//
// Everything prepare can decide is captured: device weight pointers, column
// counts, attributes. A closure reads only the step's buffer addresses and
// rows and the fixed device step arguments, so the same closures serve
// direct launches and graph capture. Each op also gets a host check with
// the run-time checks every backend makes, before anything is enqueued.
//
//===----------------------------------------------------------------------===//
#include "cuda.h"

#include "common/op_checks.h"

namespace llmc::cuda {
namespace {

using common::expectRows;

const KvPool &needKv(const KvPool *kv) {
  if (!kv)
    throw InvalidArgument("this graph uses the KV cache but none was given");
  return *kv;
}

const int32_t *inputOf(const StepCtx &c, const llmc_operand &o) {
  return o.index == 0 ? c.args.tokens : c.args.positions;
}

// Row-wise ops: the result has x's rows.
Check sameRows(uint32_t x, std::vector<uint32_t> others) {
  return [=](const llmc_step_args &, const KvPool *,
             const std::vector<int64_t> &rows) {
    for (uint32_t o : others)
      expectRows(rows[o], rows[x], "operand or result");
  };
}

} // namespace

bool supportsOp(const llmc_op_desc &op) {
  if (op.kind == LLMC_OP_PREFILL_ATTENTION ||
      op.kind == LLMC_OP_DECODE_ATTENTION)
    return op.i[3] > 0 && op.i[3] <= kAttentionMaxHeadDim;
  return op.kind < LLMC_OP_COUNT;
}

void makeOp(const llmc_op_desc &op, const Graph &g, Backend &b, Prepared &p,
            Kernel &kernel, Check &check) {
  auto bufOf = [&](int slot) { return op.operands[slot].index; };
  uint32_t r0 = op.results[0];
  int64_t cols = g.buffers[r0].cols;
  switch (op.kind) {
  case LLMC_OP_EMBEDDING: {
    const llmc_weight_desc &t = g.weights[bufOf(0)];
    auto table = uploadWeight(b, t);
    p.weights.push_back(table);
    const void *data = table->get();
    uint32_t dtype = t.dtype;
    const float *scales = nullptr;
    int64_t group = 1;
    const uint8_t *headers = nullptr;
    if (op.num_operands == 3) { // i8 and f32 scales, or K-quant headers
      auto s = uploadWeight(b, g.weights[bufOf(2)]);
      p.weights.push_back(s);
      if (common::isKQuant(dtype))
        headers = static_cast<const uint8_t *>(s->get());
      else
        scales = static_cast<const float *>(s->get());
      group = op.i[0];
    }
    llmc_operand ids = op.operands[1];
    int64_t vocab = t.shape[0];
    kernel = [=](StepCtx &c) {
      launchEmbedding(c.stream, data, dtype, scales, headers, group,
                      inputOf(c, ids), c.buf[r0], c.rows[r0], cols);
    };
    check = [=](const llmc_step_args &a, const KvPool *,
                const std::vector<int64_t> &rows) {
      expectRows(rows[r0], a.num_tokens, "the result");
      const int32_t *v = ids.index == 0 ? a.tokens : a.positions;
      for (int64_t t = 0; t < a.num_tokens; ++t)
        if (v[t] < 0 || v[t] >= vocab)
          throw InvalidArgument(
              "id " + std::to_string(v[t]) + " at row " + std::to_string(t) +
              " is outside the table of " + std::to_string(vocab) + " rows");
    };
    return;
  }
  case LLMC_OP_RMS_NORM:
  case LLMC_OP_ADD_RMS_NORM:
  case LLMC_OP_LAYER_NORM: {
    bool add = op.kind == LLMC_OP_ADD_RMS_NORM;
    int wSlot = add ? 2 : 1;
    // RMS_NORM over runs of `width` columns: a [rows * cols / width, width]
    // norm of the same contiguous rows.
    const int64_t width =
        op.kind == LLMC_OP_RMS_NORM ? common::rmsNormWidth(op, cols) : cols;
    auto w = uploadWeightF32(b, g.weights[bufOf(wSlot)], width);
    p.weights.push_back(w);
    const float *wp = w->as<float>(), *bp = nullptr;
    if (op.kind == LLMC_OP_LAYER_NORM) {
      auto bias = uploadWeightF32(b, g.weights[bufOf(2)], cols);
      p.weights.push_back(bias);
      bp = bias->as<float>();
    }
    uint32_t x = bufOf(0), r = add ? bufOf(1) : 0;
    uint32_t r1 = add ? op.results[1] : 0;
    float eps = float(op.f[0]);
    uint32_t kind = op.kind;
    kernel = [=](StepCtx &c) {
      if (kind == LLMC_OP_RMS_NORM)
        launchRmsNorm(c.stream, c.buf[x], wp, c.buf[r0],
                      c.rows[x] * (cols / width), width, eps);
      else if (kind == LLMC_OP_LAYER_NORM)
        launchLayerNorm(c.stream, c.buf[x], wp, bp, c.buf[r0], c.rows[x], cols,
                        eps);
      else
        launchAddRmsNorm(c.stream, c.buf[x], c.buf[r], wp, c.buf[r0], c.buf[r1],
                         c.rows[x], cols, eps);
    };
    check = add ? sameRows(x, {r, r0, r1}) : sameRows(x, {r0});
    return;
  }
  case LLMC_OP_LINEAR: {
    kernel = makeLinear(op, g, b, p);
    check = sameRows(bufOf(0), {r0});
    return;
  }
  case LLMC_OP_ROPE: {
    int64_t heads = op.i[0], headDim = op.i[1], rot = op.i[2], style = op.i[3];
    auto inv = uploadWeightF32(b, g.weights[bufOf(2)], rot / 2);
    p.weights.push_back(inv);
    const float *invFreq = inv->as<float>();
    const float *longFreq = nullptr; // LongRoPE's long table
    if (op.i[4] > 0) {
      auto longInv = uploadWeightF32(b, g.weights[bufOf(3)], rot / 2);
      p.weights.push_back(longInv);
      longFreq = longInv->as<float>();
    }
    uint32_t x = bufOf(0);
    llmc_operand pos = op.operands[1];
    float scaling = float(op.f[0]);
    kernel = [=](StepCtx &c) {
      launchRope(c.stream, c.buf[x], inputOf(c, pos), invFreq, longFreq,
                 c.args.ropeLong, c.buf[r0], c.rows[x], heads, headDim, rot,
                 style, scaling);
    };
    check = [=](const llmc_step_args &a, const KvPool *,
                const std::vector<int64_t> &rows) {
      expectRows(rows[x], a.num_tokens, "x");
      expectRows(rows[r0], rows[x], "the result");
    };
    return;
  }
  case LLMC_OP_ADD:
  case LLMC_OP_MUL:
  case LLMC_OP_SILU:
  case LLMC_OP_GELU: {
    Pointwise f =
        op.kind == LLMC_OP_ADD   ? Pointwise::Add
        : op.kind == LLMC_OP_MUL ? Pointwise::Mul
        : op.kind == LLMC_OP_SILU
            ? Pointwise::Silu
            : (op.i[0] == 1 ? Pointwise::GeluTanh : Pointwise::GeluErf);
    uint32_t a0 = bufOf(0);
    bool binary = op.kind == LLMC_OP_ADD || op.kind == LLMC_OP_MUL;
    uint32_t a1 = binary ? bufOf(1) : a0;
    kernel = [=](StepCtx &c) {
      launchPointwise(c.stream, f, c.buf[a0], c.buf[a1], c.buf[r0],
                      c.rows[a0] * cols);
    };
    check = binary ? sameRows(a0, {a1, r0}) : sameRows(a0, {r0});
    return;
  }
  case LLMC_OP_SWIGLU: {
    uint32_t x = bufOf(0);
    const int act = int(op.i[0]);
    const bool interleaved = op.i[2] == 1;
    const float limit = float(op.f[0]), alpha = float(op.f[1]);
    // One run of [2I] per chosen expert: rows * runs rows of [2I].
    const int64_t runs = common::gatedRuns(op);
    kernel = [=](StepCtx &c) {
      launchSwiglu(c.stream, c.buf[x], c.buf[r0], c.rows[x] * runs, cols / runs,
                   act, interleaved, limit, alpha);
    };
    check = sameRows(x, {r0});
    return;
  }
  case LLMC_OP_SCALE:
  case LLMC_OP_SOFTCAP: {
    Pointwise f =
        op.kind == LLMC_OP_SCALE ? Pointwise::Scale : Pointwise::Softcap;
    uint32_t x = bufOf(0);
    float alpha = float(op.f[0]);
    kernel = [=](StepCtx &c) {
      launchPointwise(c.stream, f, c.buf[x], c.buf[x], c.buf[r0],
                      c.rows[x] * cols, alpha);
    };
    check = sameRows(x, {r0});
    return;
  }
  case LLMC_OP_SLICE: {
    uint32_t x = bufOf(0);
    int64_t xCols = g.buffers[x].cols, offset = op.i[0];
    kernel = [=](StepCtx &c) {
      launchSlice(c.stream, c.buf[x], c.buf[r0], c.rows[x], xCols, cols,
                  offset);
    };
    check = sameRows(x, {r0});
    return;
  }
  case LLMC_OP_TAKE_ROWS: {
    uint32_t x = bufOf(0);
    kernel = [=](StepCtx &c) {
      launchTakeRows(c.stream, c.buf[x], c.args.logitsRows, c.args.step,
                     c.buf[r0], c.rows[r0], cols);
    };
    check = [=](const llmc_step_args &a, const KvPool *,
                const std::vector<int64_t> &rows) {
      if (a.num_logits > rows[r0])
        throw InvalidArgument("num_logits " + std::to_string(a.num_logits) +
                              " exceeds the result's " +
                              std::to_string(rows[r0]) + " rows");
      for (int64_t i = 0; i < a.num_logits; ++i)
        if (a.logits_rows[i] >= rows[x])
          throw InvalidArgument("logits_rows[" + std::to_string(i) +
                                "] = " + std::to_string(a.logits_rows[i]) +
                                " is not a row of x");
    };
    return;
  }
  case LLMC_OP_KV_WRITE: {
    uint32_t k = bufOf(0), v = bufOf(1);
    int64_t layer = op.i[0], kCols = g.buffers[k].cols;
    kernel = [=](StepCtx &c) {
      const llmc_kv_cache_desc &d = c.kv->desc;
      launchKvWrite(c.stream, c.buf[k], c.buf[v], c.args.slotsOf(*c.kv, layer),
                    c.kv->k(layer), c.kv->v(layer),
                    {d.dtype, int32_t(d.block_size), int32_t(d.kv_heads),
                     int32_t(d.head_dim), int64_t(c.kv->blockBytes)},
                    c.rows[k]);
    };
    check = [=](const llmc_step_args &a, const KvPool *kv,
                const std::vector<int64_t> &rows) {
      const llmc_kv_cache_desc &d = needKv(kv).desc;
      common::expectCacheFits(
          d, {layer, 0, d.kv_heads, d.head_dim, 0, 0.0f, 0.0f});
      common::expectCols(kCols, int64_t(d.kv_heads) * d.head_dim, "k");
      expectRows(rows[k], a.num_tokens, "k");
      expectRows(rows[v], a.num_tokens, "v");
    };
    return;
  }
  case LLMC_OP_PREFILL_ATTENTION:
  case LLMC_OP_DECODE_ATTENTION: {
    bool decode = op.kind == LLMC_OP_DECODE_ATTENTION;
    uint32_t q = bufOf(0);
    int64_t layer = op.i[0];
    int32_t heads = int32_t(op.i[1]), kvHeads = int32_t(op.i[2]),
            headDim = int32_t(op.i[3]), window = int32_t(op.i[4]);
    float scale = float(op.f[0]), softcap = float(op.f[1]);
    const float *sinks = nullptr;
    if (op.num_operands > 1) {
      auto sd = uploadWeightF32(b, g.weights[bufOf(1)], heads);
      p.weights.push_back(sd);
      sinks = sd->as<float>();
    }
    p.attnHeads = std::max<int64_t>(p.attnHeads, heads);
    p.attnHeadDim = std::max<int64_t>(p.attnHeadDim, headDim);
    p.attnKvHeads = std::max<int64_t>(p.attnKvHeads, kvHeads);
    // Prefill tiles are cut for the largest group of the graph: a kernel of
    // a smaller group then sees some rows twice and writes them identically.
    if (!decode)
      p.tileGroup = std::max(p.tileGroup, heads / kvHeads);
    kernel = [=](StepCtx &c) {
      AttentionArgs a{};
      a.q = c.buf[q];
      a.out = c.buf[r0];
      a.kCache = c.kv->k(layer);
      a.vCache = c.kv->v(layer);
      a.cacheDtype = c.kv->desc.dtype;
      a.blockBytes = int64_t(c.kv->blockBytes);
      a.blockTables = c.args.blockTablesOf(*c.kv, layer);
      a.contextLens = c.args.contextLens;
      a.queryStart = c.args.queryStart;
      a.tiles = c.args.tiles;
      a.step = c.args.step;
      a.heads = heads, a.kvHeads = kvHeads, a.headDim = headDim;
      a.window = window;
      a.blockSize = int32_t(c.kv->desc.block_size);
      a.scale = scale;
      a.softcap = softcap;
      a.decode = decode;
      a.gridX = decode ? int32_t(c.rows[q]) : c.tiles;
      a.splits = decode ? c.splits : 1;
      a.partial = c.partial;
      a.sinks = sinks;
      launchAttention(c.stream, a);
    };
    check = [=](const llmc_step_args &a, const KvPool *kv,
                const std::vector<int64_t> &rows) {
      common::expectCacheFits(needKv(kv).desc, {layer, heads, kvHeads, headDim,
                                                window, scale, softcap});
      expectRows(rows[q], decode ? a.num_seqs : a.num_tokens, "q");
      expectRows(rows[r0], rows[q], "the result");
    };
    return;
  }
  case LLMC_OP_MOE_GATING: {
    uint32_t x = bufOf(0), r1 = op.results[1];
    const int64_t E = g.buffers[x].cols, k = op.i[0], mode = op.i[2];
    const bool renormalize = op.i[1] == 1;
    if (E > 512)
      throw InvalidArgument("the cuda gating kernel takes at most 512 "
                            "experts, not " +
                            std::to_string(E));
    kernel = [=](StepCtx &c) {
      launchMoeGating(c.stream, c.buf[x], c.buf[r0],
                      reinterpret_cast<int32_t *>(c.buf[r1]), c.rows[x], E, k,
                      renormalize, mode);
    };
    check = sameRows(x, {r0, r1});
    return;
  }
  case LLMC_OP_EXPERT_LINEAR: {
    const common::ExpertShape s = common::expertShape(op, g);
    const llmc_weight_desc &w = g.weights[bufOf(1)];
    auto wd = uploadWeight(b, w);
    p.weights.push_back(wd);
    const float *scales = nullptr;
    const uint8_t *e8m0 = nullptr;
    if (common::isQuantized(w.dtype)) {
      auto sd = uploadWeight(b, g.weights[bufOf(2)]);
      p.weights.push_back(sd);
      if (w.dtype == LLMC_MXFP4 || common::isKQuant(w.dtype))
        e8m0 = static_cast<const uint8_t *>(sd->get());
      else
        scales = sd->as<float>();
    }
    const void *W = wd->get();
    const uint32_t dtype = w.dtype, x = bufOf(0), ids = bufOf(3);
    const int64_t xCols = g.buffers[x].cols;
    kernel = [=](StepCtx &c) {
      launchExpertGemv(c.stream,
                       {c.buf[x], 0, s.K, s.N, W, dtype, scales, s.group,
                        nullptr, c.buf[r0], e8m0},
                       {reinterpret_cast<const int32_t *>(c.buf[ids]),
                        s.experts, s.k, xCols, s.perRun},
                       c.rows[x] * s.k);
    };
    check = sameRows(x, {ids, r0});
    return;
  }
  case LLMC_OP_EXPERT_BIAS: {
    const llmc_weight_desc &bw = g.weights[bufOf(1)];
    const int64_t E = bw.shape[0], k = op.i[0], n = cols / k;
    auto bd = uploadWeightF32(b, bw, E * n);
    p.weights.push_back(bd);
    const float *bias = bd->as<float>();
    const uint32_t y = bufOf(0), ids = bufOf(2);
    kernel = [=](StepCtx &c) {
      launchExpertBias(c.stream, c.buf[y], bias,
                       reinterpret_cast<const int32_t *>(c.buf[ids]), c.buf[r0],
                       c.rows[y], k, n, E);
    };
    check = sameRows(y, {ids, r0});
    return;
  }
  case LLMC_OP_MOE_COMBINE: {
    uint32_t y = bufOf(0), w = bufOf(1);
    const int64_t k = op.i[0];
    kernel = [=](StepCtx &c) {
      launchMoeCombine(c.stream, c.buf[y], c.buf[w], c.buf[r0], c.rows[y], k,
                       cols);
    };
    check = sameRows(y, {w, r0});
    return;
  }
  case LLMC_OP_ALL_REDUCE: {
    if (!b.nccl)
      throw InvalidArgument("all_reduce needs a communicator (a "
                            "tensor-parallel plan runs under mpirun)");
    uint32_t x = bufOf(0);
    std::shared_ptr<NcclComm> nccl = b.nccl;
    kernel = [=](StepCtx &c) {
      ncclAllReduce(*nccl, c.buf[x], c.buf[r0], size_t(c.rows[x] * cols),
                    c.stream);
    };
    check = sameRows(x, {r0});
    return;
  }
  default:
    throw InvalidArgument("unknown op kind " + std::to_string(op.kind));
  }
}

} // namespace llmc::cuda
