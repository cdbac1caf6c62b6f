//===- execute.cpp - Preparing a graph and running steps ------------------===//
//
// A step: backends/common's step checks and each op's host checks, then the
// step's arrays are packed into a pinned staging buffer and copied with one
// cudaMemcpyAsync into fixed device buffers (DevStep + arrays at fixed
// capacity offsets), the ops are enqueued, the logits copied back.
//
// Decode steps (a graph with DECODE_ATTENTION and no PREFILL_ATTENTION,
// T == B) run at a batch bucket (1, 2, 4, ... 256): rows past B are padding
// (token 0, position 0, slot -1: not written, context 0: attention 0). The
// first step of a bucket is captured into a CUDA graph and replayed after;
// the graph reads every per-step value from the device buffers, so it stays
// valid until one of those buffers (or the workspace, scratch or KV pool)
// is reallocated, which bumps Backend::generation and forces a recapture.
// When capture fails the bucket is marked and launched directly.
//
//===----------------------------------------------------------------------===//
#include "common/step.h"
#include "cuda.h"

#include <algorithm>
#include <cstring>

namespace llmc::cuda {

void makeOp(const llmc_op_desc &op, const Graph &g, Backend &b, Prepared &p,
            Kernel &kernel, Check &check);

namespace {

constexpr int64_t kMaxBucket = 256;

size_t align256(size_t n) { return (n + 255) / 256 * 256; }

using common::Span;

// Byte offsets of every buffer at (T, B) and the workspace size.
std::vector<Span> layout(const Graph &g, int64_t T, int64_t B, size_t &bytes) {
  int64_t total = 0;
  std::vector<Span> spans = common::placeBuffers(g, T, B, 256, total);
  bytes = size_t(total);
  return spans;
}

// Offsets (in int32) of the arrays in Backend::args for the capacities.
struct ArgsLayout {
  int64_t tokens, positions, slots, logitsRows, tiles, ropeLong, queryStart,
      contextLens, blockTables, slidingSlots, slidingBlockTables, total;
};

ArgsLayout argsLayout(int64_t capT, int64_t capB, int64_t capBlocks) {
  ArgsLayout l{};
  l.tokens = 4; // after DevStep
  l.positions = l.tokens + capT;
  l.slots = l.positions + capT;
  l.logitsRows = l.slots + capT;
  l.tiles = l.logitsRows + capT;
  l.ropeLong = l.tiles + 2 * capT;
  l.queryStart = l.ropeLong + capT;
  l.contextLens = l.queryStart + capB + 1;
  l.blockTables = l.contextLens + capB;
  l.slidingSlots = l.blockTables + capB * capBlocks;
  l.slidingBlockTables = l.slidingSlots + capT;
  l.total = l.slidingBlockTables + capB * capBlocks;
  return l;
}

void ensureArgs(Backend &b, int64_t T, int64_t B, int64_t blocks) {
  if (T <= b.capT && B <= b.capB && blocks <= b.capBlocks && b.staging)
    return;
  int64_t capT = std::max<int64_t>({T, b.capT, 64});
  int64_t capB = std::max<int64_t>({B, b.capB, 64});
  int64_t capBlocks = std::max<int64_t>({blocks, b.capBlocks, 64});
  if (T > b.capT && b.capT)
    capT = std::max(capT, 2 * b.capT);
  if (blocks > b.capBlocks && b.capBlocks)
    capBlocks = std::max(capBlocks, 2 * b.capBlocks);
  ArgsLayout l = argsLayout(capT, capB, capBlocks);
  size_t bytes = size_t(l.total) * 4;
  b.args = DeviceBuffer(); // free first: the old one is no longer needed
  b.args = DeviceBuffer(b.budget, bytes, "the step arguments");
  if (b.staging)
    cudaFreeHost(b.staging);
  b.staging = nullptr;
  void *host = nullptr;
  check(cudaMallocHost(&host, bytes), "allocating the pinned step arguments");
  b.staging = static_cast<int32_t *>(host);
  b.capT = capT, b.capB = capB, b.capBlocks = capBlocks;
  ++b.generation;
}

void ensure(Backend &b, DeviceBuffer &buffer, size_t bytes, const char *what) {
  if (buffer.get() && buffer.size() >= bytes)
    return;
  size_t grown = std::max(bytes, buffer.size() + buffer.size() / 4);
  buffer = DeviceBuffer(); // release before allocating the larger one
  buffer = DeviceBuffer(b.budget, grown, what);
  ++b.generation;
}

int32_t decodeSplits(const Backend &b, const Prepared &p, int64_t B) {
  if (!p.attnKvHeads)
    return 1;
  int64_t group = p.attnHeads / p.attnKvHeads;
  int64_t ctas = B * p.attnKvHeads * attentionHeadChunks(int32_t(group));
  int64_t splits = (2 * int64_t(b.sms) + ctas - 1) / ctas;
  return int32_t(std::clamp<int64_t>(splits, 1, 32));
}

} // namespace

void prepareGraph(Backend &b, const llmc_graph_desc &desc, Prepared &p) {
  p.graph = common::loadGraph(desc);
  bool decode = false, prefill = false;
  for (size_t i = 0; i < p.graph.ops.size(); ++i) {
    const llmc_op_desc &op = p.graph.ops[i];
    if (!supportsOp(op))
      throw InvalidArgument(common::opWhere(p.graph, i) + ": head_dim above " +
                            std::to_string(kAttentionMaxHeadDim) +
                            " is not supported by the cuda backend");
    decode |= op.kind == LLMC_OP_DECODE_ATTENTION;
    prefill |= op.kind == LLMC_OP_PREFILL_ATTENTION;
  }
  p.decodeGraph = decode && !prefill;
  p.kernels.resize(p.graph.ops.size());
  p.checks.resize(p.graph.ops.size());
  for (size_t i = 0; i < p.graph.ops.size(); ++i)
    makeOp(p.graph.ops[i], p.graph, b, p, p.kernels[i], p.checks[i]);
  check(cudaDeviceSynchronize(), "uploading the weights");
}

void executeGraph(Backend &b, Prepared &p, KvPool *kv,
                  const llmc_step_args &a) {
  const Graph &g = p.graph;
  common::checkStepArgs(g, kv ? &kv->desc : nullptr, a);
  const int64_t T = a.num_tokens, B = a.num_seqs;

  // The launch size: a decode bucket, or the step itself.
  bool bucketed = p.decodeGraph && T == B && B <= kMaxBucket;
  int64_t Te = T, Be = B;
  if (bucketed) {
    int64_t bucket = 1;
    while (bucket < B)
      bucket *= 2;
    Te = Be = bucket;
  }

  // Host checks at the real sizes (ref's messages), then the layout.
  {
    size_t realBytes = 0;
    std::vector<Span> spans = layout(g, T, B, realBytes);
    std::vector<int64_t> rows(spans.size());
    for (size_t i = 0; i < spans.size(); ++i)
      rows[i] = spans[i].rows;
    common::checkLogitRows(g, spans, a);
    for (size_t i = 0; i < g.ops.size(); ++i) {
      try {
        common::checkAliasing(g.ops[i], spans);
        p.checks[i](a, kv, rows);
      } catch (const InvalidArgument &e) {
        throw InvalidArgument(common::opWhere(g, i) + ": " + e.what());
      }
    }
  }
  size_t wsBytes = 0;
  std::vector<Span> spans = layout(g, Te, Be, wsBytes);

  // Device memory for this size.
  ensure(b, p.workspace, wsBytes, "the workspace");
  size_t linearBytes = 0;
  for (const Prepared::LinearNeed &l : p.linears) {
    int64_t M = spans[l.x].rows;
    if (M <= kGemvMaxRows || !(l.half || l.quant))
      continue;
    size_t need = align256(size_t(M * l.K) * 2);
    if (l.quant)
      need += align256(size_t(l.N * l.K) * 2);
    linearBytes = std::max(linearBytes, need);
  }
  int32_t splits = p.decodeGraph ? decodeSplits(b, p, Be) : 1;
  size_t partialBytes =
      splits > 1 ? size_t(Be * p.attnHeads * splits * (p.attnHeadDim + 2)) * 4
                 : 0;
  ensure(b, b.scratch, align256(linearBytes) + partialBytes,
         "the scratch area");
  int64_t maxBlocks = std::max<int32_t>(a.max_blocks, 1);
  ensureArgs(b, std::max<int64_t>(Te, a.num_logits), Be, maxBlocks);

  // The step's arrays, padded to (Te, Be), into the staging buffer.
  ArgsLayout l = argsLayout(b.capT, b.capB, b.capBlocks);
  int32_t *h = b.staging;
  DevStep ds{int32_t(T), int32_t(B), int32_t(maxBlocks), a.num_logits};
  std::memcpy(h, &ds, sizeof ds);
  auto fill = [&](int64_t at, const int32_t *src, int64_t n, int64_t padded,
                  int32_t pad) {
    if (src)
      std::memcpy(h + at, src, size_t(n) * 4);
    else
      n = 0;
    std::fill(h + at + n, h + at + padded, pad);
  };
  fill(l.tokens, a.tokens, T, Te, 0);
  fill(l.positions, a.positions, T, Te, 0);
  fill(l.slots, a.slot_mapping, T, Te, -1);
  fill(l.logitsRows, a.logits_rows, a.num_logits, a.num_logits, 0);
  if (!a.logits_rows) // graphs without TAKE_ROWS never read them
    for (int32_t i = 0; i < a.num_logits; ++i)
      h[l.logitsRows + i] = i;
  int32_t tiles = 0;
  if (p.tileGroup && a.query_start) {
    int32_t per = attentionRowsPerTile(p.tileGroup);
    for (int64_t s = 0; s < B; ++s)
      for (int32_t r = 0; r < a.query_start[s + 1] - a.query_start[s];
           r += per) {
        h[l.tiles + 2 * tiles] = int32_t(s);
        h[l.tiles + 2 * tiles + 1] = r;
        ++tiles;
      }
  }
  // LongRoPE: per token, whether its sequence rotates with the long table.
  const std::vector<uint8_t> ropeLong = common::longRopeTokens(a);
  for (int64_t t = 0; t < Te; ++t)
    h[l.ropeLong + t] = t < int64_t(ropeLong.size()) && ropeLong[size_t(t)];
  if (a.query_start)
    fill(l.queryStart, a.query_start, B + 1, B + 1, 0);
  fill(l.contextLens, a.context_lens, B, Be, 0);
  int64_t tableValues = a.block_tables ? B * maxBlocks : 0;
  if (a.block_tables)
    std::memcpy(h + l.blockTables, a.block_tables, size_t(tableValues) * 4);
  // The sliding pool's (ABI 1.6): copied only when the pool has one.
  int64_t end = l.blockTables + tableValues;
  const bool sliding = kv && !kv->sliding.empty() && a.sliding_slot_mapping;
  if (sliding) {
    fill(l.slidingSlots, a.sliding_slot_mapping, T, Te, -1);
    if (a.sliding_block_tables)
      std::memcpy(h + l.slidingBlockTables, a.sliding_block_tables,
                  size_t(tableValues) * 4);
    end = l.slidingBlockTables + tableValues;
  }
  check(cudaMemcpyAsync(b.args.get(), h, size_t(end) * 4,
                        cudaMemcpyHostToDevice, b.stream),
        "copying the step arguments");

  int32_t *d = b.args.as<int32_t>();
  StepCtx c{b,  b.stream, Te,    Be,     {},      {},
            {}, kv,       tiles, splits, nullptr, nullptr};
  c.args.step = reinterpret_cast<const DevStep *>(d);
  c.args.tokens = d + l.tokens;
  c.args.positions = d + l.positions;
  c.args.slots = d + l.slots;
  c.args.logitsRows = d + l.logitsRows;
  c.args.tiles = d + l.tiles;
  c.args.ropeLong = d + l.ropeLong;
  c.args.queryStart = d + l.queryStart;
  c.args.contextLens = d + l.contextLens;
  c.args.blockTables = d + l.blockTables;
  if (sliding) {
    c.args.slidingSlots = d + l.slidingSlots;
    c.args.slidingBlockTables = d + l.slidingBlockTables;
  }
  c.scratch = b.scratch.as<char>();
  c.partial = reinterpret_cast<float *>(c.scratch + align256(linearBytes));
  c.buf.resize(spans.size());
  c.rows.resize(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    c.buf[i] =
        reinterpret_cast<float *>(p.workspace.as<char>() + spans[i].offset);
    c.rows[i] = spans[i].rows;
  }

  auto enqueueAll = [&](bool capturing) {
    for (size_t i = 0; i < g.ops.size(); ++i) {
      std::string where = common::opWhere(g, i);
      try {
        p.kernels[i](c);
      } catch (const CudaError &e) {
        throw CudaError(where + ": " + e.what());
      }
      check(cudaGetLastError(), where);
      if (b.syncEach && !capturing)
        check(cudaStreamSynchronize(b.stream), where);
    }
  };

  bool launched = false;
  if (bucketed && b.graphs) {
    Captured &cg = p.captured[Be];
    uint64_t kvId = kv ? kv->id : 0;
    if (cg.exec && (cg.generation != b.generation || cg.kvId != kvId)) {
      cudaGraphExecDestroy(cg.exec);
      cg = Captured{};
    }
    if (!cg.exec && !cg.failed) {
      cudaGraph_t graph = nullptr;
      bool ok = cudaStreamBeginCapture(
                    b.stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
      if (ok) {
        try {
          enqueueAll(true);
        } catch (...) {
          cudaStreamEndCapture(b.stream, &graph);
          if (graph)
            cudaGraphDestroy(graph);
          cudaGetLastError();
          throw;
        }
        ok = cudaStreamEndCapture(b.stream, &graph) == cudaSuccess && graph;
        if (ok)
          ok = cudaGraphInstantiate(&cg.exec, graph, 0) == cudaSuccess;
        if (graph)
          cudaGraphDestroy(graph);
      }
      if (!ok) {
        cudaGetLastError(); // capture is an optimization: launch directly
        cg = Captured{};
        cg.failed = true;
      } else {
        cg.generation = b.generation;
        cg.kvId = kvId;
      }
    }
    if (cg.exec) {
      check(cudaGraphLaunch(cg.exec, b.stream),
            "graph '" + g.name + "': launching the captured decode graph");
      launched = true;
    }
  }
  if (!launched)
    enqueueAll(false);

  if (a.num_logits > 0)
    check(cudaMemcpyAsync(a.logits, c.buf[g.logitsBuffer],
                          size_t(a.num_logits) *
                              size_t(g.buffers[g.logitsBuffer].cols) * 4,
                          cudaMemcpyDeviceToHost, b.stream),
          "graph '" + g.name + "': copying the logits");
  check(cudaStreamSynchronize(b.stream), "graph '" + g.name + "': step");
}

} // namespace llmc::cuda
