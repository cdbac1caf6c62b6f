//===- perplexity_test.cpp - Perplexity windows against decode steps ------===//
//
// The model is test/data/models/llama-mqa (vocab 2048, BOS 2047) on the ref
// backend. The oracle scores every token through the decode graph, one
// cached step at a time, where perplexity() runs each window through the
// verify graph at once: the two share no graph and no windowing code.
//
//===----------------------------------------------------------------------===//

#include "llmc/runtime/perplexity.h"
#include "llmc/support/error.h"

#include "../compiled_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace llmc {
namespace {

const std::string kBin = LLMC_BIN_DIR;
constexpr int32_t kBos = 2047;

class PerplexityTest : public test::CompiledPlanTest<PerplexityTest> {
public:
  static constexpr const char *kModel = "llama-mqa";

protected:
  static std::unique_ptr<Engine> engine(int64_t context) {
    EngineOptions o;
    o.backend = "ref";
    o.threads = 1;
    o.contextLength = context;
    return std::make_unique<Engine>(*plan_, *registry_, o);
  }

  /// -log p(window[i + 1] | window[..i]) for every i, by decode steps.
  static std::vector<double> decodeNll(const std::vector<int32_t> &window) {
    auto e = engine(static_cast<int64_t>(window.size()));
    std::vector<float> logits(static_cast<size_t>(e->vocabSize()));
    int32_t seq = e->newSequence();
    e->prefill(seq, std::span(window.data(), 1), logits.data());
    std::vector<double> out;
    for (size_t i = 1; i < window.size(); ++i) {
      double peak = *std::max_element(logits.begin(), logits.end()), sum = 0;
      for (float l : logits)
        sum += std::exp(l - peak);
      out.push_back(std::log(sum) + peak - logits[window[i]]);
      if (i + 1 < window.size()) {
        int32_t s = seq, t = window[i];
        e->decode(std::span(&s, 1), std::span(&t, 1), logits.data());
      }
    }
    return out;
  }
};

std::vector<int32_t> someTokens(size_t n) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i)
    t[i] = static_cast<int32_t>((i * 733 + 11) % 2000);
  return t;
}

TEST_F(PerplexityTest, WindowsAfterBosScoreEveryTokenAsDecodeStepsDo) {
  const std::vector<int32_t> tokens = someTokens(40);
  const int64_t ctx = 16; // windows of 15 tokens: 15 + 15 + 10
  double expected = 0;
  for (size_t start = 0; start < tokens.size(); start += ctx - 1) {
    std::vector<int32_t> w = {kBos};
    w.insert(w.end(), tokens.begin() + start,
             tokens.begin() + std::min(tokens.size(), start + ctx - 1));
    for (double x : decodeNll(w))
      expected += x;
  }
  expected /= static_cast<double>(tokens.size());

  auto e = engine(ctx);
  std::vector<int64_t> progress;
  PerplexityResult r =
      perplexity(*e, tokens, kBos, ctx, [&](int64_t done, int64_t total) {
        progress.push_back(done * 100 + total);
      });
  EXPECT_EQ(r.windows, 3);
  EXPECT_EQ(r.scored, 40);
  EXPECT_EQ(progress, (std::vector<int64_t>{103, 203, 303}));
  EXPECT_NEAR(r.meanNll, expected, 1e-5);
  EXPECT_NEAR(r.perplexity, std::exp(expected), 1e-5 * r.perplexity);
  EXPECT_GT(r.nllStdError, 0);
  // Each window runs on its own sequence, released after: no block leaks.
  EXPECT_EQ(e->freeBlocks(), e->numBlocks());
}

TEST_F(PerplexityTest, WithoutBosTheFirstTokenOfEachWindowIsContextOnly) {
  const std::vector<int32_t> tokens = someTokens(33);
  const int64_t ctx = 16; // windows 16 + 16 + 1: the lone last token is dropped
  double expected = 0;
  for (size_t start = 0; start + 1 < tokens.size(); start += ctx) {
    std::vector<int32_t> w(tokens.begin() + start,
                           tokens.begin() +
                               std::min(tokens.size(), start + ctx));
    for (double x : decodeNll(w))
      expected += x;
  }
  auto e = engine(ctx);
  PerplexityResult r = perplexity(*e, tokens, std::nullopt, ctx);
  EXPECT_EQ(r.windows, 2);
  EXPECT_EQ(r.scored, 30);
  EXPECT_NEAR(r.meanNll, expected / 30, 1e-5);
}

TEST_F(PerplexityTest, BadInputIsAnError) {
  auto e = engine(16);
  std::vector<int32_t> none, bad = {1, 2048};
  EXPECT_THROW(perplexity(*e, none, kBos, 16), Error);
  EXPECT_THROW(perplexity(*e, someTokens(4), kBos, 1), Error);
  EXPECT_THROW(perplexity(*e, someTokens(4), kBos, 17), Error);
  try {
    perplexity(*e, bad, kBos, 16);
    ADD_FAILURE() << "an id outside the vocabulary was accepted";
  } catch (const Error &err) {
    EXPECT_NE(std::string(err.what()).find("token id 2048"), std::string::npos)
        << err.what();
  }
}

} // namespace
} // namespace llmc
