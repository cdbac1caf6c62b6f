//===- generate.cpp - Prefill, then sample token by token -----------------===//
#include "llmc/runtime/generate.h"

#include "llmc/support/error.h"
#include "llmc/support/memory.h"

#include <algorithm>
#include <optional>

namespace llmc {

void checkPrompt(const StepRunner &engine, std::span<const int32_t> prompt) {
  if (prompt.empty())
    throw Error("the prompt is empty: give --prompt text or --prompt-ids");
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
}

namespace {

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
  options.validate();
  checkPrompt(engine, prompt);
  const int64_t cached = engine.length(seq);
  if (cached >= static_cast<int64_t>(prompt.size()))
    throw Error("generateOn: the cache already holds " +
                std::to_string(cached) + " of the prompt's " +
                std::to_string(prompt.size()) +
                " tokens; at least one must be new");
  const auto start = RequestClock::Clock::now();
  RequestState request(options, tokenizer, prompt, engine.contextLength(),
                       start);
  auto textOf = [&](std::vector<int32_t> ids) {
    return tokenizer ? tokenizer->decode(ids) : std::string();
  };
  auto emit = [&] {
    std::string s = request.takeText();
    if (!s.empty() && onText)
      onText(s);
  };

  GenerateResult result;
  result.promptIds = prompt;
  std::vector<float> logits(static_cast<size_t>(engine.vocabSize()));
  std::span<const int32_t> fresh(prompt.data() + cached,
                                 prompt.size() - static_cast<size_t>(cached));
  engine.prefill(seq, fresh, logits.data());
  if (options.keepPromptLogits)
    result.promptLogits = logits;

  StepTrace trace;
  const bool tracing = static_cast<bool>(options.onStep);
  std::unique_ptr<spec::SpecSequence> spec;
  if (options.proposer && options.speculative.enabled()) {
    if (tracing)
      throw Error("--explain shows one token per step; it cannot be combined "
                  "with --speculative");
    options.speculative.validate();
    spec = std::make_unique<spec::SpecSequence>(
        *options.proposer, options.speculative, static_cast<uint64_t>(seq));
  }
  // The sequence's every token (prompt, then generated) for the proposer.
  std::vector<int32_t> context;
  std::vector<float> rows;
  if (tracing) {
    trace.phase = "prefill";
    trace.fedIds.assign(fresh.begin(), fresh.end());
    trace.fedText = textOf(trace.fedIds);
  }
  using Clock = RequestClock::Clock;
  auto seconds = [](Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
  };
  // A plain decode step runs from its decode to its token's sampling.
  std::optional<Clock::time_point> plainStart;
  while (!request.finished()) {
    int32_t next;
    if (tracing) {
      trace.cacheLength = engine.length(seq);
      trace.topRaw = topRaw(logits, options.traceTopN);
      next = request.accept(logits, &trace.processors, options.traceTopN);
      trace.chosenId = next;
      trace.chosenText = textOf({next});
      trace.finishReason = request.finishReason();
      options.onStep(trace);
      trace.step += 1;
      trace.phase = "decode";
      trace.fedIds = {next};
      trace.fedText = trace.chosenText;
    } else {
      next = request.accept(logits);
    }
    emit();
    if (spec && plainStart)
      spec->finishStep(seconds(*plainStart));
    if (request.finished())
      break;
    while (spec && !request.finished()) {
      const auto t0 = Clock::now();
      context = prompt;
      context.insert(context.end(), request.outputIds().begin(),
                     request.outputIds().end());
      const int64_t before = engine.length(seq);
      spec::Proposal *p =
          spec->want(request, context, engine.draftRoom(before + 1));
      if (!p)
        break;
      options.proposer->propose(std::span<spec::Proposal *const>(&p, 1));
      spec->addProposeSeconds(seconds(t0));
      const auto t1 = Clock::now();
      const std::span<const int32_t> fed = spec->fed();
      StepWork w{seq, fed, static_cast<int32_t>(fed.size())};
      rows.resize(fed.size() * logits.size());
      engine.step(std::span<const StepWork>(&w, 1), rows.data());
      const int64_t keep = spec->settle(request, rows, seconds(t1));
      engine.truncate(seq, before + keep);
      emit();
      spec->finishStep(seconds(t0));
    }
    if (request.finished())
      break;
    next = request.outputIds().back();
    plainStart = Clock::now();
    engine.decode(std::span<const int32_t>(&seq, 1),
                  std::span<const int32_t>(&next, 1), logits.data());
  }
  if (request.outputIds().empty() && tracing) {
    // --max-new-tokens 0: the prefill still happened; report it.
    trace.cacheLength = engine.length(seq);
    trace.finishReason = request.finishReason();
    options.onStep(trace);
  }
  emit();

  result.outputIds = request.outputIds();
  result.text = request.text();
  result.finishReason = request.finishReason();
  GenerationMetrics &m = result.metrics;
  m = request.metrics(static_cast<int64_t>(fresh.size()));
  if (result.outputIds.empty()) {
    // No token: TTFT is the prefill alone.
    m.ttftSeconds =
        std::chrono::duration<double>(RequestClock::Clock::now() - start)
            .count();
    m.prefillTokensPerSecond =
        m.ttftSeconds > 0 ? static_cast<double>(fresh.size()) / m.ttftSeconds
                          : 0;
  }
  m.reusedPromptTokens = cached;
  if (spec)
    m.speculative = spec->stats();
  m.peakRssBytes = peakRssBytes();
  m.kvBytesPerToken = engine.kvBytesPerToken();
  m.kvBytesUsed = engine.kvPool().bytesFor(engine.length(seq));
  return result;
}

GenerateResult
generate(Engine &engine, const tok::Tokenizer *tokenizer,
         const std::vector<int32_t> &promptIn, const GenerateOptions &options,
         const std::function<void(const std::string &)> &onText) {
  options.validate();
  if (promptIn.empty())
    throw Error("the prompt is empty: give --prompt text or --prompt-ids");
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
  checkPrompt(engine, prompt);

  std::vector<float> allLogits;
  if (options.keepAllPromptLogits) {
    // Every position's logits come from the verify graph, on a scratch
    // sequence, so the generation below is untouched.
    allLogits.resize(prompt.size() * static_cast<size_t>(engine.vocabSize()));
    int32_t scratch = engine.newSequence();
    try {
      engine.prefill(scratch, prompt, allLogits.data(), true);
    } catch (...) {
      engine.releaseSequence(scratch);
      throw;
    }
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
