//===- step_runner.cpp - Steps over the KV cache, model aside -------------===//
#include "llmc/runtime/step_runner.h"

#include "llmc/support/error.h"

namespace llmc {

StepRunner::StepRunner(KvManager::Options kv, int64_t contextLength)
    : kv_(kv), contextLength_(contextLength) {}

StepRunner::~StepRunner() = default;

bool StepRunner::fits(std::span<const StepWork> work) const {
  int64_t need = 0;
  for (const StepWork &w : work)
    need += kv_.blocksNeeded(w.seq, static_cast<int64_t>(w.tokens.size()));
  return need <= kv_.availableBlocks();
}

void StepRunner::step(std::span<const StepWork> work, float *logits) {
  for (const StepWork &w : work) {
    int64_t end = kv_.length(w.seq) + static_cast<int64_t>(w.tokens.size());
    if (end > contextLength_)
      throw Error("sequence needs " + std::to_string(end) +
                  " positions but the context length is " +
                  std::to_string(contextLength_));
  }
  if (!fits(work))
    throw Error("KV cache is full: all " + std::to_string(kv_.numBlocks()) +
                " blocks of " + std::to_string(kv_.blockSize()) +
                " tokens are in use (give it more with --kv-cache-memory or "
                "--kv-cache-blocks, or shorten the prompt)");
  std::vector<BlockCopy> copies;
  for (const StepWork &w : work)
    if (!kv_.reserve(w.seq, static_cast<int64_t>(w.tokens.size()), copies))
      throw Error("internal error: a KV reservation failed after fits()");
  for (const BlockCopy &c : copies)
    copyBlock(c.src, c.dst);
  execute(buildStep(kv_, work, ropeSwitch_), work, logits);
  for (const StepWork &w : work)
    kv_.append(w.seq, w.tokens);
}

} // namespace llmc
