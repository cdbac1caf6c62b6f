//===- generate.cpp - Prefill, then sample token by token ------------------===//

#include "llmc/runtime/generate.h"

#include "llmc/runtime/stop.h"
#include "llmc/support/error.h"
#include "llmc/tokenizer/stream_decoder.h"

#include <algorithm>
#include <chrono>
#include <sys/resource.h>

namespace llmc {

int64_t peakRssBytes() {
  struct rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

GenerateResult generate(Engine &engine, const tok::Tokenizer *tokenizer,
                        const std::vector<int32_t> &prompt,
                        const GenerateOptions &options,
                        const std::function<void(const std::string &)> &onText) {
  using Clock = std::chrono::steady_clock;
  options.sampling.validate();
  if (prompt.empty())
    throw Error("the prompt is empty: give --prompt text or --prompt-ids");
  if (options.maxNewTokens < 0)
    throw Error("--max-new-tokens must be >= 0, got " +
                std::to_string(options.maxNewTokens));
  const int64_t vocab = engine.vocabSize();
  for (int32_t id : prompt)
    if (id < 0 || id >= vocab)
      throw Error("prompt token id " + std::to_string(id) +
                  " is outside the vocabulary [0, " + std::to_string(vocab) +
                  ")");
  if (static_cast<int64_t>(prompt.size()) > engine.contextLength())
    throw Error("the prompt has " + std::to_string(prompt.size()) +
                " tokens but the context length is " +
                std::to_string(engine.contextLength()));
  if (!options.stops.empty() && !tokenizer)
    throw Error("--stop needs a tokenizer, and this plan has none");

  GenerateResult result;
  sample::Sampler sampler(options.sampling);
  std::unique_ptr<tok::StreamDecoder> detok;
  if (tokenizer)
    detok = std::make_unique<tok::StreamDecoder>(*tokenizer, true);
  text::StopMatcher stopper(options.stops);
  auto emit = [&](const std::string &s) {
    if (s.empty())
      return;
    result.text += s;
    if (onText)
      onText(s);
  };

  std::vector<float> logits(static_cast<size_t>(vocab));
  if (options.keepAllPromptLogits) {
    // Every position's logits come from the verify graph, on a scratch
    // sequence, so the generation below is untouched.
    result.allPromptLogits.resize(prompt.size() * static_cast<size_t>(vocab));
    int32_t scratch = engine.newSequence();
    engine.prefill(scratch, prompt, result.allPromptLogits.data(), true);
    engine.releaseSequence(scratch);
  }
  int32_t seq = engine.newSequence();
  auto start = Clock::now();
  engine.prefill(seq, prompt, logits.data());
  if (options.keepPromptLogits)
    result.promptLogits = logits;

  Clock::time_point firstToken, lastToken;
  result.finishReason = "length";
  std::vector<int32_t> &out = result.outputIds;
  while (static_cast<int64_t>(out.size()) < options.maxNewTokens) {
    int32_t next = sampler.sample(logits, prompt, out);
    out.push_back(next);
    lastToken = Clock::now();
    if (out.size() == 1)
      firstToken = lastToken;
    bool eos = std::find(options.eosIds.begin(), options.eosIds.end(),
                         next) != options.eosIds.end();
    if (detok && !eos) {
      auto r = stopper.push(detok->push(next));
      emit(r.emit);
      if (r.stopped) {
        result.finishReason = "stop";
        break;
      }
    }
    if (eos) {
      result.finishReason = "eos";
      break;
    }
    if (static_cast<int64_t>(out.size()) >= options.maxNewTokens)
      break;
    if (engine.length(seq) + 1 > engine.contextLength()) {
      result.finishReason = "context";
      break;
    }
    engine.decode(std::span<const int32_t>(&seq, 1),
                  std::span<const int32_t>(&next, 1), logits.data());
  }
  if (detok && result.finishReason != "stop") {
    auto r = stopper.push(detok->flush());
    emit(r.emit);
    emit(stopper.flush());
  }
  if (out.empty())
    firstToken = lastToken = Clock::now();

  GenerationMetrics &m = result.metrics;
  auto seconds = [](Clock::duration d) {
    return std::chrono::duration<double>(d).count();
  };
  m.promptTokens = static_cast<int64_t>(prompt.size());
  m.generatedTokens = static_cast<int64_t>(out.size());
  m.ttftSeconds = seconds(firstToken - start);
  m.prefillTokensPerSecond = m.ttftSeconds > 0 ? m.promptTokens / m.ttftSeconds : 0;
  if (out.size() > 1) {
    m.tpotSeconds = seconds(lastToken - firstToken) /
                    static_cast<double>(out.size() - 1);
    m.decodeTokensPerSecond = m.tpotSeconds > 0 ? 1.0 / m.tpotSeconds : 0;
  }
  m.peakRssBytes = peakRssBytes();
  m.kvBytesPerToken = engine.kvBytesPerToken();
  m.kvBytesUsed = m.kvBytesPerToken * engine.length(seq);
  engine.releaseSequence(seq);
  return result;
}

} // namespace llmc
