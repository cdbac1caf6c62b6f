//===- step_batch.cpp - One step's metadata, vLLM's layout ----------------===//
#include "llmc/runtime/step_batch.h"

#include "llmc/support/error.h"

#include <algorithm>

namespace llmc {

std::string graphFor(std::span<const StepWork> work) {
  bool decode = true;
  for (const StepWork &w : work) {
    if (w.logitRows > 1)
      return "verify";
    decode &= w.tokens.size() == 1 && w.logitRows == 1;
  }
  return decode ? "decode" : "prefill";
}

StepBatch buildStep(const KvManager &kv, std::span<const StepWork> work,
                    bool ropeSwitch) {
  if (work.empty())
    throw Error("internal error: a step needs at least one sequence");
  StepBatch s;
  s.graph = graphFor(work);
  const bool verify = s.graph == "verify";
  for (const StepWork &w : work) {
    if (w.tokens.empty())
      throw Error("internal error: a step gives every sequence a token");
    if (w.logitRows < 0 || w.logitRows > static_cast<int32_t>(w.tokens.size()))
      throw Error("internal error: logit rows outside the step's tokens");
    s.maxBlocks = std::max(s.maxBlocks,
                           static_cast<int32_t>(kv.blockTable(w.seq).size()));
  }
  s.queryStart.push_back(0);
  for (const StepWork &w : work) {
    const int64_t start = kv.length(w.seq);
    const auto n = static_cast<int64_t>(w.tokens.size());
    const auto first = static_cast<int32_t>(s.tokens.size());
    for (int64_t i = 0; i < n; ++i) {
      s.tokens.push_back(w.tokens[static_cast<size_t>(i)]);
      s.positions.push_back(static_cast<int32_t>(start + i));
      s.slots.push_back(kv.slot(w.seq, start + i));
      if (kv.hasSlidingPool())
        s.slidingSlots.push_back(kv.slot(w.seq, start + i, true));
    }
    s.queryStart.push_back(static_cast<int32_t>(s.tokens.size()));
    s.contextLens.push_back(static_cast<int32_t>(start + n));
    if (ropeSwitch > 0)
      s.ropeLong.push_back(kv.variant(w.seq) != 0);
    std::vector<int32_t> row = kv.blockTable(w.seq);
    row.resize(static_cast<size_t>(s.maxBlocks), 0);
    s.blockTables.insert(s.blockTables.end(), row.begin(), row.end());
    if (kv.hasSlidingPool()) {
      row = kv.slidingTable(w.seq);
      row.resize(static_cast<size_t>(s.maxBlocks), kNullSlidingBlock);
      s.slidingTables.insert(s.slidingTables.end(), row.begin(), row.end());
    }
    // The verify graph returns every row; the others pick theirs.
    if (!verify && w.logitRows == 1)
      s.logitsRows.push_back(first + static_cast<int32_t>(n) - 1);
    s.outputRows += w.logitRows;
  }
  if (verify)
    for (int32_t t = 0; t < static_cast<int32_t>(s.tokens.size()); ++t)
      s.logitsRows.push_back(t);
  return s;
}

llmc_step_args StepBatch::args(float *logits) const {
  llmc_step_args a{};
  a.num_tokens = static_cast<int32_t>(tokens.size());
  a.num_seqs = static_cast<int32_t>(contextLens.size());
  a.tokens = tokens.data();
  a.positions = positions.data();
  a.slot_mapping = slots.data();
  a.query_start = queryStart.data();
  a.context_lens = contextLens.data();
  a.block_tables = blockTables.data();
  a.max_blocks = maxBlocks;
  a.num_logits = static_cast<int32_t>(logitsRows.size());
  a.logits_rows = logitsRows.data();
  a.logits = logits;
  a.rope_long = ropeLong.empty() ? nullptr : ropeLong.data();
  if (!slidingTables.empty()) {
    a.sliding_slot_mapping = slidingSlots.data();
    a.sliding_block_tables = slidingTables.data();
  }
  return a;
}

} // namespace llmc
