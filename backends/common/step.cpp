//===- step.cpp - Checking a step's metadata and placing its buffers ------===//
#include "common/step.h"
#include "common/op_checks.h"

#include <algorithm>

namespace llmc::common {
namespace {

struct Uses {
  bool tokens = false, positions = false, kvWrite = false, prefill = false,
       decode = false, takeRows = false;
};

Uses scan(const Graph &g) {
  Uses u;
  for (const llmc_op_desc &op : g.ops) {
    for (uint32_t i = 0; i < op.num_operands; ++i)
      if (op.operands[i].kind == LLMC_OPERAND_INPUT)
        (op.operands[i].index == 0 ? u.tokens : u.positions) = true;
    u.kvWrite |= op.kind == LLMC_OP_KV_WRITE;
    u.prefill |= op.kind == LLMC_OP_PREFILL_ATTENTION;
    u.decode |= op.kind == LLMC_OP_DECODE_ATTENTION;
    u.takeRows |= op.kind == LLMC_OP_TAKE_ROWS;
  }
  return u;
}

void require(bool ok, const std::string &message) {
  if (!ok)
    throw InvalidArgument("step: " + message);
}

bool overlap(const Span &a, const Span &b) {
  return a.rows * a.cols > 0 && b.rows * b.cols > 0 && a.offset < b.end() &&
         b.offset < a.end();
}

bool same(const Span &a, const Span &b) {
  return a.offset == b.offset && a.rows == b.rows && a.cols == b.cols;
}

} // namespace

// Only what the graph uses is required.
void checkStepArgs(const Graph &g, const llmc_kv_cache_desc *kv,
                   const llmc_step_args &a) {
  Uses u = scan(g);
  int64_t T = a.num_tokens, B = a.num_seqs;
  require(T > 0, "num_tokens must be positive");
  require(B > 0, "num_seqs must be positive");
  require(!u.tokens || a.tokens, "tokens is NULL");
  require(!u.positions || a.positions, "positions is NULL");
  if (u.positions)
    for (int64_t t = 0; t < T; ++t)
      require(a.positions[t] >= 0, "positions[" + std::to_string(t) +
                                       "] = " + std::to_string(a.positions[t]) +
                                       " is negative");

  if (u.kvWrite || u.prefill || u.decode)
    require(kv, "the graph uses the KV cache but none was given");
  // The pools the graph's layers use: [0] the full one, [1] the sliding.
  struct PoolArgs {
    const char *name;
    const int32_t *slots, *tables;
    int64_t blocks, first;
  };
  std::vector<PoolArgs> pools;
  if (kv) {
    bool full = true, sliding = false;
    if (kv->sliding_layers) {
      full = std::find(kv->sliding_layers, kv->sliding_layers + kv->layers,
                       0) != kv->sliding_layers + kv->layers;
      sliding = true;
    }
    if (full)
      pools.push_back(
          {"", a.slot_mapping, a.block_tables, int64_t(kv->num_blocks), 0});
    if (sliding)
      pools.push_back({"sliding_", a.sliding_slot_mapping,
                       a.sliding_block_tables, int64_t(kv->num_sliding_blocks),
                       1});
  }
  if (u.kvWrite)
    for (const PoolArgs &p : pools) {
      const std::string name = std::string(p.name) + "slot_mapping";
      int64_t slots = p.blocks * kv->block_size;
      require(p.slots, name + " is NULL");
      for (int64_t t = 0; t < T; ++t)
        require(p.slots[t] >= p.first * kv->block_size && p.slots[t] < slots,
                name + "[" + std::to_string(t) +
                    "] = " + std::to_string(p.slots[t]) + " is outside the " +
                    std::to_string(slots) + " slots of the pool");
    }

  require(!u.prefill || a.query_start, "query_start is NULL");
  if (a.query_start) {
    require(a.query_start[0] == 0, "query_start[0] must be 0");
    for (int64_t b = 0; b < B; ++b)
      require(a.query_start[b + 1] >= a.query_start[b],
              "query_start is not monotonic at sequence " + std::to_string(b));
    require(a.query_start[B] == T,
            "query_start[num_seqs] = " + std::to_string(a.query_start[B]) +
                " but num_tokens = " + std::to_string(T));
  }

  if (u.prefill || u.decode) {
    require(a.context_lens, "context_lens is NULL");
    for (const PoolArgs &p : pools)
      require(p.tables, std::string(p.name) + "block_tables is NULL");
    require(a.max_blocks > 0, "max_blocks must be positive");
    int64_t bs = kv->block_size;
    for (int64_t b = 0; b < B; ++b) {
      std::string seq = "sequence " + std::to_string(b);
      // A decode step has one new token per sequence.
      int64_t fresh =
          u.prefill ? int64_t(a.query_start[b + 1]) - a.query_start[b] : 1;
      int64_t len = a.context_lens[b];
      require(len >= fresh, seq + ": context_lens " + std::to_string(len) +
                                " is less than its " + std::to_string(fresh) +
                                " new tokens");
      int64_t blocks = (len + bs - 1) / bs;
      require(blocks <= a.max_blocks,
              seq + ": " + std::to_string(len) + " tokens need " +
                  std::to_string(blocks) + " blocks, max_blocks is " +
                  std::to_string(a.max_blocks));
      for (const PoolArgs &p : pools)
        for (int64_t j = 0; j < blocks; ++j) {
          int32_t block = p.tables[b * a.max_blocks + j];
          require(block >= 0 && block < p.blocks,
                  seq + ": " + p.name + "block_tables entry " +
                      std::to_string(j) + " = " + std::to_string(block) +
                      " is outside the pool of " + std::to_string(p.blocks) +
                      " blocks");
        }
    }
  }

  require(a.num_logits >= 0, "num_logits is negative");
  if (a.num_logits > 0) {
    require(a.logits, "logits is NULL");
    if (u.takeRows) {
      require(a.logits_rows, "logits_rows is NULL");
      for (int64_t i = 0; i < a.num_logits; ++i)
        require(a.logits_rows[i] >= 0 && a.logits_rows[i] < T,
                "logits_rows[" + std::to_string(i) +
                    "] = " + std::to_string(a.logits_rows[i]) +
                    " is not a row of the " + std::to_string(T) + " tokens");
    }
  }
}

void checkKvCacheDesc(const llmc_kv_cache_desc &desc) {
  if (desc.layers == 0 || desc.kv_heads == 0 || desc.head_dim == 0 ||
      desc.block_size == 0 || desc.num_blocks == 0)
    throw InvalidArgument("kv cache: layers, kv_heads, head_dim, block_size "
                          "and num_blocks must be positive");
  if (desc.sliding_layers && desc.num_sliding_blocks < 2)
    throw InvalidArgument("kv cache: a pool with sliding layers needs "
                          "num_sliding_blocks >= 2 (block 0 is reserved)");
  if (!llmc_kv_dtype_name(desc.dtype))
    throw InvalidArgument("kv cache: dtype " + std::to_string(desc.dtype) +
                          " is not f32, bf16, f16, int8 or fp8");
  // The f32 scales after a block's bytes must be aligned.
  if ((desc.dtype == LLMC_I8 || desc.dtype == LLMC_FP8_E4M3) &&
      uint64_t(desc.block_size) * desc.kv_heads * desc.head_dim % 4 != 0)
    throw InvalidArgument(std::string("kv cache: an ") +
                          llmc_kv_dtype_name(desc.dtype) +
                          " cache needs block_size x kv_heads x head_dim "
                          "divisible by 4");
}

void expectRows(int64_t actual, int64_t rows, const char *what) {
  if (actual != rows)
    throw InvalidArgument(std::string(what) + " has " + std::to_string(actual) +
                          " rows in this step, expected " +
                          std::to_string(rows));
}

void expectCacheFits(const llmc_kv_cache_desc &kv, const AttentionShape &s) {
  if (s.layer >= int64_t(kv.layers))
    throw InvalidArgument("layer " + std::to_string(s.layer) +
                          " is not in the cache's " +
                          std::to_string(kv.layers) + " layers");
  if (s.kvHeads != kv.kv_heads || s.headDim != kv.head_dim)
    throw InvalidArgument("the op has " + std::to_string(s.kvHeads) +
                          " kv heads of " + std::to_string(s.headDim) +
                          ", the cache " + std::to_string(kv.kv_heads) +
                          " of " + std::to_string(kv.head_dim));
}

void checkBlockCopy(const llmc_kv_cache_desc &kv, int32_t src, int32_t dst,
                    bool sliding) {
  const char *fn = sliding ? "kv_copy_sliding_block" : "kv_copy_block";
  if (sliding && !kv.sliding_layers)
    throw InvalidArgument(std::string(fn) + ": the pool has no sliding layers");
  // Sliding block 0 stands for the freed ones: never written.
  int64_t first = sliding ? 1 : 0;
  int64_t blocks = sliding ? kv.num_sliding_blocks : kv.num_blocks;
  if (src < 0 || src >= blocks || dst < first || dst >= blocks)
    throw InvalidArgument(std::string(fn) + ": block " +
                          std::to_string(src < 0 || src >= blocks ? src : dst) +
                          " is outside the pool of " + std::to_string(blocks) +
                          " blocks");
}

std::vector<uint8_t> longRopeTokens(const llmc_step_args &a) {
  std::vector<uint8_t> out;
  if (!a.rope_long || std::none_of(a.rope_long, a.rope_long + a.num_seqs,
                                   [](uint8_t v) { return v != 0; }))
    return out;
  out.assign(static_cast<size_t>(a.num_tokens), 0);
  for (int32_t b = 0; b < a.num_seqs; ++b) {
    int32_t begin = a.query_start ? a.query_start[b] : b;
    int32_t end = a.query_start ? a.query_start[b + 1] : b + 1;
    for (int32_t t = std::max(begin, 0); t < std::min(end, a.num_tokens); ++t)
      out[static_cast<size_t>(t)] = a.rope_long[b] != 0;
  }
  return out;
}

int64_t evalRows(const llmc_rows &r, int64_t T, int64_t B) {
  return r.t_coef * T + r.b_coef * B + r.constant;
}

std::vector<Span> placeBuffers(const Graph &g, int64_t T, int64_t B,
                               int64_t align, int64_t &bytes) {
  std::vector<Span> spans(g.buffers.size());
  if (!g.hasMemoryPlan()) {
    int64_t at = 0;
    for (size_t i = 0; i < g.buffers.size(); ++i) {
      const llmc_buffer_desc &b = g.buffers[i];
      spans[i] = {at, evalRows(b.rows, T, B), b.cols};
      at += (spans[i].rows * b.cols * 4 + align - 1) / align * align;
    }
    bytes = at;
    return spans;
  }
  bytes = g.workspaceT * T + g.workspaceB * B + g.workspaceC;
  for (size_t i = 0; i < g.buffers.size(); ++i) {
    const llmc_buffer_desc &b = g.buffers[i];
    spans[i] = {b.offset_t * T + b.offset_b * B + b.offset_const,
                evalRows(b.rows, T, B), b.cols};
    if (spans[i].end() > bytes)
      throw InvalidArgument("graph '" + g.name + "': buffer " +
                            std::to_string(i) +
                            " does not fit in the workspace of " +
                            std::to_string(bytes) + " bytes");
  }
  return spans;
}

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
  case LLMC_OP_SCALE:
  case LLMC_OP_SOFTCAP:
  case LLMC_OP_EXPERT_BIAS:
  case LLMC_OP_ALL_REDUCE:
    return true;
  default:
    return false;
  }
}

void checkAliasing(const llmc_op_desc &op, const std::vector<Span> &spans) {
  for (uint32_t r = 0; r < op.num_results; ++r) {
    const Span &res = spans[op.results[r]];
    for (uint32_t r2 = r + 1; r2 < op.num_results; ++r2)
      if (overlap(res, spans[op.results[r2]]))
        throw InvalidArgument("results overlap in the workspace");
    for (uint32_t i = 0; i < op.num_operands; ++i) {
      if (op.operands[i].kind != LLMC_OPERAND_BUFFER)
        continue;
      const Span &in = spans[op.operands[i].index];
      if (overlap(res, in) && !(mayRunInPlace(op.kind) && same(res, in)))
        throw InvalidArgument("result " + std::to_string(r) +
                              " overlaps operand " + std::to_string(i) +
                              " in the workspace");
    }
  }
}

void checkLogitRows(const Graph &g, const std::vector<Span> &spans,
                    const llmc_step_args &args) {
  int64_t rows = spans[g.logitsBuffer].rows;
  if (args.num_logits > rows)
    throw InvalidArgument(
        "step: num_logits " + std::to_string(args.num_logits) +
        " exceeds the logits buffer's " + std::to_string(rows) + " rows");
}

} // namespace llmc::common
