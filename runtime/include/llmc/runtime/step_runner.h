//===- step_runner.h - Steps over the KV cache, model aside ------*- C++
//-*-===//
//
// What every step does whatever computes it: check that the sequences fit
// the context and the pool, reserve their blocks (all or nothing), copy
// shared blocks that are about to be written, build the step's metadata,
// run the model, and record the new tokens in the KV manager. Engine runs
// a plan's graphs on a backend; the scheduler's tests run a fake model, so
// that the scheduling is tested without one.
//
// Not thread-safe: one thread owns a runner.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/kv_manager.h"
#include "llmc/runtime/step_batch.h"

#include <algorithm>
#include <cstdint>
#include <span>

namespace llmc {

class StepRunner {
public:
  StepRunner(KvManager::Options kv, int64_t contextLength);
  virtual ~StepRunner();

  /// The sequences and blocks of the KV pool.
  KvManager &kv() { return kv_; }
  const KvManager &kv() const { return kv_; }
  int64_t contextLength() const { return contextLength_; }
  virtual int64_t vocabSize() const = 0;
  /// 2 × layers × kv_heads × head_dim × bytes of the cache dtype.
  virtual int64_t kvBytesPerToken() const = 0;

  int32_t newSequence() { return kv_.create(); }
  void releaseSequence(int32_t seq) { kv_.release(seq); }
  /// A new sequence sharing all of `seq`'s blocks (copy-on-write).
  int32_t forkSequence(int32_t seq) { return kv_.fork(seq); }
  /// LongRoPE's switch length (0: the plan has none): a sequence longer
  /// than this rotates with the long factors (its KV variant is 1), and
  /// one that grows past it is recomputed (step does it), as Hugging Face
  /// drops its cache there.
  int64_t ropeSwitch() const { return ropeSwitch_; }
  /// How many drafts a verify step may carry after `tokens` tokens (the
  /// last one fed with them): inside the context, and on one side of the
  /// switch, whose rows would otherwise rotate as no plain step does.
  int64_t draftRoom(int64_t tokens) const {
    int64_t room = contextLength_ - tokens;
    if (ropeSwitch_ > 0 && tokens <= ropeSwitch_)
      room = std::min(room, ropeSwitch_ - tokens);
    return room;
  }
  /// For an empty sequence that will hold `prompt`: shares the cached
  /// blocks it starts with that were computed as it will be (see
  /// KvManager::attachCachedPrefix); returns the tokens covered.
  int64_t attachCachedPrefix(int32_t seq, std::span<const int32_t> prompt) {
    kv_.setVariant(seq, ropeVariant(static_cast<int64_t>(prompt.size())));
    return kv_.attachCachedPrefix(seq, prompt);
  }
  int64_t length(int32_t seq) const { return kv_.length(seq); }
  /// Blocks a step can still take (free and cached), all of them, and
  /// tokens per block.
  int32_t freeBlocks() const { return kv_.availableBlocks(); }
  int32_t numBlocks() const { return kv_.numBlocks(); }
  int32_t blockSize() const { return kv_.blockSize(); }
  virtual int64_t kvPoolBytes() const {
    return kvBytesPerToken() * kv_.numBlocks() * kv_.blockSize();
  }
  /// Throws llmc::Error unless no sequence is live and no block is held:
  /// tests call it after every run to catch leaks.
  void checkIdle() const { kv_.checkIdle(); }

  /// Whether the pool can hold `work`'s new tokens now, and the blocks of
  /// each pool they take.
  bool fits(std::span<const StepWork> work) const;
  KvBlocks needed(std::span<const StepWork> work) const;
  /// One model execution over a mixed batch (graphFor picks the graph).
  /// `logits` receives, in work order, each sequence's logitRows rows of
  /// [vocab]. Throws llmc::Error (changing nothing) if a sequence would
  /// pass the context length or the pool lacks blocks for the step.
  void step(std::span<const StepWork> work, float *logits);

protected:
  int64_t ropeSwitch_ = 0;
  /// The KV variant of a sequence of `length` tokens: 1 past the switch.
  uint64_t ropeVariant(int64_t length) const {
    return ropeSwitch_ > 0 && length > ropeSwitch_ ? 1 : 0;
  }
  /// Recomputes the cache of each sequence in `work` whose K/V no longer
  /// fit the step: it crosses LongRoPE's switch, or was cut back past the
  /// sliding blocks its window still reads.
  void recomputeStale(std::span<const StepWork> work);
  /// step's work once the checks passed: reserve, run, append.
  void runStep(std::span<const StepWork> work, float *logits);

  /// Copy block src to dst in every layer of the device pool.
  virtual void copyBlock(const BlockCopy &copy) = 0;
  /// Run the model over `batch` (built from `work`); write the rows
  /// requested, in work order, to `logits`.
  virtual void execute(const StepBatch &batch, std::span<const StepWork> work,
                       float *logits) = 0;

private:
  KvManager kv_;
  int64_t contextLength_;
};

} // namespace llmc
