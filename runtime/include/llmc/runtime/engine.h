//===- engine.h - Runs a plan's graphs on a backend ------------*- C++ -*-===//
//
// The engine owns the prepared graphs, the backend's KV pool and the
// sequences over it (a KvManager), and turns "these sequences get these new
// tokens" into one graph execution with vLLM-style step metadata: a step
// may mix prefill chunks of some sequences with one decode token of others.
// Generation policy (sampling, stopping, streaming, scheduling) lives
// above it.
//
// Not thread-safe: one thread (the caller of llmc run, or the server's
// engine thread) owns an Engine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/backend_registry.h"
#include "llmc/runtime/kv_manager.h"
#include "llmc/runtime/plan.h"
#include "llmc/runtime/step_batch.h"

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace llmc {

struct EngineOptions {
  std::string backend;        // "" = the plan's target if usable, else ref
  int32_t threads = 0;        // 0 = the backend's default
  int32_t blockSize = 16;     // tokens per KV block
  int64_t contextLength = 0;  // 0 = the plan's
  int32_t prefillChunk = 512; // new tokens per prefill step (prefill())
  /// The KV pool: kvCacheBlocks if set, else kvCacheBytes worth of blocks
  /// if set, else room for maxSequences sequences of the whole context.
  int64_t kvCacheBlocks = 0;
  int64_t kvCacheBytes = 0;
  int32_t maxSequences = 1;
  bool prefixCaching = false; // share cached full blocks between prompts
};

class Engine {
public:
  /// Loads nothing itself: `plan` must outlive the engine.
  Engine(const Plan &plan, const BackendRegistry &registry,
         EngineOptions options = {});
  ~Engine();

  const Plan &plan() const { return plan_; }
  const PlanConfig &config() const { return plan_.config(); }
  const std::string &backendName() const { return backend_->name(); }
  int64_t contextLength() const { return contextLength_; }
  int64_t vocabSize() const { return plan_.config().vocabSize; }
  /// 2 × layers × kv_heads × head_dim × bytes of the cache dtype.
  int64_t kvBytesPerToken() const;
  int64_t kvPoolBytes() const;
  bool hasGraph(const std::string &name) const {
    return prepared_.count(name) != 0;
  }

  /// The sequences and blocks of the KV pool.
  KvManager &kv() { return kv_; }
  const KvManager &kv() const { return kv_; }
  int32_t newSequence() { return kv_.create(); }
  void releaseSequence(int32_t seq) { kv_.release(seq); }
  /// A new sequence sharing all of `seq`'s blocks (copy-on-write).
  int32_t forkSequence(int32_t seq) { return kv_.fork(seq); }
  int64_t length(int32_t seq) const { return kv_.length(seq); }
  /// Blocks a step can still take (free and cached), all of them, and
  /// tokens per block.
  int32_t freeBlocks() const { return kv_.availableBlocks(); }
  int32_t numBlocks() const { return kv_.numBlocks(); }
  int32_t blockSize() const { return kv_.blockSize(); }
  /// Drops every token of `seq` at position >= `length` and frees the blocks
  /// past it, so that a caller whose new prompt shares only a prefix with
  /// the cache (chat templates that rewrite history) re-prefills just the
  /// rest. Throws llmc::Error if `length` is negative or longer than the
  /// sequence.
  void truncate(int32_t seq, int64_t length) { kv_.truncate(seq, length); }
  /// Throws llmc::Error unless no sequence is live and no block is held:
  /// tests call it after every run to catch leaks.
  void checkIdle() const { kv_.checkIdle(); }

  /// One graph execution over a mixed batch (graphFor picks the graph).
  /// `logits` receives, in work order, each sequence's logitRows rows of
  /// [vocab]. Throws llmc::Error (changing nothing) if a sequence would
  /// pass the context length or the pool lacks blocks for the step.
  void step(std::span<const StepWork> work, float *logits);
  /// Whether the pool can hold `work`'s new tokens now.
  bool fits(std::span<const StepWork> work) const;

  /// Appends `tokens` to `seq` in chunks of prefillChunk, returns the logits
  /// of the last one in `logits` [vocab]. `allLogits`, if set, receives
  /// [n, vocab] (the verify graph, in one step) instead.
  void prefill(int32_t seq, std::span<const int32_t> tokens, float *logits,
               bool allLogits = false);
  /// One new token for each sequence; logits [seqs.size(), vocab].
  void decode(std::span<const int32_t> seqs, std::span<const int32_t> tokens,
              float *logits);

private:
  const Plan &plan_;
  EngineOptions options_;
  int64_t contextLength_ = 0;
  std::unique_ptr<BackendInstance> backend_;
  std::map<std::string, PreparedGraph> prepared_;
  std::unique_ptr<DeviceKvCache> cache_;
  KvManager kv_;
  std::vector<float> scratch_; // verify rows nobody asked for
};

/// The backend `llmc run` uses: `requested` if given (an error names the
/// backends found), else the plan's target if it loads and is usable here,
/// else ref.
const LoadedBackend &chooseBackend(const BackendRegistry &registry,
                                   const std::string &requested,
                                   const std::string &planTarget);

} // namespace llmc
