//===- speculative.h - Propose k tokens, verify them in one step -*- C++ -*-===//
//
// Speculative decoding: a cheap proposer guesses the next tokens of a
// sequence, the target model scores them all in one step (the verify
// graph: one row of logits per fed token) and the standard rule accepts a
// prefix of them, so that the output keeps the target's distribution:
//
//  - greedy: the drafts equal to the target's choice (the argmax after the
//    penalties), then the target's own token where they part;
//  - sampling: draft x_i is accepted with probability min(1, p(x_i) /
//    q(x_i)); at the first rejection a token is drawn from norm(max(0, p -
//    q)); when every draft is accepted a bonus token is drawn from the last
//    row's p. p is the target's distribution after every sampling processor
//    (penalties over the history including the accepted drafts,
//    temperature, top-k, top-p, min-p), q the proposer's (a point mass for
//    n-grams and greedy drafts).
//
// The KV cache of the target keeps the fed tokens up to the last accepted
// draft; the rest is truncated away. Proposers keep no cache the caller
// must roll back: a draft model compares its cache with the context it is
// given and truncates it itself.
//
// A SpecSequence is one sequence's speculation (its proposal, what the step
// feeds, the verdict, the adaptive switch and the counts); the scheduler and
// generateOn both drive sequences through it. Not thread-safe: the thread
// that steps the sequence owns it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/request.h"
#include "llmc/runtime/sampler.h"
#include "llmc/runtime/step_runner.h"

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace llmc {
class Plan;
}

namespace llmc::spec {

enum class Method { None, Ngram, Draft };
/// "ngram" | "draft" (the --speculative values); throws llmc::Error naming
/// the flag otherwise.
Method parseMethod(const std::string &name);
const char *methodName(Method method); // "", "ngram", "draft"

/// Drafts verified in one step at most: the verify graph has no fixed
/// limit, but past this the rows of a rejected guess cost more than the
/// acceptance they can buy.
inline constexpr int32_t kMaxSpeculativeTokens = 16;

struct SpeculativeOptions {
  Method method = Method::None;
  int32_t numTokens = 4; // k: drafts per verification
  int32_t ngramMax = 4;  // the longest suffix n-gram looked up
  /// Stop speculating for a while when acceptance falls below break-even.
  bool adaptive = true;
  bool enabled() const { return method != Method::None && numTokens > 0; }
  /// Throws llmc::Error naming --num-speculative-tokens or --ngram-max.
  void validate() const;
};

/// A discrete distribution over some token ids (ascending), probabilities
/// summing to 1.
struct TokenProbs {
  std::vector<int32_t> ids;
  std::vector<double> probs;
  double at(int32_t id) const; // 0 for an id not listed
};

/// softmax over a sampler's candidates, in double.
TokenProbs distributionOf(const sample::Candidates &c);
/// A draw from `p` (inverse CDF in id order).
int32_t drawFrom(const TokenProbs &p, sample::Rng &rng);

/// One sequence's request to a proposer, and its answer.
struct Proposal {
  uint64_t key = 0; // the sequence, for a proposer that keeps state
  /// Every token of the sequence: its prompt then what it generated; the
  /// last one is not yet fed to the target.
  std::span<const int32_t> context;
  size_t promptLength = 0;
  int32_t maxTokens = 0;
  const sample::SamplingParams *sampling = nullptr;
  // The answer: up to maxTokens drafts, and when the proposer sampled them
  // the distribution each came from (empty: point masses).
  std::vector<int32_t> tokens;
  std::vector<TokenProbs> q;
};

class Proposer {
public:
  virtual ~Proposer();
  virtual Method method() const = 0;
  /// Fills each proposal's tokens (possibly none), all at once: a draft
  /// model batches its steps over the proposals.
  virtual void propose(std::span<Proposal *const> proposals) = 0;
  /// Sequence `key` ended or lost its cache (preemption): free its state.
  virtual void release(uint64_t key);
};

/// Prompt lookup: the tokens that followed the most recent earlier
/// occurrence of the context's last n tokens, n from ngramMax down to 1.
class NgramProposer : public Proposer {
public:
  explicit NgramProposer(int32_t ngramMax);
  Method method() const override { return Method::Ngram; }
  void propose(std::span<Proposal *const> proposals) override;

private:
  int32_t ngramMax_;
};

/// Throws llmc::Error, naming both plan files, unless `draft` can propose
/// for `target`: the same vocabulary size and the same tokenizer.
void checkDraftCompatible(const Plan &target, const Plan &draft);

/// A second, smaller model over the same vocabulary, on its own KV cache:
/// k steps of its own per proposal round, batched over the proposals.
/// Greedy requests get its argmax (a point mass); sampling requests a draw
/// from its distribution under the request's sampling parameters, with a
/// generator of its own seeded from the request's seed.
class DraftProposer : public Proposer {
public:
  /// `draft` (an Engine over the draft plan, or a test's fake) outlives
  /// this.
  explicit DraftProposer(StepRunner &draft);
  ~DraftProposer() override;
  Method method() const override { return Method::Draft; }
  void propose(std::span<Proposal *const> proposals) override;
  void release(uint64_t key) override;
  StepRunner &engine() { return draft_; }

private:
  struct Seq;
  StepRunner &draft_;
  std::map<uint64_t, std::unique_ptr<Seq>> seqs_;
};

/// What verification gives back: the accepted drafts then the target's own
/// token (so 1 to drafts + 1 tokens), and how many drafts were accepted.
struct Verdict {
  std::vector<int32_t> tokens;
  int32_t accepted = 0;
};

/// The acceptance rule over `rows` (drafts.size() + 1 rows of the target's
/// logits: row i after the context and drafts[0..i)). `q` as in Proposal.
/// Uses state's sampler (processors and RNG); pushes nothing.
Verdict verify(RequestState &state, std::span<const float> rows,
               std::span<const int32_t> drafts,
               std::span<const TokenProbs> q);

/// The sampling rule for one draft: accepted with probability min(1, p(x) /
/// q(x)), else a draw from norm(max(0, p - q)) (from p if that is empty).
/// `p` over its candidates; `q` null for a point mass at x. Sets
/// `accepted`; returns the token.
int32_t acceptOrResample(const TokenProbs &p, const TokenProbs *q, int32_t x,
                         sample::Rng &rng, bool &accepted);

/// The adaptive switch. A sequence's first kPlainFirst decode steps run
/// plain, to time them. Over its last kWindow verifications it must produce
/// tokens at least as fast as its plain steps did (the break-even measured
/// as it runs: tokens per second of its verify steps, proposing included,
/// against its plain steps'); should no plain step have been timed, it must
/// accept kBreakEven of what it proposes (measured on CPU:
/// docs/speculative.md); two verifications that accept nothing are judged
/// at once. Below that it stops proposing for a pause that doubles each
/// time it fails again (from kFirstPause decode steps); then a probe, one
/// verification of a single draft, decides whether to go on.
class Throttle {
public:
  static constexpr int32_t kWindow = 6;
  static constexpr double kBreakEven = 0.2;
  static constexpr int32_t kPlainFirst = 2;
  static constexpr int32_t kFirstPause = 32, kMaxPause = 1024;
  /// Whether this decode step may speculate (a paused step counts down).
  bool active();
  /// After a pause: the next verification is a probe of one draft.
  bool probing() const { return probing_; }
  /// A verification: drafts proposed and accepted, and the time it took.
  void record(int32_t proposed, int32_t accepted, double seconds);
  /// A decode step without drafts took `seconds`.
  void plainStep(double seconds);

private:
  struct Try {
    int32_t proposed, accepted;
    double seconds;
  };
  std::vector<Try> window_;
  double plainSeconds_ = 0; // a moving average; 0 until one is timed
  int32_t pause_ = kPlainFirst, nextPause_ = kFirstPause;
  bool probing_ = false;
};

/// One sequence's speculation, driven by whoever steps it:
///   Proposal *p = s.want(state, context, room);   // null: plain decode
///   proposer.propose({p, ...});                    // batched
///   feed s.fed() (its last token + the drafts), logits for every row
///   int64_t keep = s.settle(state, rows, seconds);  // tokens pushed
///   truncate the KV cache to (its length before the step) + keep
///   s.finishStep(seconds);                          // plain steps too
class SpecSequence {
public:
  SpecSequence(Proposer &proposer, const SpeculativeOptions &options,
               uint64_t key);
  ~SpecSequence();
  SpecSequence(const SpecSequence &) = delete;
  SpecSequence &operator=(const SpecSequence &) = delete;

  /// Before a decode step: the proposal to make, or null (speculation off,
  /// paused, or no room: `room` is how many tokens past the last one the
  /// step may feed). `context` as in Proposal; it must outlive the step.
  Proposal *want(const RequestState &state, std::span<const int32_t> context,
                 int64_t room);
  /// After propose(): the tokens the step feeds, the context's last one
  /// then the drafts. Stable until the next call to shrink, settle or want.
  std::span<const int32_t> fed();
  /// Keeps at most n drafts (the step had no room for more).
  void shrink(size_t n);
  bool hasDrafts() const { return !proposal_.tokens.empty(); }
  /// After the step (the model's part `verifySeconds` long): `rows` has
  /// fed().size() rows of the target's logits. Pushes the verdict's tokens
  /// into `state` (up to where it finishes), with their log-probabilities
  /// when it wants them; returns how many of the fed tokens the KV cache
  /// keeps (1 + the accepted drafts).
  int64_t settle(RequestState &state, std::span<const float> rows,
                 double verifySeconds);
  /// The decode step of this sequence is over, `seconds` long from before
  /// its proposal to after its tokens were pushed (a plain step when it had
  /// no drafts): what the adaptive switch compares.
  void finishStep(double seconds);
  /// The proposer's state for this sequence is gone (preemption).
  void forget();

  const SpecStats &stats() const { return stats_; }
  /// The tokens the last settle() pushed.
  const std::vector<int32_t> &pushed() const { return pushed_; }
  void addProposeSeconds(double s) { stats_.proposeSeconds += s; }

private:
  Proposer &proposer_;
  SpeculativeOptions options_;
  Proposal proposal_;
  std::vector<int32_t> fed_, pushed_;
  int32_t lastProposed_ = 0, lastAccepted_ = 0; // of the settled step
  Throttle throttle_;
  SpecStats stats_;
};

} // namespace llmc::spec
