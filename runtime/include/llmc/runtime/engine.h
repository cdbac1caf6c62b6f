//===- engine.h - Runs a plan's graphs on a backend ------------*- C++ -*-===//
//
// The engine owns the prepared graphs and the backend's KV pool, and (as a
// StepRunner) the sequences over it: it turns "these sequences get these
// new tokens" into one graph execution with vLLM-style step metadata; a
// step may mix prefill chunks of some sequences with one decode token of
// others.
// Generation policy (sampling, stopping, streaming, scheduling) lives
// above it.
//
// Not thread-safe: one thread (the caller of llmc run, or the server's
// engine thread) owns an Engine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/backend_registry.h"
#include "llmc/runtime/communicator.h"
#include "llmc/runtime/kv_manager.h"
#include "llmc/runtime/kv_pool.h"
#include "llmc/runtime/plan.h"
#include "llmc/runtime/step_runner.h"

#include <map>
#include <memory>
#include <optional>
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
  /// The most new tokens one step feeds (the scheduler's budget): the
  /// sliding pool keeps room for a step this big beside every window.
  int32_t maxStepTokens = 2048;
  /// The KV pool: kvCacheBlocks if set, else kvCacheBytes worth of blocks
  /// if set, else room for maxSequences sequences of the whole context,
  /// capped at kDefaultKvMemoryShare of the memory the pool lives in (the
  /// host's available memory, or the GPU's).
  int64_t kvCacheBlocks = 0;
  int64_t kvCacheBytes = 0;
  int32_t maxSequences = 1;
  bool prefixCaching = false; // share cached full blocks between prompts
  /// The KV cache's dtype; unset: the plan's (llmc compile --kv-dtype).
  std::optional<llmc_dtype> kvDtype;
  /// The ranks of a tensor-parallel plan (not owned; must outlive the
  /// engine): null runs alone. Rank 0's engine is driven as usual and
  /// broadcasts every step; the others call follow().
  Communicator *comm = nullptr;
};

/// The share of memory a default-sized KV pool may take at most.
inline constexpr double kDefaultKvMemoryShare = 0.4;

class Engine : public StepRunner {
public:
  /// Loads nothing itself: `plan` must outlive the engine.
  Engine(const Plan &plan, const BackendRegistry &registry,
         EngineOptions options = {});
  ~Engine() override;

  const Plan &plan() const { return plan_; }
  const PlanConfig &config() const { return plan_.config(); }
  const std::string &backendName() const { return backend_->name(); }
  int64_t vocabSize() const override { return plan_.config().vocabSize; }
  int64_t kvBytesPerToken() const override;
  llmc_dtype kvDtype() const;
  bool hasGraph(const std::string &name) const {
    return prepared_.count(name) != 0;
  }
  /// How the pool was sized, for --stats: "--kv-cache-memory", ... or
  /// "default (...)".
  const std::string &kvPoolOrigin() const { return pool_.origin; }
  /// The pools' sizes and which layers slide (docs/kv-cache.md).
  const KvPoolPlan &kvPool() const { return pool_; }
  int64_t kvPoolBytes() const override { return pool_.bytes(); }

  /// Drops every token of `seq` at position >= `length` and frees the blocks
  /// past it, so that a caller whose new prompt shares only a prefix with
  /// the cache (chat templates that rewrite history) re-prefills just the
  /// rest. Throws llmc::Error if `length` is negative or longer than the
  /// sequence.
  void truncate(int32_t seq, int64_t length) { kv().truncate(seq, length); }

  /// Appends `tokens` to `seq` in chunks of prefillChunk, returns the logits
  /// of the last one in `logits` [vocab]. `allLogits`, if set, receives
  /// [n, vocab] (the verify graph, a chunk at a time) instead.
  void prefill(int32_t seq, std::span<const int32_t> tokens, float *logits,
               bool allLogits = false);
  /// One new token for each sequence; logits [seqs.size(), vocab].
  void decode(std::span<const int32_t> seqs, std::span<const int32_t> tokens,
              float *logits);

  /// A tensor-parallel rank > 0: runs every step rank 0's engine runs, as
  /// it broadcasts them, until rank 0's engine is destroyed.
  void follow();

protected:
  void copyBlock(const BlockCopy &copy) override;
  void execute(const StepBatch &batch, std::span<const StepWork> work,
               float *logits) override;

private:
  Engine(const Plan &plan, const EngineOptions &options,
         const LoadedBackend &chosen);
  Engine(const Plan &plan, const EngineOptions &options,
         const LoadedBackend &chosen, KvPoolPlan pool);

  /// Rank 0 of several (leads_): `message` (step_message.h) to every other
  /// rank, before doing it here.
  void tellFollowers(std::vector<uint8_t> message);

  const Plan &plan_;
  EngineOptions options_;
  KvPoolPlan pool_;
  std::unique_ptr<BackendInstance> backend_;
  std::map<std::string, PreparedGraph> prepared_;
  std::unique_ptr<DeviceKvCache> cache_;
  std::vector<float> scratch_;    // verify rows nobody asked for
  Communicator *leads_ = nullptr; // rank 0 of several: broadcasts its steps
};

/// Throws llmc::Error naming the plan, the graph and the feature when
/// `api` speaks an older ABI minor than `graph` needs (abiNeeded): such a
/// plugin would read past the attributes it does not know.
void checkBackendAbi(const std::string &planPath, const Graph &graph,
                     const std::string &backendName,
                     const llmc_backend_api &api);

/// The same for a weight dtype an older plugin would misread (MXFP4: 1.7).
void checkWeightAbi(const std::string &planPath, const llmc_graph_desc &graph,
                    const std::string &backendName,
                    const llmc_backend_api &api);

/// Throws llmc::Error when `api` predates the KV cache in `kvDtype` (int8
/// and fp8 came with ABI 1.3): an older plugin would refuse the pool with a
/// vaguer message.
void checkKvAbi(llmc_dtype kvDtype, const std::string &backendName,
                const llmc_backend_api &api);

/// The KV pool every rank of `comm` uses: rank 0's (their hosts' free
/// memory may differ, their pools must not). `pool` as it is without one.
KvPoolPlan agreedPool(KvPoolPlan pool, Communicator *comm);

/// The backend `llmc run` uses: `requested` if given (an error names the
/// backends found), else the plan's target if it loads and is usable here,
/// else ref.
const LoadedBackend &chooseBackend(const BackendRegistry &registry,
                                   const std::string &requested,
                                   const std::string &planTarget);

} // namespace llmc
