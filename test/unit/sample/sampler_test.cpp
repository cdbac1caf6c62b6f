#include "llmc/runtime/sampler.h"
#include "llmc/support/error.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <numeric>
#include <random>

using namespace llmc::sample;

namespace {

SamplingParams withTemperature(float t) {
  SamplingParams p;
  p.temperature = t;
  return p;
}

std::vector<int32_t> ids(const Candidates &c) {
  std::vector<int32_t> out;
  for (const Candidate &x : c)
    out.push_back(x.id);
  return out;
}

} // namespace

TEST(Greedy, PicksArgmaxWhateverTopKAndTopPSay) {
  SamplingParams p = withTemperature(0);
  p.topK = 1;
  p.topP = 0.01f;
  p.minP = 0.9f;
  Sampler s(p);
  std::vector<float> logits = {0.1f, 3.0f, 2.0f, -1.0f};
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(s.sample(logits, {}, {}), 1);
}

TEST(Greedy, TiesGoToLowestId) {
  Sampler s(withTemperature(0));
  std::vector<float> logits = {1.0f, 5.0f, 5.0f, 2.0f};
  EXPECT_EQ(s.sample(logits, {}, {}), 1);
}

// Plain greedy skips the processor chain (one pass over the row); asking
// for a trace runs the chain: both pick the same token, masks included.
TEST(Greedy, OnePassAgreesWithTheChain) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> level(0, 7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> logits(64);
    for (float &l : logits) // few distinct values: ties are common
      l = level(rng) == 0 ? -INFINITY : float(level(rng));
    logits[size_t(trial % 64)] = 0.0f; // at least one finite logit
    Sampler fast(withTemperature(0)), chain(withTemperature(0));
    std::vector<ProcessorTrace> trace;
    EXPECT_EQ(fast.sample(logits, {}, {}),
              chain.sample(logits, {}, {}, &trace, 1));
  }
  Sampler s(withTemperature(0));
  std::vector<float> masked = {-INFINITY, -INFINITY};
  EXPECT_THROW(s.sample(masked, {}, {}), llmc::Error);
}

TEST(Greedy, PenaltiesStillApply) {
  SamplingParams p = withTemperature(0);
  p.repetitionPenalty = 2.0f;
  Sampler s(p);
  std::vector<float> logits = {3.0f, 2.5f};
  const int32_t prompt[] = {0};
  EXPECT_EQ(s.sample(logits, prompt, {}), 1); // 3 / 2 < 2.5
  EXPECT_EQ(s.sample(logits, {}, {}), 0);
}

TEST(Sampler, PresenceCountsGeneratedTokensOnly) {
  SamplingParams p;
  p.presencePenalty = 1.0f;
  Sampler s(p);
  std::vector<float> logits = {1.0f, 1.0f};
  const int32_t prompt[] = {0};
  const int32_t generated[] = {1};
  const Candidates &c = s.process(logits, prompt, generated);
  EXPECT_EQ(c[0].logit, 1.0f);
  EXPECT_EQ(c[1].logit, 0.0f);
}

// The example in docs/sampling.md: HF order (temperature first) keeps two
// tokens, llama.cpp's (temperature last) keeps one.
TEST(Sampler, OrderExampleFromTheDocs) {
  SamplingParams p = withTemperature(2.0f);
  p.topP = 0.6f;
  Sampler s(p);
  std::vector<float> logits = {2.0f, 1.0f, 0.0f};
  const Candidates &hf = s.process(logits, {}, {});
  ASSERT_EQ(ids(hf), (std::vector<int32_t>{0, 1}));
  auto probs = probabilities(hf);
  EXPECT_NEAR(probs[0], 0.6225, 1e-4);
  EXPECT_NEAR(probs[1], 0.3775, 1e-4);

  Candidates llama = {{0, 2.0f}, {1, 1.0f}, {2, 0.0f}};
  applyTopP(llama, 0.6f);
  applyTemperature(llama, 2.0f);
  EXPECT_EQ(ids(llama), (std::vector<int32_t>{0}));
}

TEST(Sampler, MaskedTokensAreNeverDrawn) {
  Sampler s(SamplingParams{});
  std::vector<float> logits = {0.0f, -INFINITY, 0.0f, -INFINITY};
  for (int i = 0; i < 2000; ++i) {
    int32_t t = s.sample(logits, {}, {});
    ASSERT_TRUE(t == 0 || t == 2) << t;
  }
}

TEST(Sampler, RejectsBadRows) {
  Sampler s(SamplingParams{});
  std::vector<float> nan = {0.0f, NAN};
  std::vector<float> inf = {INFINITY, 0.0f};
  std::vector<float> masked = {-INFINITY, -INFINITY};
  std::vector<float> ok = {0.0f, 1.0f};
  const int32_t outside[] = {2};
  const int32_t negative[] = {-1};
  EXPECT_THROW(s.sample({}, {}, {}), llmc::Error);
  EXPECT_THROW(s.sample(nan, {}, {}), llmc::Error);
  EXPECT_THROW(s.sample(inf, {}, {}), llmc::Error);
  EXPECT_THROW(s.sample(masked, {}, {}), llmc::Error);
  EXPECT_THROW(s.sample(ok, outside, {}), llmc::Error);
  EXPECT_THROW(s.sample(ok, {}, negative), llmc::Error);
  try {
    s.sample(nan, {}, {});
  } catch (const llmc::Error &e) {
    EXPECT_STREQ(e.what(), "sampler: logit of token 1 is NaN");
  }
}

TEST(Determinism, SameSeedSameSequenceDifferentSeedsDiffer) {
  std::vector<float> logits(1000);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = std::sin(static_cast<float>(i)) * 2;
  auto run = [&](uint64_t seed) {
    SamplingParams p;
    p.seed = seed;
    p.topK = 50;
    Sampler s(p);
    std::vector<int32_t> out;
    for (int i = 0; i < 200; ++i)
      out.push_back(s.sample(logits, {}, out));
    return out;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

// Pins the exact tokens for one seed so a change in the RNG, the uniform
// mapping or the draw order shows up as a failure, on any platform. Over four
// equal logits the draw is floor(4u); the values come from an independent
// Python implementation of splitmix64 + xoshiro256**.
TEST(Determinism, GoldenTokensForSeed42) {
  SamplingParams p;
  p.seed = 42;
  Sampler s(p);
  std::vector<float> logits = {0.0f, 0.0f, 0.0f, 0.0f};
  std::vector<int32_t> got;
  for (int i = 0; i < 12; ++i)
    got.push_back(s.sample(logits, {}, {}));
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2, 3, 3, 3, 2, 3, 3, 2, 2, 1}));
}

TEST(Determinism, TracingDoesNotChangeTheDraw) {
  std::vector<float> logits = {1.0f, 2.0f, 0.5f, 1.5f, -1.0f};
  SamplingParams p;
  p.seed = 3;
  p.temperature = 0.7f;
  p.topK = 4;
  Sampler a(p), b(p);
  std::vector<ProcessorTrace> trace;
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(a.sample(logits, {}, {}), b.sample(logits, {}, {}, &trace, 3));
}

// Draws 20000 tokens after temperature + top-k + top-p and compares the
// counts with the distribution computed here from the definitions, with a
// chi-square test at alpha = 0.001. The seeds are fixed, so the outcome is
// deterministic; a failure means the sampler's distribution is wrong.
TEST(Statistics, ChiSquareAgainstProcessedDistribution) {
  const std::vector<float> logits = {2.0f, 1.6f, 1.3f,  1.0f,
                                     0.7f, 0.2f, -0.5f, -1.0f};
  const float temperature = 0.8f, topP = 0.9f;
  const int topK = 6;

  // Expected: softmax(logits / T) over the top 6, then the nucleus.
  std::vector<double> w;
  for (int i = 0; i < topK; ++i)
    w.push_back(std::exp(logits[i] / temperature));
  double total = std::accumulate(w.begin(), w.end(), 0.0), mass = 0;
  size_t kept = 0;
  while (kept < w.size() && mass < topP * total)
    mass += w[kept++];
  ASSERT_EQ(kept, 5u); // hand check: cumulative .383 .615 .775 .884 | .960
  std::vector<double> expected(logits.size(), 0.0);
  for (size_t i = 0; i < kept; ++i)
    expected[i] = w[i] / mass;

  // Critical values of chi-square at alpha = 0.001 by degrees of freedom.
  const double critical[] = {0, 10.828, 13.816, 16.266, 18.467, 20.515};
  for (uint64_t seed : {1u, 2u, 3u}) {
    SamplingParams p;
    p.seed = seed;
    p.temperature = temperature;
    p.topK = topK;
    p.topP = topP;
    Sampler s(p);
    const int n = 20000;
    std::vector<int> counts(logits.size(), 0);
    for (int i = 0; i < n; ++i)
      ++counts[s.sample(logits, {}, {})];
    double chi2 = 0;
    for (size_t i = 0; i < logits.size(); ++i) {
      if (expected[i] == 0) {
        EXPECT_EQ(counts[i], 0) << "excluded token " << i << " was drawn";
        continue;
      }
      double e = expected[i] * n;
      chi2 += (counts[i] - e) * (counts[i] - e) / e;
    }
    EXPECT_LT(chi2, critical[kept - 1]) << "seed " << seed;
  }
}

TEST(Explain, TraceListsActiveProcessorsInOrder) {
  SamplingParams p;
  p.repetitionPenalty = 1.5f;
  p.temperature = 0.5f;
  p.topK = 2;
  p.minP = 0.01f;
  Sampler s(p);
  std::vector<float> logits = {3.0f, 2.0f, 1.0f, 0.0f};
  const int32_t prompt[] = {0};
  std::vector<ProcessorTrace> trace;
  s.sample(logits, prompt, {}, &trace, 3);
  ASSERT_EQ(trace.size(), 4u);
  EXPECT_EQ(trace[0].name, "repetition_penalty");
  EXPECT_EQ(trace[1].name, "temperature");
  EXPECT_EQ(trace[2].name, "top_k");
  EXPECT_EQ(trace[3].name, "min_p");

  // Repetition penalty: token 0 goes 3 -> 2, tying token 1 (lower id first).
  ASSERT_EQ(trace[0].topBefore.size(), 3u);
  EXPECT_EQ(trace[0].topBefore[0].id, 0);
  EXPECT_EQ(trace[0].topBefore[0].logit, 3.0f);
  EXPECT_EQ(trace[0].topAfter[0].id, 0);
  EXPECT_EQ(trace[0].topAfter[0].logit, 2.0f);
  EXPECT_EQ(trace[0].topAfter[1].id, 1);

  // Top-k 2 keeps the tied pair, renormalised to 1/2 each.
  ASSERT_EQ(trace[2].topAfter.size(), 2u);
  EXPECT_NEAR(trace[2].topAfter[0].prob, 0.5f, 1e-6);
  EXPECT_NEAR(trace[2].topAfter[1].prob, 0.5f, 1e-6);
  EXPECT_LT(trace[2].topBefore[0].prob, 0.5f);
}

TEST(Explain, OffProcessorsAreNotTraced) {
  Sampler s(SamplingParams{});
  std::vector<float> logits = {0.0f, 1.0f};
  std::vector<ProcessorTrace> trace(3);
  s.sample(logits, {}, {}, &trace);
  EXPECT_TRUE(trace.empty());
}

TEST(Sampler, LargeVocabWithSmallTopK) {
  std::vector<float> logits(151936);
  Rng r(9);
  for (float &l : logits)
    l = static_cast<float>(r.uniform() * 20 - 10);
  SamplingParams p;
  p.topK = 40;
  p.topP = 0.95f;
  p.temperature = 0.7f;
  Sampler s(p);
  const Candidates &c = s.process(logits, {}, {});
  EXPECT_LE(c.size(), 40u);
  EXPECT_TRUE(std::is_sorted(c.begin(), c.end(),
                             [](auto &a, auto &b) { return a.id < b.id; }));
}
