//===- perplexity.cpp - Perplexity of a token stream under a plan ---------===//

#include "llmc/runtime/perplexity.h"
#include "llmc/support/error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

namespace llmc {

namespace {

/// -log softmax(row)[target], in double: a float sum over a large vocabulary
/// loses the digits the comparison with the training script needs.
double negLogLikelihood(const float *row, int64_t vocab, int32_t target) {
  float peak = *std::max_element(row, row + vocab);
  double sum = 0;
  for (int64_t i = 0; i < vocab; ++i)
    sum += std::exp(static_cast<double>(row[i]) - peak);
  return std::log(sum) + peak - static_cast<double>(row[target]);
}

} // namespace

PerplexityResult
perplexity(Engine &engine, std::span<const int32_t> tokens,
           std::optional<int32_t> bos, int64_t context,
           const std::function<void(int64_t, int64_t)> &onWindow) {
  if (tokens.empty())
    throw Error("perplexity: the text encodes to no tokens");
  if (context < 2)
    throw Error("perplexity: the context must be at least 2 tokens, got " +
                std::to_string(context));
  if (context > engine.contextLength())
    throw Error("perplexity: a context of " + std::to_string(context) +
                " tokens is longer than the engine's " +
                std::to_string(engine.contextLength()));
  const int64_t vocab = engine.vocabSize();
  const int64_t stride = bos ? context - 1 : context;
  const int64_t total =
      (static_cast<int64_t>(tokens.size()) + stride - 1) / stride;
  for (int32_t t : tokens)
    if (t < 0 || t >= vocab)
      throw Error("perplexity: token id " + std::to_string(t) +
                  " is outside the vocabulary of " + std::to_string(vocab));

  auto t0 = std::chrono::steady_clock::now();
  PerplexityResult r;
  double nll = 0, nllSquares = 0;
  std::vector<int32_t> window;
  std::vector<float> logits;
  for (int64_t start = 0; start < static_cast<int64_t>(tokens.size());
       start += stride) {
    int64_t n = std::min<int64_t>(stride, tokens.size() - start);
    window.clear();
    if (bos)
      window.push_back(*bos);
    window.insert(window.end(), tokens.begin() + start,
                  tokens.begin() + start + n);
    if (window.size() < 2)
      break; // a lone trailing token without BOS has nothing to predict it
    logits.resize(window.size() * static_cast<size_t>(vocab));
    int32_t seq = engine.newSequence();
    try {
      engine.prefill(seq, window, logits.data(), /*allLogits=*/true);
    } catch (...) {
      engine.releaseSequence(seq);
      throw;
    }
    engine.releaseSequence(seq);
    for (size_t i = 0; i + 1 < window.size(); ++i) {
      double x =
          negLogLikelihood(logits.data() + i * vocab, vocab, window[i + 1]);
      nll += x;
      nllSquares += x * x;
    }
    r.scored += static_cast<int64_t>(window.size()) - 1;
    ++r.windows;
    if (onWindow)
      onWindow(r.windows, total);
  }
  r.meanNll = nll / static_cast<double>(r.scored);
  r.perplexity = std::exp(r.meanNll);
  if (r.scored > 1) {
    double n = static_cast<double>(r.scored);
    double variance =
        std::max(0.0, (nllSquares / n - r.meanNll * r.meanNll) * n / (n - 1));
    r.nllStdError = std::sqrt(variance / n);
  }
  r.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return r;
}

} // namespace llmc
