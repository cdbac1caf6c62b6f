//===- generate.cpp - Prefill, then sample token by token
//------------------===//

#include "llmc/runtime/generate.h"

#include "llmc/runtime/stop.h"
#include "llmc/support/error.h"
#include "llmc/tokenizer/stream_decoder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sys/resource.h>

namespace llmc {

int64_t peakRssBytes() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

namespace {

using Clock = std::chrono::steady_clock;

void checkPrompt(const Engine &engine, const std::vector<int32_t> &prompt,
                 const GenerateOptions &options,
                 const tok::Tokenizer *tokenizer) {
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
  if (!options.stops.empty() && !tokenizer)
    throw Error("--stop needs a tokenizer, and this plan has none");
}

/// The raw distribution's best `n` tokens: what the model said before any
/// sampling processor touched it.
std::vector<sample::TraceEntry> topRaw(const std::vector<float> &logits,
                                       int n) {
  std::vector<float> probs = sample::softmax(logits);
  std::vector<int32_t> order(logits.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<int32_t>(i);
  size_t k = std::min(order.size(), static_cast<size_t>(std::max(n, 0)));
  std::partial_sort(order.begin(), order.begin() + static_cast<long>(k),
                    order.end(), [&](int32_t a, int32_t b) {
                      return logits[a] > logits[b] ||
                             (logits[a] == logits[b] && a < b);
                    });
  std::vector<sample::TraceEntry> out;
  for (size_t i = 0; i < k; ++i)
    out.push_back({order[i], logits[order[i]], probs[order[i]]});
  return out;
}

} // namespace

GenerateResult
generateOn(Engine &engine, const tok::Tokenizer *tokenizer, int32_t seq,
           const std::vector<int32_t> &prompt, const GenerateOptions &options,
           const std::function<void(const std::string &)> &onText) {
  checkPrompt(engine, prompt, options, tokenizer);
  const int64_t cached = engine.length(seq);
  if (cached >= static_cast<int64_t>(prompt.size()))
    throw Error("generateOn: the cache already holds " +
                std::to_string(cached) + " of the prompt's " +
                std::to_string(prompt.size()) +
                " tokens; at least one must be new");
  if (static_cast<int64_t>(prompt.size()) > engine.contextLength())
    throw Error("the prompt has " + std::to_string(prompt.size()) +
                " tokens but the context length is " +
                std::to_string(engine.contextLength()));
  const int64_t vocab = engine.vocabSize();

  GenerateResult result;
  result.promptIds = prompt;
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
  auto textOf = [&](std::vector<int32_t> ids) {
    return tokenizer ? tokenizer->decode(ids) : std::string();
  };

  std::vector<float> logits(static_cast<size_t>(vocab));
  std::span<const int32_t> fresh(prompt.data() + cached,
                                 prompt.size() - static_cast<size_t>(cached));
  auto start = Clock::now();
  engine.prefill(seq, fresh, logits.data());
  if (options.keepPromptLogits)
    result.promptLogits = logits;

  StepTrace trace;
  const bool tracing = static_cast<bool>(options.onStep);
  if (tracing) {
    trace.phase = "prefill";
    trace.fedIds.assign(fresh.begin(), fresh.end());
    trace.fedText = textOf(trace.fedIds);
  }

  Clock::time_point firstToken, lastToken;
  result.finishReason = "length";
  std::vector<int32_t> &out = result.outputIds;
  while (static_cast<int64_t>(out.size()) < options.maxNewTokens) {
    int32_t next;
    if (tracing) {
      trace.cacheLength = engine.length(seq);
      trace.topRaw = topRaw(logits, options.traceTopN);
      next = sampler.sample(logits, prompt, out, &trace.processors,
                            options.traceTopN);
      trace.chosenId = next;
      trace.chosenText = textOf({next});
    } else {
      next = sampler.sample(logits, prompt, out);
    }
    out.push_back(next);
    lastToken = Clock::now();
    if (out.size() == 1)
      firstToken = lastToken;
    bool eos = std::find(options.eosIds.begin(), options.eosIds.end(), next) !=
               options.eosIds.end();
    bool done = false;
    if (detok && !eos) {
      auto r = stopper.push(detok->push(next));
      emit(r.emit);
      if (r.stopped) {
        result.finishReason = "stop";
        done = true;
      }
    }
    if (!done && eos) {
      result.finishReason = "eos";
      done = true;
    }
    if (!done && static_cast<int64_t>(out.size()) >= options.maxNewTokens)
      done = true;
    if (!done && engine.length(seq) + 1 > engine.contextLength()) {
      result.finishReason = "context";
      done = true;
    }
    if (tracing) {
      if (done)
        trace.finishReason = result.finishReason;
      options.onStep(trace);
      trace.step += 1;
      trace.phase = "decode";
      trace.fedIds = {next};
      trace.fedText = trace.chosenText;
    }
    if (done)
      break;
    engine.decode(std::span<const int32_t>(&seq, 1),
                  std::span<const int32_t>(&next, 1), logits.data());
  }
  if (out.empty() && tracing) {
    // --max-new-tokens 0: the prefill still happened; report it.
    trace.cacheLength = engine.length(seq);
    trace.finishReason = result.finishReason;
    options.onStep(trace);
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
  m.reusedPromptTokens = cached;
  m.generatedTokens = static_cast<int64_t>(out.size());
  m.ttftSeconds = seconds(firstToken - start);
  m.prefillTokensPerSecond =
      m.ttftSeconds > 0 ? static_cast<double>(fresh.size()) / m.ttftSeconds : 0;
  if (out.size() > 1) {
    m.tpotSeconds =
        seconds(lastToken - firstToken) / static_cast<double>(out.size() - 1);
    m.decodeTokensPerSecond = m.tpotSeconds > 0 ? 1.0 / m.tpotSeconds : 0;
  }
  m.peakRssBytes = peakRssBytes();
  m.kvBytesPerToken = engine.kvBytesPerToken();
  m.kvBytesUsed = m.kvBytesPerToken * engine.length(seq);
  return result;
}

GenerateResult
generate(Engine &engine, const tok::Tokenizer *tokenizer,
         const std::vector<int32_t> &promptIn, const GenerateOptions &options,
         const std::function<void(const std::string &)> &onText) {
  checkPrompt(engine, promptIn, options, tokenizer);
  const auto ctx = engine.contextLength();
  const auto given = static_cast<int64_t>(promptIn.size());
  std::vector<int32_t> truncated;
  int64_t dropped = 0;
  if (options.truncateLeft && given > ctx - 1 && ctx > 1) {
    // Keep the most recent tokens: for continuation and chat they matter
    // most, and one position is left for the token generated next.
    dropped = given - (ctx - 1);
    truncated.assign(promptIn.begin() + dropped, promptIn.end());
  } else if (given > ctx) {
    throw Error("the prompt has " + std::to_string(given) +
                " tokens but the context length is " + std::to_string(ctx) +
                "; shorten the prompt, or pass --truncate left to keep its "
                "last " +
                std::to_string(ctx - 1) + " tokens");
  }
  const std::vector<int32_t> &prompt = dropped ? truncated : promptIn;

  std::vector<float> allLogits;
  if (options.keepAllPromptLogits) {
    // Every position's logits come from the verify graph, on a scratch
    // sequence, so the generation below is untouched.
    allLogits.resize(prompt.size() * static_cast<size_t>(engine.vocabSize()));
    int32_t scratch = engine.newSequence();
    engine.prefill(scratch, prompt, allLogits.data(), true);
    engine.releaseSequence(scratch);
  }
  int32_t seq = engine.newSequence();
  GenerateResult result;
  try {
    result = generateOn(engine, tokenizer, seq, prompt, options, onText);
  } catch (...) {
    engine.releaseSequence(seq);
    throw;
  }
  engine.releaseSequence(seq);
  result.allPromptLogits = std::move(allLogits);
  result.metrics.droppedPromptTokens = dropped;
  return result;
}

} // namespace llmc
