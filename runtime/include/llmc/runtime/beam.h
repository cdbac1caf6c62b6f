//===- beam.h - Beam search and parallel samples over shared KV -*- C++ -*-===//
//
// Both run several sequences that start from one prompt, as one request of
// the scheduler (runtime/sched): the prompt is prefilled once; every other
// sequence is a fork of it, so the prompt's KV blocks are shared and only a
// partially filled last block is copied before it is written
// (copy-on-write, see KvManager). Each step is one batched engine step over
// all live sequences.
//
// Beam search follows Hugging Face transformers' BeamSearchScorer and
// BeamHypotheses (transformers 4.36-4.49; the later vectorised rewrite keeps
// the same rules except that its early-stopping bound uses the best
// *running* score, where this file, like BeamSearchScorer, uses the best of
// the top 2*num_beams candidates, EOS ones included):
//
//  - each step scores every (beam, token) pair as the beam's sum of log
//    probabilities plus log_softmax(logits)[token], and takes the top
//    max(2, 1 + #eos) * num_beams pairs, best first (ties: lower beam, then
//    lower token id);
//  - walking them in order, a pair whose token is an EOS id becomes a finished
//    hypothesis if its rank is < num_beams (else it is dropped); any other
//    pair becomes a running beam, until num_beams are running;
//  - a hypothesis scores sum_logprobs / len^length_penalty where len is the
//    number of *generated* tokens, the EOS token included (HF >= 4.36
//    counts `cur_len - decoder_prompt_len` with cur_len already holding the
//    new token; older versions divided by the prompt length too);
//  - the search is done once num_beams hypotheses exist and
//    early_stopping = true: immediately;
//    early_stopping = false: when the worst kept hypothesis is >= the best
//      candidate's sum / cur_len^length_penalty;
//    early_stopping = never: the same, but with len = max_new_tokens when
//      length_penalty > 0 (the exact bound);
//  - at max_new_tokens (or the context window) the running beams are added
//    as hypotheses too, unless the search was already done; the best
//    num_return_sequences hypotheses are returned, best first.
//
// The first step expands the prompt alone (HF gets the same by giving beams
// 1.. a score of -1e9). Logits processors: the repetition, presence and
// frequency penalties are applied per beam to the log-probabilities, as HF
// applies its processors to log_softmax output in beam search. Temperature,
// top-k, top-p and min-p are sampling warpers and are rejected: beam search
// here is deterministic. Stop strings are not supported with beams.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/generate.h"

#include <memory>
#include <optional>

#include <cstdint>
#include <string>
#include <vector>

namespace llmc {

/// The most sequences one request may run at once (--n, --num-beams): each
/// decode step carries all of them, and its workspace grows with them. More
/// would be minutes of work that look like a hang; OpenAI caps n at 128.
constexpr int32_t kMaxSequencesPerRequest = 1024;

enum class EarlyStopping { False, True, Never };

struct BeamOptions {
  int32_t numBeams = 4;       // --num-beams, >= 1
  float lengthPenalty = 1.0f; // --length-penalty (HF default 1.0)
  EarlyStopping earlyStopping = EarlyStopping::False; // --early-stopping
  int32_t numReturnSequences = 1; // --num-return-sequences, in [1, beams]
  int64_t maxNewTokens = 128;
  std::vector<int64_t> eosIds;
  /// Only the penalties are used; temperature must stay 0 and top-k/top-p/
  /// min-p off (validate() says which flag to drop).
  sample::SamplingParams penalties = [] {
    sample::SamplingParams p;
    p.temperature = 0.0f;
    return p;
  }();
  /// Structured output: each beam keeps to the grammar (its log-
  /// probabilities masked after the penalties, as HF applies logits
  /// processors); a beam whose grammar is complete is a finished
  /// hypothesis (Stop), like one that emitted EOS.
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
  /// Throws llmc::Error naming the flag and the bad value.
  void validate() const;
};

struct BeamHypothesis {
  std::vector<int32_t> outputIds; // generated tokens, a final EOS included
  std::string text;               // decoded output, EOS excluded
  FinishReason finishReason = FinishReason::None; // Eos, Stop, Length, Context
  double score = 0; // sumLogprobs / len^length_penalty
  double sumLogprobs = 0;
};

struct BeamStats {
  /// The most KV blocks in use at once (after any decode step), and the
  /// most the live beams would have needed had every beam owned private
  /// copies of its blocks: the gap is what sharing saved.
  int32_t peakBlocksUsed = 0;
  int32_t peakBlocksUnshared = 0;
  int64_t decodeSteps = 0;
};

struct BeamResult {
  std::vector<BeamHypothesis> hypotheses; // best first, numReturnSequences
  GenerationMetrics metrics;              // generatedTokens: of the best
  BeamStats stats;
};

/// The search itself, step by step, without the KV bookkeeping (the
/// scheduler keeps one engine sequence per running beam).
class BeamSearcher {
public:
  /// Validates `options` (throws llmc::Error naming the flag).
  BeamSearcher(BeamOptions options, std::vector<int32_t> prompt,
               int64_t vocabSize, int64_t contextLength);
  ~BeamSearcher();

  struct Beam {
    std::vector<int32_t> tokens;
    double sum = 0;                          // log-probability of the tokens
    std::optional<grammar::Matcher> matcher; // with a grammar
  };
  /// A running beam of the next step: beam `parent` of this step with
  /// `token` appended.
  struct Next {
    int32_t parent, token;
  };
  /// Feeds one row of logits per running beam, in beams() order (the first
  /// step: the prompt's one row). Returns the next running beams; empty
  /// once the search is over.
  std::vector<Next> step(std::span<const float> logits);
  bool done() const { return done_; }
  const std::vector<Beam> &beams() const { return beams_; }
  int64_t steps() const { return steps_; }
  /// The best numReturnSequences hypotheses, best first, with their text
  /// (EOS excluded) when `tokenizer` is given. Once done().
  std::vector<BeamHypothesis> results(const tok::Tokenizer *tokenizer) const;

private:
  struct State;
  BeamOptions options_;
  std::vector<int32_t> prompt_;
  RequestOptions limits_;
  size_t keep_ = 0;
  int64_t maxSteps_ = 0, steps_ = 0;
  FinishReason endReason_ = FinishReason::Length;
  std::unique_ptr<State> state_;
  std::vector<Beam> beams_;
  std::vector<BeamHypothesis> results_;
  grammar::TokenMask mask_;
  bool done_ = false;
};

/// Beam search from `prompt`. `tokenizer` may be null (no text). The engine
/// needs blocks for numBeams sequences (EngineOptions::maxSequences >=
/// numBeams suffices: dead beams are released before new ones fork).
BeamResult beamSearch(Engine &engine, const tok::Tokenizer *tokenizer,
                      const std::vector<int32_t> &prompt,
                      const BeamOptions &options);

/// `n` independent samples of one prompt: the prompt is prefilled once and
/// shared, sample i draws with seed options.sampling.seed + i and stops on
/// its own (EOS, stop strings, max new tokens, context); all live samples
/// advance in one batched decode per step. Sample i's tokens equal those of
/// generate() with that seed. The engine needs blocks for `n` sequences.
std::vector<GenerateResult> generateN(Engine &engine,
                                      const tok::Tokenizer *tokenizer,
                                      const std::vector<int32_t> &prompt,
                                      const GenerateOptions &options,
                                      int32_t n);

} // namespace llmc
