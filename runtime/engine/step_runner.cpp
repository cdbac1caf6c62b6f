//===- step_runner.cpp - Steps over the KV cache, model aside -------------===//
#include "llmc/runtime/step_runner.h"

#include "llmc/support/error.h"

#include <algorithm>

namespace llmc {

StepRunner::StepRunner(KvManager::Options kv, int64_t contextLength)
    : kv_(kv), contextLength_(contextLength) {}

StepRunner::~StepRunner() = default;

KvBlocks StepRunner::needed(std::span<const StepWork> work) const {
  KvBlocks need;
  for (const StepWork &w : work)
    need += kv_.blocksNeeded(w.seq, static_cast<int64_t>(w.tokens.size()));
  return need;
}

bool StepRunner::fits(std::span<const StepWork> work) const {
  return needed(work).fitsIn(kv_.available());
}

void StepRunner::recomputeStale(std::span<const StepWork> work) {
  for (const StepWork &w : work) {
    const int64_t cached = kv_.length(w.seq);
    const int64_t after = cached + static_cast<int64_t>(w.tokens.size());
    const uint64_t variant = ropeVariant(std::max(after, w.knownLength));
    if (cached == 0 ||
        (kv_.variant(w.seq) == variant && !kv_.lostWindow(w.seq)))
      continue;
    // Feed it again, whole, as the step will see it.
    std::vector<int32_t> tokens = kv_.tokens(w.seq);
    kv_.truncate(w.seq, 0);
    kv_.setVariant(w.seq, variant);
    // In chunks the pools hold: a sliding pool keeps room for one step of
    // the run's size, which may be less than the sequence.
    size_t chunk = 2048;
    for (size_t start = 0; start < tokens.size();) {
      StepWork again{w.seq, {}, 0, std::max(after, w.knownLength)};
      for (;; chunk = std::max<size_t>(1, chunk / 2)) {
        again.tokens = std::span<const int32_t>(tokens).subspan(
            start, std::min(chunk, tokens.size() - start));
        if (chunk == 1 || fits(std::span<const StepWork>(&again, 1)))
          break;
      }
      runStep(std::span<const StepWork>(&again, 1), nullptr);
      start += again.tokens.size();
    }
  }
}

void StepRunner::step(std::span<const StepWork> work, float *logits) {
  for (const StepWork &w : work) {
    int64_t end = kv_.length(w.seq) + static_cast<int64_t>(w.tokens.size());
    if (end > contextLength_)
      throw Error("sequence needs " + std::to_string(end) +
                  " positions but the context length is " +
                  std::to_string(contextLength_));
  }
  if (ropeSwitch_ > 0 || kv_.hasSlidingPool())
    recomputeStale(work);
  runStep(work, logits);
}

void StepRunner::runStep(std::span<const StepWork> work, float *logits) {
  if (!fits(work))
    throw Error("KV cache is full: all " +
                (needed(work).full <= kv_.available().full
                     ? std::to_string(kv_.numSlidingBlocks()) +
                           " blocks of the sliding-window layers' pool"
                     : std::to_string(kv_.numBlocks()) + " blocks") +
                " of " + std::to_string(kv_.blockSize()) +
                " tokens are in use (give it more with --kv-cache-memory or "
                "--kv-cache-blocks, or shorten the prompt)");
  std::vector<BlockCopy> copies;
  for (const StepWork &w : work)
    if (!kv_.reserve(w.seq, static_cast<int64_t>(w.tokens.size()), copies))
      throw Error("internal error: a KV reservation failed after fits()");
  for (const BlockCopy &c : copies)
    copyBlock(c);
  for (const StepWork &w : work)
    if (kv_.length(w.seq) == 0)
      kv_.setVariant(w.seq,
                     ropeVariant(std::max(static_cast<int64_t>(w.tokens.size()),
                                          w.knownLength)));
  execute(buildStep(kv_, work, ropeSwitch_ > 0), work, logits);
  for (const StepWork &w : work)
    kv_.append(w.seq, w.tokens);
}

} // namespace llmc
