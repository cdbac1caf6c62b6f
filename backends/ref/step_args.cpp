//===- step_args.cpp - Validating a step's metadata
//------------------------===//
//
// Every index in llmc_step_args is checked before any kernel runs, so a bad
// scheduler produces LLMC_INVALID_ARGUMENT and a message, never a read
// outside the KV pool. Only what the graph uses is required.
//
//===----------------------------------------------------------------------===//
#include "ref.h"

namespace llmc::ref {
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

} // namespace

void checkStepArgs(const Graph &g, const KvCache *cache,
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
    require(cache, "the graph uses the KV cache but none was given");
  if (u.kvWrite) {
    require(a.slot_mapping, "slot_mapping is NULL");
    for (int64_t t = 0; t < T; ++t)
      require(a.slot_mapping[t] >= 0 && a.slot_mapping[t] < cache->slots(),
              "slot_mapping[" + std::to_string(t) + "] = " +
                  std::to_string(a.slot_mapping[t]) + " is outside the " +
                  std::to_string(cache->slots()) + " slots of the pool");
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
    require(a.block_tables, "block_tables is NULL");
    require(a.max_blocks > 0, "max_blocks must be positive");
    int64_t bs = cache->desc.block_size;
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
      for (int64_t j = 0; j < blocks; ++j) {
        int32_t block = a.block_tables[b * a.max_blocks + j];
        require(block >= 0 && block < int64_t(cache->desc.num_blocks),
                seq + ": block_tables entry " + std::to_string(j) + " = " +
                    std::to_string(block) + " is outside the pool of " +
                    std::to_string(cache->desc.num_blocks) + " blocks");
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

} // namespace llmc::ref
