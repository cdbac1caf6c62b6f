//===- request_state.cpp - One sequence's generation state ----------------===//
#include "llmc/runtime/request.h"

#include "llmc/support/error.h"

#include <algorithm>

namespace llmc {

const char *finishReasonName(FinishReason reason) {
  switch (reason) {
  case FinishReason::None:
    return "";
  case FinishReason::Eos:
    return "eos";
  case FinishReason::Length:
    return "length";
  case FinishReason::Stop:
    return "stop";
  case FinishReason::Context:
    return "context";
  case FinishReason::Abort:
    return "abort";
  }
  return "";
}

bool RequestOptions::isEos(int32_t token) const {
  return std::find(eosIds.begin(), eosIds.end(), token) != eosIds.end();
}

void RequestOptions::validate(sample::ParamNames names) const {
  sampling.validate(names);
  if (maxNewTokens < 0)
    throw Error(sample::paramName("--max-new-tokens", names) +
                " must be >= 0, got " + std::to_string(maxNewTokens));
}

TokenBudget tokenBudget(int64_t maxNewTokens, int64_t promptTokens,
                        int64_t contextLength) {
  int64_t fit = contextLength - promptTokens + 1;
  if (maxNewTokens <= fit)
    return {maxNewTokens, FinishReason::Length};
  return {std::max<int64_t>(fit, 0), FinishReason::Context};
}

TokenLogprobs tokenLogprobs(std::span<const float> logits, int32_t token,
                            int32_t k) {
  std::vector<float> lp = sample::logSoftmax(logits);
  TokenLogprobs t;
  t.token = token;
  t.logprob = lp.at(static_cast<size_t>(token));
  const size_t keep =
      std::min(lp.size(), static_cast<size_t>(std::max<int32_t>(k, 0)));
  std::vector<int32_t> order(lp.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<int32_t>(i);
  std::partial_sort(order.begin(), order.begin() + static_cast<long>(keep),
                    order.end(), [&](int32_t a, int32_t b) {
                      return lp[a] > lp[b] || (lp[a] == lp[b] && a < b);
                    });
  for (size_t i = 0; i < keep; ++i)
    t.top.emplace_back(order[i], lp[static_cast<size_t>(order[i])]);
  return t;
}

void RequestClock::token(Clock::time_point now) {
  if (tokens == 0)
    firstToken = now;
  lastToken = now;
  ++tokens;
}

namespace {
double seconds(RequestClock::Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}
} // namespace

double RequestClock::queueSeconds() const {
  return seconds(scheduled - arrival);
}

double RequestClock::ttftSeconds() const {
  return tokens > 0 ? seconds(firstToken - arrival) : 0;
}

double RequestClock::tpotSeconds() const {
  return tokens > 1
             ? seconds(lastToken - firstToken) / static_cast<double>(tokens - 1)
             : 0;
}

RequestState::RequestState(RequestOptions options,
                           const tok::Tokenizer *tokenizer,
                           std::vector<int32_t> prompt, int64_t contextLength,
                           RequestClock::Clock::time_point arrival)
    : options_(std::move(options)), tokenizer_(tokenizer),
      prompt_(std::move(prompt)),
      budget_(tokenBudget(options_.maxNewTokens,
                          static_cast<int64_t>(prompt_.size()), contextLength)),
      sampler_(options_.sampling), stopper_(options_.stops) {
  if (!options_.stops.empty() && !tokenizer_)
    throw Error("--stop needs a tokenizer, and this plan has none");
  if (tokenizer_)
    detok_ = std::make_unique<text::StreamDecoder>(*tokenizer_,
                                                   !options_.keepSpecialText);
  if (options_.grammar) {
    std::vector<int32_t> eos;
    for (int64_t e : options_.eosIds)
      eos.push_back(static_cast<int32_t>(e));
    matcher_.emplace(options_.grammar, std::move(eos));
  }
  clock_.arrival = clock_.scheduled = clock_.firstToken = clock_.lastToken =
      arrival;
  if (options_.maxNewTokens == 0)
    finish(FinishReason::Length);
}

void RequestState::emit(const std::string &s) { text_ += s; }

int32_t RequestState::accept(std::span<const float> logits,
                             std::vector<sample::ProcessorTrace> *trace,
                             int topN) {
  if (finished())
    throw Error("internal error: a token accepted after the request ended");
  std::span<const float> row = matcher_ ? constrain(logits, *matcher_) : logits;
  if (row.empty()) {
    // The grammar needs bytes no token of this vocabulary writes.
    finish(FinishReason::Abort);
    return -1;
  }
  int32_t token = sampler_.sample(row, prompt_, output_, trace, topN);
  push(token, logits);
  return token;
}

std::span<const float> RequestState::constrain(std::span<const float> logits,
                                               grammar::Matcher &m) {
  if (mask_.size() != m.grammar().vocabulary().size())
    mask_ = grammar::TokenMask(m.grammar().vocabulary().size());
  m.fillMask(mask_);
  if (mask_.count() == 0)
    return {};
  masked_.assign(logits.begin(), logits.end());
  mask_.applyTo(masked_);
  return masked_;
}

void RequestState::push(int32_t token, std::span<const float> logits) {
  if (finished())
    throw Error("internal error: a token pushed after the request ended");
  if (options_.logprobs >= 0)
    logprobs_.push_back(tokenLogprobs(logits, token, options_.logprobs));
  push(token);
}

void RequestState::push(int32_t token) {
  if (finished())
    throw Error("internal error: a token pushed after the request ended");
  if (matcher_ && !matcher_->accept(token))
    throw Error("internal error: token " + std::to_string(token) +
                " is not allowed by the request's grammar");
  output_.push_back(token);
  clock_.token();
  const bool eos = options_.isEos(token);
  if (detok_ && !eos) {
    auto r = stopper_.push(detok_->push(token));
    emit(r.emit);
    if (r.stopped) {
      reason_ = FinishReason::Stop;
      return;
    }
  }
  if (eos)
    finish(FinishReason::Eos);
  else if (static_cast<int64_t>(output_.size()) >= budget_.tokens)
    finish(budget_.reason);
  else if (matcher_ && matcher_->mustEnd())
    finish(FinishReason::Stop);
}

void RequestState::finish(FinishReason reason) {
  if (finished())
    return;
  reason_ = reason;
  // A stop string never gets here (push() ends it without flushing what
  // follows the string); a complete grammar's text is flushed.
  if (detok_) {
    auto r = stopper_.push(detok_->flush());
    emit(r.emit);
    emit(stopper_.flush());
  }
}

std::string RequestState::takeText() {
  std::string out = text_.substr(taken_);
  taken_ = text_.size();
  return out;
}

GenerationMetrics RequestState::metrics(int64_t prefilledTokens) const {
  GenerationMetrics m;
  m.promptTokens = static_cast<int64_t>(prompt_.size());
  m.generatedTokens = static_cast<int64_t>(output_.size());
  m.queueSeconds = clock_.queueSeconds();
  m.ttftSeconds = clock_.ttftSeconds();
  m.tpotSeconds = clock_.tpotSeconds();
  double prefillSeconds = m.ttftSeconds - m.queueSeconds;
  m.prefillTokensPerSecond =
      prefillSeconds > 0 ? static_cast<double>(prefilledTokens) / prefillSeconds
                         : 0;
  m.decodeTokensPerSecond = m.tpotSeconds > 0 ? 1.0 / m.tpotSeconds : 0;
  return m;
}

} // namespace llmc
