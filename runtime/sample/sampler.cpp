#include "llmc/runtime/sampler.h"
#include "llmc/support/error.h"

#include <algorithm>
#include <cmath>

namespace llmc::sample {
namespace {

std::vector<TraceEntry> top(const Candidates &c, int n) {
  if (c.empty() || n <= 0)
    return {};
  const std::vector<float> probs = probabilities(c);
  std::vector<TraceEntry> all(c.size());
  for (size_t i = 0; i < c.size(); ++i)
    all[i] = {c[i].id, c[i].logit, probs[i]};
  const size_t k = std::min(all.size(), static_cast<size_t>(n));
  std::partial_sort(all.begin(), all.begin() + k, all.end(),
                    [](const TraceEntry &a, const TraceEntry &b) {
                      return a.logit > b.logit ||
                             (a.logit == b.logit && a.id < b.id);
                    });
  all.resize(k);
  return all;
}

void checkIds(std::span<const int32_t> ids, size_t vocab, const char *what) {
  for (int32_t id : ids)
    if (id < 0 || static_cast<size_t>(id) >= vocab)
      throw Error(std::string("sampler: ") + what + " token id " +
                  std::to_string(id) + " is outside the vocabulary of " +
                  std::to_string(vocab) + " logits");
}

/// What every path checks first: a row, and ids inside it.
void checkInputs(std::span<const float> logits,
                 std::span<const int32_t> promptIds,
                 std::span<const int32_t> generatedIds) {
  if (logits.empty())
    throw Error("sampler: empty logits row");
  checkIds(promptIds, logits.size(), "prompt");
  checkIds(generatedIds, logits.size(), "generated");
}

/// Logit i may be any finite value or -inf (a mask), never NaN or +inf.
void checkLogit(size_t i, float l) {
  if (std::isnan(l) || l == INFINITY)
    throw Error("sampler: logit of token " + std::to_string(i) + " is " +
                (std::isnan(l) ? "NaN" : "+inf"));
}

const char *const kAllMasked =
    "sampler: every logit is -inf, nothing can be sampled";

} // namespace

Sampler::Sampler(SamplingParams params) : params_(params), rng_(params.seed) {
  params_.validate();
}

const Candidates &Sampler::process(std::span<const float> logits,
                                   std::span<const int32_t> promptIds,
                                   std::span<const int32_t> generatedIds,
                                   std::vector<ProcessorTrace> *trace,
                                   int topN) {
  checkInputs(logits, promptIds, generatedIds);
  candidates_.clear();
  candidates_.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    const float l = logits[i];
    checkLogit(i, l);
    // -inf is a mask (grammar, banned token): such a token can never be
    // drawn, so it need not travel through the chain.
    if (l != -INFINITY)
      candidates_.push_back({static_cast<int32_t>(i), l});
  }
  if (candidates_.empty())
    throw Error(kAllMasked);

  if (trace)
    trace->clear();
  auto step = [&](const char *name, auto &&apply) {
    if (!trace) {
      apply();
      return;
    }
    ProcessorTrace t{name, top(candidates_, topN), {}};
    apply();
    t.topAfter = top(candidates_, topN);
    trace->push_back(std::move(t));
  };

  const SamplingParams &p = params_;
  if (p.repetitionPenalty != 1.0f)
    step("repetition_penalty", [&] {
      applyRepetitionPenalty(candidates_, promptIds, generatedIds,
                             p.repetitionPenalty);
    });
  if (p.presencePenalty != 0.0f || p.frequencyPenalty != 0.0f)
    step("presence_frequency_penalty", [&] {
      applyPresenceFrequencyPenalty(candidates_, generatedIds,
                                    p.presencePenalty, p.frequencyPenalty);
    });
  if (p.greedy())
    return candidates_;
  if (p.temperature != 1.0f)
    step("temperature", [&] { applyTemperature(candidates_, p.temperature); });
  if (p.topK > 0)
    step("top_k", [&] { applyTopK(candidates_, p.topK); });
  if (p.topP < 1.0f)
    step("top_p", [&] { applyTopP(candidates_, p.topP); });
  if (p.minP > 0.0f)
    step("min_p", [&] { applyMinP(candidates_, p.minP); });
  return candidates_;
}

int32_t Sampler::sample(std::span<const float> logits,
                        std::span<const int32_t> promptIds,
                        std::span<const int32_t> generatedIds,
                        std::vector<ProcessorTrace> *trace, int topN) {
  const SamplingParams &p = params_;
  if (p.greedy() && !trace && p.repetitionPenalty == 1.0f &&
      p.presencePenalty == 0.0f && p.frequencyPenalty == 0.0f) {
    // The chain would only copy the row into candidates to take their
    // argmax: one pass instead, with the same checks and the same winner
    // (the first of equal maxima), once per sequence per step.
    checkInputs(logits, promptIds, generatedIds);
    int64_t best = -1;
    for (size_t i = 0; i < logits.size(); ++i) {
      const float l = logits[i];
      checkLogit(i, l);
      if (l != -INFINITY && (best < 0 || l > logits[size_t(best)]))
        best = static_cast<int64_t>(i);
    }
    if (best < 0)
      throw Error(kAllMasked);
    return static_cast<int32_t>(best);
  }
  const Candidates &c = process(logits, promptIds, generatedIds, trace, topN);
  if (params_.greedy())
    return argmax(c);
  return drawCandidate(c, rng_.uniform());
}

} // namespace llmc::sample
