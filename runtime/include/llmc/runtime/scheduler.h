//===- scheduler.h - Continuous batching over one engine --------*- C++ -*-===//
//
// Requests arrive with add(); every step() runs one engine step over a
// batch chosen as vLLM's scheduler chooses it:
//
//  1. Every running request first, oldest admitted first: each of its
//     sequences gets the tokens it has not computed yet (one, for a
//     sequence that decodes; a chunk of its prompt for one that is still
//     prefilling), as far as the token budget (maxNumBatchedTokens) goes.
//     When the KV pool lacks blocks for them (after evicting cached
//     prefix blocks), the most recently admitted running request is
//     preempted: its blocks are freed and it goes back to the front of the
//     queue, keeping what it generated, to be prefilled again later
//     (recompute). It is never dropped; a running request never waits on
//     one admitted after it.
//  2. Then waiting requests, first come first served, while the budget, the
//     pool and maxNumSeqs (sequences running at once) allow: a chunk of each
//     one's prompt; the prefix cache gives a new request the full blocks of
//     its prompt another request already computed.
//
// A sequence whose computed tokens reach its last token gets that row of
// logits and its request samples the next token (its own sampler and RNG,
// stop strings, EOS policy and max tokens: the output does not depend on
// what it was batched with). A finished or aborted request frees its blocks
// in the same step. A request may have n > 1 independent samples (forks of
// its prompt) or run beam search; each sequence takes a place of
// maxNumSeqs. A sample that speculates feeds its drafts in the same step as
// everyone else's tokens (the verify graph then runs, with every row of
// its tokens); drafts are the first thing dropped when the step lacks room.
//
// Not thread-safe: one thread (the server's engine thread, or llmc run's)
// owns the scheduler and its engine; events are called on it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/beam.h"
#include "llmc/runtime/request.h"
#include "llmc/runtime/speculative.h"
#include "llmc/runtime/step_runner.h"

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmc {

struct SchedulerOptions {
  int32_t maxNumSeqs = 64;            // sequences running at once
  int32_t maxNumBatchedTokens = 2048; // new tokens per step
  /// Speculative decoding for the requests that want it (speculative.h):
  /// the proposer (outlives the scheduler; null = none) and the default
  /// options of a request.
  spec::Proposer *proposer = nullptr;
  spec::SpeculativeOptions speculative = {};
  /// Throws llmc::Error naming the flag for a bad value.
  void validate() const;
};

/// One sample's (or beam's) output.
struct SequenceOutput {
  std::vector<int32_t> outputIds;
  std::string text;
  FinishReason finishReason = FinishReason::None;
  std::vector<TokenLogprobs> logprobs; // when the request asked for them
  double score = 0, sumLogprobs = 0;   // beam search
};

struct RequestResult {
  uint64_t id = 0;
  std::vector<SequenceOutput> outputs; // n samples, or the best beams
  GenerationMetrics metrics;      // of the request (TPOT: of output 0's tokens)
  int64_t cachedPromptTokens = 0; // prefix-cache hits at first admission
  BeamStats beamStats;            // beam search
};

/// What a request produced in one step, for streaming.
struct RequestEvent {
  uint64_t id = 0;
  int32_t index = 0;                          // the sample
  std::vector<int32_t> tokens;                // new tokens of that sample
  std::vector<TokenLogprobs> logprobs;        // theirs, when asked for
  std::string text;                           // new final text
  FinishReason finished = FinishReason::None; // this sample just ended
};

struct ScheduledRequest {
  uint64_t id = 0;
  std::vector<int32_t> prompt;
  RequestOptions options;
  int32_t n = 1;                   // samples with seeds seed, seed + 1, ...
  std::optional<BeamOptions> beam; // beam search instead of sampling
  /// Drafts per verification for this request: -1 = the scheduler's
  /// default, 0 = do not speculate (samples only; beams never do).
  int32_t speculativeTokens = -1;
  RequestClock::Clock::time_point arrival = RequestClock::Clock::now();
  /// Called on the scheduler's thread: per sample, as tokens arrive
  /// (samples only, not beams), and once when the request ends.
  std::function<void(const RequestEvent &)> onEvent;
  std::function<void(RequestResult)> onFinish;
};

/// What one kind of step cost: decode (every sequence feeds one token),
/// mixed (decodes beside prompt chunks), prefill (chunks only), verify
/// (speculative drafts). Seconds are host wall time: planning the step,
/// the engine's graph, then sampling and bookkeeping.
enum class StepKind { Decode, Mixed, Prefill, Verify };
struct StepTime {
  int64_t steps = 0, decodeRows = 0, chunkTokens = 0;
  double planSeconds = 0, engineSeconds = 0, sampleSeconds = 0;
};

/// Totals since the scheduler started (Prometheus counters).
struct SchedulerCounters {
  int64_t promptTokens = 0, generationTokens = 0;
  int64_t prefixQueryTokens = 0, prefixHitTokens = 0;
  int64_t preemptions = 0, steps = 0;
  int64_t specDraftTokens = 0, specAcceptedTokens = 0; // verified, accepted
  std::map<FinishReason, int64_t> finished;
  int32_t maxRunningSeqs = 0;       // the largest batch of sequences seen
  std::array<StepTime, 4> stepTime; // by StepKind
};

class Scheduler {
public:
  /// `engine` (an Engine, or a test's fake) and `tokenizer` (may be null:
  /// no text) outlive the scheduler.
  Scheduler(StepRunner &engine, const tok::Tokenizer *tokenizer,
            SchedulerOptions options);
  ~Scheduler();
  Scheduler(const Scheduler &) = delete;
  Scheduler &operator=(const Scheduler &) = delete;

  /// Queues a request. Throws llmc::Error, queueing nothing, for a bad
  /// request: an empty prompt, an id outside the vocabulary, bad sampling
  /// parameters, a prompt longer than the context, or one that could not
  /// fit in the whole KV pool even alone (the message gives its token
  /// count and the pool's capacity in tokens).
  void add(ScheduledRequest request);
  /// Ends a waiting or running request now (FinishReason::Abort), frees its
  /// blocks and calls its onFinish. False if no such request is live.
  bool abort(uint64_t id);
  /// abort() for every waiting and running request.
  void abortAll();
  /// One engine step (nothing when idle). Returns the number of tokens run.
  int64_t step();
  /// step() until no request is left.
  void runToCompletion();

  bool idle() const { return waiting_.empty() && running_.empty(); }
  size_t waitingRequests() const { return waiting_.size(); }
  size_t runningRequests() const { return running_.size(); }
  /// Held KV blocks / all blocks.
  double kvUsage() const;
  const SchedulerCounters &counters() const { return counters_; }
  const SchedulerOptions &options() const { return options_; }
  StepRunner &engine() { return engine_; }

  struct Group; // a request and its sequences (scheduler.cpp)

private:
  void admit(std::vector<StepWork> &work, int64_t &budget);
  bool preemptNewest(Group *current);
  void propose();
  void sampleNext(Group &g, size_t index, std::span<const float> logits);
  void emitTokens(Group &g, size_t index, std::span<const int32_t> tokens);
  void noteBeamBlocks(Group &g);
  void finishGroup(Group &g, std::vector<std::unique_ptr<Group>> &from);

  StepRunner &engine_;
  const tok::Tokenizer *tokenizer_;
  SchedulerOptions options_;
  std::deque<std::unique_ptr<Group>> waiting_;
  std::vector<std::unique_ptr<Group>> running_; // admission order
  SchedulerCounters counters_;
  std::vector<float> logits_;
  uint64_t nextSpecKey_ = 0; // the proposer's name for each sequence
};

} // namespace llmc
