//===- generate.h - Autoregressive generation for one prompt --*- C++ -*-===//
#pragma once

#include "llmc/runtime/engine.h"
#include "llmc/runtime/sampler.h"
#include "llmc/tokenizer/tokenizer.h"

#include <functional>
#include <string>
#include <vector>

namespace llmc {

struct GenerateOptions {
  int64_t maxNewTokens = 128;
  sample::SamplingParams sampling;
  std::vector<std::string> stops;      // --stop, matched on text
  std::vector<int64_t> eosIds;         // generation stops after one of these
  bool keepPromptLogits = false;       // fill GenerateResult::promptLogits
  bool keepAllPromptLogits = false;    // fill allPromptLogits (verify graph)
};

struct GenerationMetrics {
  int64_t promptTokens = 0, generatedTokens = 0;
  double ttftSeconds = 0;   // start -> first token sampled (prefill included)
  double tpotSeconds = 0;   // (t_N - t_1) / (N - 1): decode time per token
  double prefillTokensPerSecond = 0, decodeTokensPerSecond = 0;
  int64_t peakRssBytes = 0;
  int64_t kvBytesPerToken = 0, kvBytesUsed = 0;
};

struct GenerateResult {
  std::vector<int32_t> outputIds;
  std::string text;
  std::string finishReason; // eos | length | stop | context
  GenerationMetrics metrics;
  std::vector<float> promptLogits; // last prompt position, if asked
  std::vector<float> allPromptLogits; // [prompt, vocab], if asked
};

/// Prefills `prompt`, then samples until EOS, a stop string, max new tokens
/// or the context window. `onText` receives text as it becomes final (never
/// half a UTF-8 character, never text a stop string may still claim).
/// `tokenizer` may be null: no text, no stop strings.
GenerateResult generate(Engine &engine, const tok::Tokenizer *tokenizer,
                        const std::vector<int32_t> &prompt,
                        const GenerateOptions &options,
                        const std::function<void(const std::string &)> &onText = {});

/// Peak resident set size of this process, in bytes.
int64_t peakRssBytes();

/// The tokenizer a plan carries, or null if it has none.
std::unique_ptr<tok::Tokenizer> tokenizerFromPlan(const Plan &plan);

} // namespace llmc
