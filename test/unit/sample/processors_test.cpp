#include "llmc/runtime/sampler.h"
#include "llmc/support/error.h"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <map>

using namespace llmc::sample;

namespace {

// Candidates whose softmax is exactly `probs` (logit = log p).
Candidates fromProbs(std::vector<double> probs) {
  Candidates c;
  for (size_t i = 0; i < probs.size(); ++i)
    c.push_back(
        {static_cast<int32_t>(i), static_cast<float>(std::log(probs[i]))});
  return c;
}

Candidates fromLogits(std::vector<float> logits) {
  Candidates c;
  for (size_t i = 0; i < logits.size(); ++i)
    c.push_back({static_cast<int32_t>(i), logits[i]});
  return c;
}

std::map<int32_t, float> distribution(const Candidates &c) {
  std::vector<float> p = probabilities(c);
  std::map<int32_t, float> out;
  for (size_t i = 0; i < c.size(); ++i)
    out[c[i].id] = p[i];
  return out;
}

std::vector<int32_t> ids(const Candidates &c) {
  std::vector<int32_t> out;
  for (const Candidate &x : c)
    out.push_back(x.id);
  return out;
}

void expectDistribution(const Candidates &c,
                        const std::map<int32_t, float> &expected) {
  auto got = distribution(c);
  ASSERT_EQ(got.size(), expected.size()) << "kept ids differ";
  for (auto [id, p] : expected) {
    ASSERT_TRUE(got.count(id)) << "id " << id << " missing";
    EXPECT_NEAR(got[id], p, 1e-5) << "id " << id;
  }
}

// A brute-force reference: full sort, then the textbook definitions.
std::vector<int32_t> referenceTopP(const Candidates &c, float p) {
  Candidates s(c);
  std::sort(s.begin(), s.end(), [](const Candidate &a, const Candidate &b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  });
  double mx = s[0].logit, total = 0;
  for (auto &x : c)
    total += std::exp(double(x.logit - mx));
  double mass = 0;
  std::vector<int32_t> keep;
  for (auto &x : s) {
    if (mass >= p * total)
      break;
    keep.push_back(x.id);
    mass += std::exp(double(x.logit - mx));
  }
  std::sort(keep.begin(), keep.end());
  return keep;
}

Candidates randomVocab(size_t n, uint64_t seed) {
  Rng r(seed);
  Candidates c(n);
  for (size_t i = 0; i < n; ++i)
    // Quantised to make ties common, spread to make the nucleus wide.
    c[i] = {static_cast<int32_t>(i),
            static_cast<float>(std::floor(r.uniform() * 400) / 40 - 5)};
  return c;
}

} // namespace

TEST(Temperature, HalfDoublesLogits) {
  Candidates c = fromLogits({1.0f, -2.0f, 0.5f});
  applyTemperature(c, 0.5f);
  EXPECT_EQ(c[0].logit, 2.0f);
  EXPECT_EQ(c[1].logit, -4.0f);
  EXPECT_EQ(c[2].logit, 1.0f);
}

TEST(Temperature, SaturatesInsteadOfOverflowing) {
  Candidates c = fromLogits({3e38f, -3e38f});
  applyTemperature(c, 1e-4f);
  EXPECT_TRUE(std::isfinite(c[0].logit));
  EXPECT_TRUE(std::isfinite(c[1].logit));
}

TEST(RepetitionPenalty, DividesPositiveAndMultipliesNegative) {
  Candidates c = fromLogits({2.0f, -2.0f, 3.0f, 0.0f});
  const int32_t prompt[] = {0, 3};
  const int32_t generated[] = {1, 1, 1};
  applyRepetitionPenalty(c, prompt, generated, 2.0f);
  EXPECT_EQ(c[0].logit, 1.0f);  // prompt, positive
  EXPECT_EQ(c[1].logit, -4.0f); // generated thrice, penalised once
  EXPECT_EQ(c[2].logit, 3.0f);  // unseen
  EXPECT_EQ(c[3].logit, 0.0f);  // zero stays zero
}

TEST(RepetitionPenalty, BelowOneEncouragesRepeats) {
  Candidates c = fromLogits({2.0f, -2.0f});
  const int32_t ctx[] = {0, 1};
  applyRepetitionPenalty(c, ctx, {}, 0.5f);
  EXPECT_EQ(c[0].logit, 4.0f);
  EXPECT_EQ(c[1].logit, -1.0f);
}

TEST(RepetitionPenalty, WorksOnASparseCandidateList) {
  Candidates c = {{3, 2.0f}, {10, -1.0f}};
  const int32_t ctx[] = {10, 99};
  applyRepetitionPenalty(c, ctx, {}, 2.0f);
  EXPECT_EQ(c[0].logit, 2.0f);
  EXPECT_EQ(c[1].logit, -2.0f);
}

TEST(PresenceFrequency, SubtractsPresenceOnceAndFrequencyPerCount) {
  Candidates c = fromLogits({1.0f, 1.0f, 1.0f});
  const int32_t generated[] = {1, 2, 1, 1};
  applyPresenceFrequencyPenalty(c, generated, 0.5f, 0.25f);
  EXPECT_FLOAT_EQ(c[0].logit, 1.0f);
  EXPECT_FLOAT_EQ(c[1].logit, 1.0f - 0.5f - 3 * 0.25f);
  EXPECT_FLOAT_EQ(c[2].logit, 1.0f - 0.5f - 1 * 0.25f);
}

TEST(PresenceFrequency, NegativeValuesReward) {
  Candidates c = fromLogits({0.0f, 0.0f});
  const int32_t generated[] = {1, 1};
  applyPresenceFrequencyPenalty(c, generated, -1.0f, -0.5f);
  EXPECT_FLOAT_EQ(c[0].logit, 0.0f);
  EXPECT_FLOAT_EQ(c[1].logit, 2.0f);
}

TEST(TopK, TwoOfFiveRenormalises) {
  Candidates c = fromProbs({0.60, 0.20, 0.10, 0.05, 0.05});
  applyTopK(c, 2);
  expectDistribution(c, {{0, 0.75f}, {1, 0.25f}});
}

TEST(TopK, KeepsTiesAtTheBoundaryLikeHF) {
  Candidates c = fromProbs({0.4, 0.2, 0.2, 0.2});
  applyTopK(c, 2);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{0, 1, 2, 3}));
  applyTopK(c, 1);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{0}));
}

TEST(TopK, OffOrLargerThanVocabIsIdentity) {
  Candidates c = fromProbs({0.5, 0.3, 0.2});
  applyTopK(c, 0);
  EXPECT_EQ(c.size(), 3u);
  applyTopK(c, 10);
  EXPECT_EQ(c.size(), 3u);
}

TEST(TopK, KeepsIdOrderOnUnsortedLogits) {
  Candidates c = fromLogits({0.1f, 5.0f, -1.0f, 3.0f, 4.0f});
  applyTopK(c, 3);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 3, 4}));
}

TEST(TopP, PointNineKeepsFour) {
  Candidates c = fromProbs({0.40, 0.30, 0.15, 0.10, 0.05});
  applyTopP(c, 0.9f);
  expectDistribution(c, {{0, 0.40f / 0.95f},
                         {1, 0.30f / 0.95f},
                         {2, 0.15f / 0.95f},
                         {3, 0.10f / 0.95f}});
}

TEST(TopP, AlwaysKeepsTheTopToken) {
  Candidates c = fromProbs({0.1, 0.7, 0.2});
  applyTopP(c, 0.01f);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1}));
}

TEST(TopP, UnsortedInputKeepsIdOrder) {
  Candidates c = fromProbs({0.05, 0.40, 0.10, 0.30, 0.15});
  applyTopP(c, 0.9f);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{1, 2, 3, 4}));
}

// Exact arithmetic: four equal weights, p = 0.5. HF drops tokens whose
// ascending cumulative mass is <= 1 - p, i.e. the two at 0.25 and 0.5, so a
// token whose predecessors already hold exactly p is dropped; ties keep the
// lower ids.
TEST(TopP, ExactBoundaryMatchesHF) {
  Candidates c = fromLogits({0.0f, 0.0f, 0.0f, 0.0f});
  applyTopP(c, 0.5f);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{0, 1}));
}

TEST(TopP, OneIsIdentity) {
  Candidates c = fromProbs({0.5, 0.3, 0.2});
  applyTopP(c, 1.0f);
  EXPECT_EQ(c.size(), 3u);
}

// Exercises the bounded-prefix path: large nuclei force it to widen several
// times, and ties force the id tie-break.
TEST(TopP, MatchesFullSortReferenceOnLargeVocab) {
  for (uint64_t seed : {1u, 2u}) {
    Candidates vocab = randomVocab(150000, seed);
    for (float p : {0.001f, 0.05f, 0.5f, 0.9f, 0.999f}) {
      Candidates c(vocab);
      applyTopP(c, p);
      EXPECT_EQ(ids(c), referenceTopP(vocab, p)) << "p=" << p;
    }
  }
}

TEST(TopK, MatchesFullSortReferenceOnLargeVocab) {
  Candidates vocab = randomVocab(150000, 3);
  for (int k : {1, 40, 1000, 149999}) {
    Candidates c(vocab);
    applyTopK(c, k);
    std::vector<float> v;
    for (auto &x : vocab)
      v.push_back(x.logit);
    std::sort(v.rbegin(), v.rend());
    std::vector<int32_t> expect;
    for (auto &x : vocab)
      if (x.logit >= v[k - 1])
        expect.push_back(x.id);
    EXPECT_EQ(ids(c), expect) << "k=" << k;
  }
}

TEST(MinP, KeepsProbabilitiesAtLeastMinPTimesTop) {
  // min-p 0.2 with top prob 0.5: the floor is 0.1.
  Candidates c = fromProbs({0.5, 0.2, 0.11, 0.09, 0.05, 0.05});
  applyMinP(c, 0.2f);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{0, 1, 2}));
  expectDistribution(
      c, {{0, 0.5f / 0.81f}, {1, 0.2f / 0.81f}, {2, 0.11f / 0.81f}});
}

TEST(MinP, OneKeepsExactlyTheTiedTop) {
  Candidates c = fromLogits({1.0f, 0.0f, 1.0f});
  applyMinP(c, 1.0f);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{0, 2}));
}

TEST(Distributions, SoftmaxIsStableAndNormalised) {
  std::vector<float> logits = {1000.0f, 1000.0f, -INFINITY, 999.0f};
  auto p = softmax(logits);
  EXPECT_NEAR(p[0] + p[1] + p[2] + p[3], 1.0f, 1e-6);
  EXPECT_EQ(p[2], 0.0f);
  EXPECT_NEAR(p[0], 1.0 / (2 + std::exp(-1.0)), 1e-6);
  auto lp = logSoftmax(logits);
  EXPECT_NEAR(lp[3], std::log(p[3]), 1e-5);
  EXPECT_EQ(lp[2], -INFINITY);
}

TEST(Distributions, SoftmaxNeedsAFiniteLogit) {
  std::vector<float> logits = {-INFINITY, -INFINITY};
  EXPECT_THROW(softmax(logits), llmc::Error);
}

TEST(Distributions, ArgmaxTiesGoToLowestId) {
  EXPECT_EQ(argmax(fromLogits({1, 5, 5, 2})), 1);
  Candidates unordered = {{9, 5}, {4, 5}, {7, 1}};
  EXPECT_EQ(argmax(unordered), 4);
}

TEST(Distributions, DrawWalksTheCdfInIdOrder) {
  Candidates c = fromProbs({0.25, 0.5, 0.25});
  EXPECT_EQ(drawCandidate(c, 0.0), 0);
  EXPECT_EQ(drawCandidate(c, 0.2499), 0);
  EXPECT_EQ(drawCandidate(c, 0.2501), 1);
  EXPECT_EQ(drawCandidate(c, 0.7501), 2);
  EXPECT_EQ(drawCandidate(c, std::nextafter(1.0, 0.0)), 2);
}

TEST(Distributions, DrawNeverPicksZeroProbability) {
  Candidates c = {{0, -INFINITY}, {1, 0.0f}, {2, -INFINITY}};
  EXPECT_EQ(drawCandidate(c, 0.0), 1);
  EXPECT_EQ(drawCandidate(c, std::nextafter(1.0, 0.0)), 1);
}
