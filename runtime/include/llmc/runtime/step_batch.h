//===- step_batch.h - One step's metadata, vLLM's layout --------*- C++ -*-===//
//
// A step runs new tokens of several sequences through one graph: prefill
// chunks of some, one decode token of others. This turns "these sequences
// get these tokens" into the arrays of llmc_step_args: each token's
// position and cache slot, where each sequence's rows start, its context
// length and block table, and which rows' logits are wanted. It is pure
// bookkeeping over a KvManager (room for the tokens already reserved), kept
// apart from the Engine so that it is tested without a backend.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/backend.h"
#include "llmc/runtime/kv_manager.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace llmc {

/// What one sequence does in a step.
struct StepWork {
  int32_t seq = -1;
  std::span<const int32_t> tokens; // appended to the sequence
  /// Logits rows wanted, for the last `logitRows` tokens: 0 (a prefill
  /// chunk that is not the prompt's last), 1 (the next token), or
  /// tokens.size() (every position: speculative verification, perplexity).
  int32_t logitRows = 1;
  /// The sequence's length once its whole prompt is fed, where a prefill
  /// chunk knows it (0: its length after this step): LongRoPE rotates a
  /// sequence longer than the switch with the long table from its first
  /// token, as Hugging Face does for a long prompt.
  int64_t knownLength = 0;
};

/// The graph a step runs: "decode" when every sequence feeds one token and
/// wants its logits, "verify" when one wants more than one row, else
/// "prefill" (ragged over sequences, logits for the last token of those
/// that want one).
std::string graphFor(std::span<const StepWork> work);

struct StepBatch {
  std::string graph;
  std::vector<int32_t> tokens, positions, slots, queryStart, contextLens,
      blockTables, logitsRows;
  std::vector<uint8_t> ropeLong; // [B], LongRoPE plans only
  /// The same as slots and blockTables in the sliding pool, if kv has one.
  std::vector<int32_t> slidingSlots, slidingTables;
  int32_t maxBlocks = 1;
  /// Logits rows the caller gets back, in work order.
  int32_t outputRows = 0;

  /// The ABI view; valid while this batch lives. `logits` receives
  /// num_logits rows (for "verify": every token's row).
  llmc_step_args args(float *logits) const;
};

/// Builds a step for `work` (each sequence at most once, room for its
/// tokens reserved in `kv`, which still holds the old lengths). With
/// `ropeSwitch` (a LongRoPE plan), a sequence of KV variant 1 rotates with
/// the long table.
StepBatch buildStep(const KvManager &kv, std::span<const StepWork> work,
                    bool ropeSwitch = false);

} // namespace llmc
