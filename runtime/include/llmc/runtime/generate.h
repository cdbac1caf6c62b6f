//===- generate.h - Autoregressive generation for one prompt --*- C++ -*-===//
#pragma once

#include "llmc/runtime/engine.h"
#include "llmc/runtime/request.h"
#include "llmc/runtime/speculative.h"

#include <functional>
#include <string>
#include <vector>

namespace llmc {

/// One step of generation, for --explain: a prefill (the prompt, or the part
/// of it not already cached) or a decode (the previously chosen token), then
/// the sampling of the next token.
struct StepTrace {
  int64_t step = 0;            // 0 = the prefill
  std::string phase;           // "prefill" | "decode"
  std::vector<int32_t> fedIds; // tokens run through the model
  std::string fedText;         // their text ("" without a tokenizer)
  int64_t cacheLength = 0;     // tokens in the KV cache after the step
  std::vector<sample::TraceEntry> topRaw; // raw logits, softmax over vocab
  std::vector<sample::ProcessorTrace> processors; // the sampler's trace
  int32_t chosenId = -1;
  std::string chosenText;
  FinishReason finishReason = FinishReason::None; // on the last step only
};

struct GenerateOptions : RequestOptions {
  bool keepPromptLogits = false;    // fill GenerateResult::promptLogits
  bool keepAllPromptLogits = false; // fill allPromptLogits (verify graph)
  /// --truncate left: a prompt that does not fit keeps its last
  /// contextLength - 1 tokens (room for the one new token); without it such
  /// a prompt is an error that says both lengths.
  bool truncateLeft = false;
  /// Called once per step (prefill, then each decode) after the token is
  /// chosen; the last call carries the finish reason.
  std::function<void(const StepTrace &)> onStep;
  int traceTopN = 5; // candidates per side in StepTrace
  /// Speculative decoding (speculative.h) with `proposer`, which outlives
  /// the call; off when null or speculative.method is None. Not with
  /// onStep (a trace is one token per step).
  spec::Proposer *proposer = nullptr;
  spec::SpeculativeOptions speculative;
};

struct GenerateResult {
  std::vector<int32_t> outputIds;
  std::string text;
  FinishReason finishReason = FinishReason::None;
  GenerationMetrics metrics;
  std::vector<float> promptLogits;    // last prompt position, if asked
  std::vector<float> allPromptLogits; // [prompt, vocab], if asked
  std::vector<int32_t> promptIds;     // the prompt as fed (after truncation)
};

/// Throws llmc::Error naming the problem unless `prompt` can be generated
/// from: not empty, every id in the vocabulary, no longer than the context.
void checkPrompt(const StepRunner &engine, std::span<const int32_t> prompt);

/// Prefills `prompt`, then samples until EOS, a stop string, max new tokens
/// or the context window. `onText` receives text as it becomes final (never
/// half a UTF-8 character, never text a stop string may still claim).
/// `tokenizer` may be null: no text, no stop strings.
GenerateResult
generate(Engine &engine, const tok::Tokenizer *tokenizer,
         const std::vector<int32_t> &prompt, const GenerateOptions &options,
         const std::function<void(const std::string &)> &onText = {});

/// Continues `seq`, whose KV cache already holds the first
/// engine.length(seq) tokens of `prompt` (the caller guarantees they are
/// the same tokens): prefills only the rest, which must not be empty, then
/// samples as above. `seq` is kept, holding the prompt and every generated
/// token but the last (which was sampled, never fed). Chat sessions use it
/// to reuse the cache across turns. truncateLeft and keepAllPromptLogits
/// are not supported here.
GenerateResult
generateOn(Engine &engine, const tok::Tokenizer *tokenizer, int32_t seq,
           const std::vector<int32_t> &prompt, const GenerateOptions &options,
           const std::function<void(const std::string &)> &onText = {});

} // namespace llmc
