//===- request.h - One sequence's generation state --------------*- C++ -*-===//
//
// Every way llmc generates (one prompt, n samples, beam search, requests
// in the scheduler, speculative and constrained requests) does the same
// per-sequence work after the model produced a row of logits: sample a
// token with the request's own sampler and RNG, stream it through the
// detokenizer and the stop-string matcher, check EOS, max new tokens and
// the context window, and time it. RequestState is that work, once.
//
// The order of the stop checks, after each token:
//   1. a stop string completes in the text (the string and what follows it
//      are never emitted)         -> FinishReason::Stop
//   2. the token is an EOS id (its text is not emitted) -> Eos
//   3. max new tokens reached     -> Length
//   4. the sequence would not fit the context to feed the token -> Context
//   5. a grammar is complete: nothing but the end may follow -> Stop
// At any end but a stop string the detokenizer and the matcher are flushed.
//
// Not thread-safe; a request belongs to one thread at a time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/grammar/matcher.h"
#include "llmc/runtime/sampler.h"
#include "llmc/text/stop.h"
#include "llmc/text/stream_decoder.h"
#include "llmc/tokenizer/tokenizer.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace llmc {

enum class FinishReason : uint8_t { None, Eos, Length, Stop, Context, Abort };

/// "eos", "length", "stop", "context", "abort" ("" for None): the spelling
/// of llmc run --json and the logs.
const char *finishReasonName(FinishReason reason);

/// What one request asks of generation.
struct RequestOptions {
  int64_t maxNewTokens = 128;
  sample::SamplingParams sampling;
  std::vector<std::string> stops; // matched on the text
  std::vector<int64_t> eosIds;    // empty = ignore EOS
  /// -1: no log-probabilities; k >= 0: each generated token's and the k
  /// most likely alternatives', from the model's raw distribution (before
  /// any sampling processor), as the OpenAI API reports them.
  int32_t logprobs = -1;
  /// Structured output: every token is drawn from those the grammar
  /// allows next (the mask goes before the sampler's processors); EOS is
  /// allowed only where the grammar may end, and the request stops (Stop)
  /// once nothing but the end may follow. Null: free text.
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
  /// The text keeps special tokens' text (a chat template's tool-call and
  /// reasoning markers may be special tokens); EOS ids never have text.
  bool keepSpecialText = false;

  bool isEos(int32_t token) const;
  /// Throws llmc::Error naming the flag (or JSON field) for a bad value.
  void validate(sample::ParamNames names = sample::ParamNames::Flags) const;
};

/// How many tokens a request with `promptTokens` may generate, and why it
/// ends there: max new tokens, or the context window (token t is fed at
/// position promptTokens + t - 1, which must be < contextLength).
struct TokenBudget {
  int64_t tokens;
  FinishReason reason; // Length or Context
};
TokenBudget tokenBudget(int64_t maxNewTokens, int64_t promptTokens,
                        int64_t contextLength);

/// When things happened to a request (steady clock).
struct RequestClock {
  using Clock = std::chrono::steady_clock;
  Clock::time_point arrival = Clock::now(), scheduled = arrival,
                    firstToken = arrival, lastToken = arrival;
  int64_t tokens = 0;

  /// A token was produced now.
  void token(Clock::time_point now = Clock::now());
  double queueSeconds() const; // arrival -> first scheduled
  double ttftSeconds() const;  // arrival -> first token
  /// (t_N - t_1) / (N - 1); 0 below two tokens.
  double tpotSeconds() const;
};

/// A generated token's log-probability and the best alternatives.
struct TokenLogprobs {
  int32_t token = -1;
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top; // best first
};

/// log_softmax of `logits` at `token`, and the `k` best ids (ties: lower
/// id first).
TokenLogprobs tokenLogprobs(std::span<const float> logits, int32_t token,
                            int32_t k);

/// Speculative decoding's counts (runtime/generate/speculative.cpp), per
/// sequence or summed over a run.
struct SpecStats {
  int64_t verifySteps = 0; // steps that fed at least one draft
  int64_t proposed = 0, accepted = 0;
  int64_t pausedSteps = 0; // decode steps the adaptive switch skipped
  double proposeSeconds = 0, verifySeconds = 0;
  double acceptanceRate() const; // accepted / proposed
  /// Tokens a verify step yields: accepted drafts + the target's own.
  double meanAcceptedLength() const;
  SpecStats &operator+=(const SpecStats &o);
};

struct GenerationMetrics {
  int64_t promptTokens = 0, generatedTokens = 0;
  double ttftSeconds = 0;  // start -> first token sampled (prefill included)
  double tpotSeconds = 0;  // (t_N - t_1) / (N - 1): decode time per token
  double queueSeconds = 0; // waiting to be scheduled (scheduler runs)
  double prefillTokensPerSecond = 0, decodeTokensPerSecond = 0;
  int64_t peakRssBytes = 0;
  int64_t kvBytesPerToken = 0, kvBytesUsed = 0;
  int64_t droppedPromptTokens = 0; // cut by --truncate left
  int64_t reusedPromptTokens = 0;  // already in the KV cache, not prefilled
  int64_t preemptions = 0;         // times the scheduler took its blocks
  SpecStats speculative;           // when it speculated
};

class RequestState {
public:
  /// `tokenizer` may be null (no text, and then no stop strings: throws).
  /// `prompt` is every token the sequence holds before the first generated
  /// one. A request with maxNewTokens 0 starts finished (Length).
  RequestState(
      RequestOptions options, const tok::Tokenizer *tokenizer,
      std::vector<int32_t> prompt, int64_t contextLength,
      RequestClock::Clock::time_point arrival = RequestClock::Clock::now());

  /// Samples the next token from one row of logits (vocabulary size) and
  /// records it with push(). `trace` as in Sampler::sample. Where a
  /// grammar allows no token at all (it needs bytes no token writes) the
  /// request ends (Abort) and -1 is returned.
  int32_t accept(std::span<const float> logits,
                 std::vector<sample::ProcessorTrace> *trace = nullptr,
                 int topN = 5);
  /// Records a token chosen elsewhere (beam search, speculative
  /// verification) and applies the stop checks. With a grammar the token
  /// must be one it allows (else llmc::Error: an internal error).
  void push(int32_t token);
  /// The same, with the row of logits it came from: its log-probabilities
  /// are recorded when options().logprobs asks for them.
  void push(int32_t token, std::span<const float> logits);
  /// Tokens it may still generate (max new tokens or the context).
  int64_t remainingTokens() const {
    return budget_.tokens - static_cast<int64_t>(output_.size());
  }
  /// Ends the request now (abort, a caller's own rule); flushes the text.
  void finish(FinishReason reason);

  bool finished() const { return reason_ != FinishReason::None; }
  FinishReason finishReason() const { return reason_; }
  /// Text made final since the last call (whole UTF-8 characters, nothing
  /// a stop string may still claim).
  std::string takeText();
  const std::string &text() const { return text_; }
  const std::vector<int32_t> &prompt() const { return prompt_; }
  const std::vector<int32_t> &outputIds() const { return output_; }
  /// One entry per generated token when options().logprobs >= 0.
  const std::vector<TokenLogprobs> &logprobs() const { return logprobs_; }
  const RequestOptions &options() const { return options_; }
  sample::Sampler &sampler() { return sampler_; }
  /// The grammar's matcher, at the next token (null without a grammar).
  grammar::Matcher *matcher() { return matcher_ ? &*matcher_ : nullptr; }
  /// `logits` with every token `m` does not allow at -inf, in a buffer of
  /// this request's (valid until the next call); empty when the grammar
  /// allows no token at all.
  std::span<const float> constrain(std::span<const float> logits,
                                   grammar::Matcher &m);
  RequestClock &clock() { return clock_; }
  const RequestClock &clock() const { return clock_; }
  /// Tokens the sequence holds once the last generated one is fed.
  int64_t totalTokens() const {
    return static_cast<int64_t>(prompt_.size() + output_.size());
  }
  /// TTFT, TPOT, token counts and rates from the clock (the KV and memory
  /// fields are the caller's to fill).
  GenerationMetrics metrics(int64_t prefilledTokens) const;

private:
  void emit(const std::string &s);

  RequestOptions options_;
  const tok::Tokenizer *tokenizer_;
  std::vector<int32_t> prompt_, output_;
  std::vector<TokenLogprobs> logprobs_;
  TokenBudget budget_;
  sample::Sampler sampler_;
  std::optional<grammar::Matcher> matcher_;
  grammar::TokenMask mask_;
  std::vector<float> masked_;
  std::unique_ptr<text::StreamDecoder> detok_;
  text::StopMatcher stopper_;
  std::string text_;
  size_t taken_ = 0;
  FinishReason reason_ = FinishReason::None;
  RequestClock clock_;
};

} // namespace llmc
