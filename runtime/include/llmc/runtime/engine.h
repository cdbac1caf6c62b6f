//===- engine.h - Runs a plan's graphs on a backend ------------*- C++ -*-===//
//
// The engine owns the prepared graphs, the backend's KV pool and the block
// bookkeeping, and turns "these sequences get these new tokens" into one
// graph execution with vLLM-style step metadata. Generation policy (sampling,
// stopping, streaming) lives above it, in generate.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/backend_registry.h"
#include "llmc/runtime/kv_blocks.h"
#include "llmc/runtime/plan.h"

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
  int32_t maxSequences = 1;   // sequences that may be live at once
  int64_t contextLength = 0;  // 0 = the plan's
  int32_t prefillChunk = 512; // new tokens per prefill step
};

class Engine {
public:
  /// Loads nothing itself: `plan` must outlive the engine.
  Engine(const Plan &plan, const BackendRegistry &registry,
         EngineOptions options = {});
  ~Engine();

  const PlanConfig &config() const { return plan_.config(); }
  const std::string &backendName() const { return backend_->name(); }
  int64_t contextLength() const { return contextLength_; }
  int64_t vocabSize() const { return plan_.config().vocabSize; }
  /// 2 × layers × kv_heads × head_dim × bytes of the cache dtype.
  int64_t kvBytesPerToken() const;
  int64_t kvPoolBytes() const;

  int32_t newSequence();
  void releaseSequence(int32_t seq);
  /// A new sequence sharing all of `seq`'s blocks (copy-on-write).
  int32_t forkSequence(int32_t seq);
  int64_t length(int32_t seq) const;
  /// The KV pool's blocks: free ones, all of them, and tokens per block
  /// (beam search and tests read them to see prefix sharing).
  int32_t freeBlocks() const { return blocks_.freeBlocks(); }
  int32_t numBlocks() const { return blocks_.numBlocks(); }
  int32_t blockSize() const { return options_.blockSize; }
  /// Drops every token of `seq` at position >= `length` and frees the blocks
  /// past it, so that a caller whose new prompt shares only a prefix with
  /// the cache (chat templates that rewrite history) re-prefills just the
  /// rest. A kept, partly filled block that is shared is copied on the next
  /// write, as usual. Throws llmc::Error if `length` is negative or longer
  /// than the sequence.
  void truncate(int32_t seq, int64_t length);

  /// Appends `tokens` to `seq` (chunked prefill), returns the logits of the
  /// last one in `logits` [vocab]. `allLogits`, if set, receives [n, vocab]
  /// (the verify graph) instead.
  void prefill(int32_t seq, std::span<const int32_t> tokens, float *logits,
               bool allLogits = false);
  /// One new token for each sequence; logits [seqs.size(), vocab].
  void decode(std::span<const int32_t> seqs, std::span<const int32_t> tokens,
              float *logits);

private:
  struct Step;
  void reserve(int32_t seq, int64_t newTokens);
  void run(const std::string &graph, const Step &step, float *logits);

  const Plan &plan_;
  EngineOptions options_;
  int64_t contextLength_ = 0;
  std::unique_ptr<BackendInstance> backend_;
  std::map<std::string, PreparedGraph> prepared_;
  std::unique_ptr<DeviceKvCache> cache_;
  BlockAllocator blocks_;
  std::map<int32_t, SequenceState> seqs_;
  int32_t nextSeq_ = 0;
};

/// The backend `llmc run` uses: `requested` if given (an error names the
/// backends found), else the plan's target if it loads and is usable here,
/// else ref.
const LoadedBackend &chooseBackend(const BackendRegistry &registry,
                                   const std::string &requested,
                                   const std::string &planTarget);

} // namespace llmc
