// Speculative decoding without a compiled model: the acceptance rule keeps
// the target's distribution (checked by counting), greedy verification
// accepts exactly the prefix the target agrees with, the n-gram lookup, the
// adaptive switch, a draft model's cache following its context, and the
// scheduler with speculating requests (fake_model.h as target and draft):
// greedy output equals the plain run, batched and under preemption; sampled
// output keeps its distribution (chi-square); no block leaks in either
// cache.
#include "../sched/fake_model.h"

#include "llmc/grammar/gbnf.h"
#include "llmc/runtime/scheduler.h"
#include "llmc/runtime/speculative.h"
#include "llmc/support/error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <tuple>

namespace llmc::test {
namespace {

using spec::Method;
using ::testing::HasSubstr;

/// The chi-square value a statistic of `df` degrees of freedom exceeds with
/// probability 1e-3 (Wilson-Hilferty; z = 3.09).
double chiSquareCritical(double df) {
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + 3.09 * std::sqrt(a), 3);
}

/// Pearson's statistic of `counts` against probabilities `p` over `n`
/// draws; cells expected below 5 are merged into one.
double goodnessOfFit(const std::vector<int64_t> &counts,
                     const std::vector<double> &p, int64_t n, int &df) {
  double chi = 0, restObserved = 0, restExpected = 0;
  df = -1;
  for (size_t i = 0; i < p.size(); ++i) {
    const double e = p[i] * static_cast<double>(n);
    if (e < 5) {
      restObserved += static_cast<double>(counts[i]);
      restExpected += e;
      continue;
    }
    chi += (static_cast<double>(counts[i]) - e) *
           (static_cast<double>(counts[i]) - e) / e;
    ++df;
  }
  if (restExpected > 0) {
    chi += (restObserved - restExpected) * (restObserved - restExpected) /
           restExpected;
    ++df;
  }
  return chi;
}

spec::TokenProbs randomDistribution(std::mt19937 &rng, int vocab,
                                    double zeroShare) {
  spec::TokenProbs d;
  std::uniform_real_distribution<double> u(0, 1);
  double total = 0;
  for (int i = 0; i < vocab; ++i) {
    if (u(rng) < zeroShare)
      continue;
    d.ids.push_back(i);
    d.probs.push_back(u(rng) * u(rng));
    total += d.probs.back();
  }
  for (double &p : d.probs)
    p /= total;
  return d;
}

// x ~ q, then the rule: the token it returns is distributed as p, whatever
// q is (a point mass, or a distribution that puts mass where p has none).
TEST(Acceptance, TheRuleKeepsTheTargetDistribution) {
  std::mt19937 gen(11);
  const int V = 12;
  for (int trial = 0; trial < 4; ++trial) {
    spec::TokenProbs p = randomDistribution(gen, V, 0.3);
    spec::TokenProbs q = randomDistribution(gen, V, 0.2);
    sample::Rng rng(100 + trial);
    const int64_t n = 200000;
    std::vector<int64_t> counts(V, 0), pointCounts(V, 0);
    int64_t accepted = 0;
    for (int64_t i = 0; i < n; ++i) {
      bool a = false;
      const int32_t x = spec::drawFrom(q, rng);
      ++counts[spec::acceptOrResample(p, &q, x, rng, a)];
      accepted += a;
      // A point mass at a fixed guess (an n-gram's).
      const int32_t guess = (trial * 5) % V;
      ++pointCounts[spec::acceptOrResample(p, nullptr, guess, rng, a)];
    }
    std::vector<double> full(V, 0);
    for (size_t i = 0; i < p.ids.size(); ++i)
      full[p.ids[i]] = p.probs[i];
    int df = 0;
    double chi = goodnessOfFit(counts, full, n, df);
    EXPECT_LT(chi, chiSquareCritical(df)) << "trial " << trial << " df " << df;
    chi = goodnessOfFit(pointCounts, full, n, df);
    EXPECT_LT(chi, chiSquareCritical(df)) << "point mass, trial " << trial;
    // The acceptance rate is sum min(p, q).
    double overlap = 0;
    for (int i = 0; i < V; ++i)
      overlap += std::min(p.at(i), q.at(i));
    EXPECT_NEAR(static_cast<double>(accepted) / n, overlap, 0.01);
  }
}

/// Logits of one row: `best` highest, then descending by id distance.
std::vector<float> row(int V, int32_t best) {
  std::vector<float> r(static_cast<size_t>(V));
  for (int v = 0; v < V; ++v)
    r[static_cast<size_t>(v)] = v == best ? 5.0f : 1.0f - 0.01f * float(v);
  return r;
}

RequestState greedyState(std::vector<int32_t> prompt, float repetition = 1) {
  RequestOptions o;
  o.maxNewTokens = 100;
  o.sampling.temperature = 0;
  o.sampling.repetitionPenalty = repetition;
  return RequestState(o, nullptr, std::move(prompt), 512);
}

TEST(Acceptance, GreedyAcceptsThePrefixTheTargetAgreesWith) {
  const int V = 20;
  RequestState s = greedyState({1, 2, 3});
  std::vector<float> rows;
  for (int32_t best : {7, 8, 9, 4})
    for (float x : row(V, best))
      rows.push_back(x);
  // Drafts 7, 8 agree; 5 does not: the target's 9 ends it.
  spec::Verdict v = spec::verify(s, rows, std::vector<int32_t>{7, 8, 5}, {});
  EXPECT_EQ(v.accepted, 2);
  EXPECT_EQ(v.tokens, (std::vector<int32_t>{7, 8, 9}));
  // All accepted: the last row's token is the bonus.
  v = spec::verify(s, rows, std::vector<int32_t>{7, 8, 9}, {});
  EXPECT_EQ(v.accepted, 3);
  EXPECT_EQ(v.tokens, (std::vector<int32_t>{7, 8, 9, 4}));
  // Nothing pushed: verification only judges.
  EXPECT_TRUE(s.outputIds().empty());
}

// The penalties see the accepted drafts as generated tokens: a draft the
// target accepts is penalised in the rows after it, as in a plain run.
TEST(Acceptance, PenaltiesCountTheAcceptedDrafts) {
  const int V = 20;
  RequestState s = greedyState({1, 2, 3}, 100.0f);
  std::vector<float> rows;
  // Row 1 prefers 7 again; with 7 accepted before it, 7 is penalised and
  // the next best (0, logit 1) wins.
  for (int32_t best : {7, 7})
    for (float x : row(V, best))
      rows.push_back(x);
  spec::Verdict v = spec::verify(s, rows, std::vector<int32_t>{7}, {});
  EXPECT_EQ(v.accepted, 1);
  EXPECT_EQ(v.tokens, (std::vector<int32_t>{7, 0}));
}

spec::Proposal proposal(const std::vector<int32_t> &context, int32_t k) {
  static sample::SamplingParams greedy = [] {
    sample::SamplingParams p;
    p.temperature = 0;
    return p;
  }();
  spec::Proposal p;
  p.context = context;
  p.maxTokens = k;
  p.sampling = &greedy;
  return p;
}

TEST(Ngram, ProposesWhatFollowedTheMostRecentMatch) {
  spec::NgramProposer ngram(3);
  // "5 6" occurs twice before the end; the most recent is followed by 7 9.
  std::vector<int32_t> c = {1, 5, 6, 2, 3, 5, 6, 7, 9, 4, 5, 6};
  spec::Proposal p = proposal(c, 4);
  spec::Proposal *ps[] = {&p};
  ngram.propose(ps);
  EXPECT_EQ(p.tokens, (std::vector<int32_t>{7, 9, 4, 5}));
  // A longer n-gram wins over a more recent shorter one: "4 5 6" matches
  // at the start, "6" alone matches later.
  c = {4, 5, 6, 8, 8, 6, 1, 1, 4, 5, 6};
  p = proposal(c, 2);
  ngram.propose(ps);
  EXPECT_EQ(p.tokens, (std::vector<int32_t>{8, 8}));
  // No earlier occurrence of the last token: nothing.
  c = {1, 2, 3, 4};
  p = proposal(c, 4);
  ngram.propose(ps);
  EXPECT_TRUE(p.tokens.empty());
  // The continuation stops at the context's end.
  c = {3, 4, 3};
  p = proposal(c, 4);
  ngram.propose(ps);
  EXPECT_EQ(p.tokens, (std::vector<int32_t>{4, 3}));
}

/// A throttle past its first plain steps (untimed here).
spec::Throttle warmThrottle() {
  spec::Throttle t;
  for (int i = 0; i < spec::Throttle::kPlainFirst; ++i)
    EXPECT_FALSE(t.active());
  return t;
}

TEST(Throttle, PausesBelowBreakEvenAndTriesAgain) {
  spec::Throttle t = warmThrottle();
  // No plain step timed: the acceptance rate decides, here after two
  // verifications that accepted nothing.
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(t.active());
    t.record(4, 0, 1.0);
  }
  int paused = 0;
  while (!t.active())
    ++paused;
  EXPECT_EQ(paused, spec::Throttle::kFirstPause);
  // Then one probe: it fails, and the pause doubles.
  EXPECT_TRUE(t.probing());
  t.record(1, 0, 1.0);
  paused = 0;
  while (!t.active())
    ++paused;
  EXPECT_EQ(paused, 2 * spec::Throttle::kFirstPause);
  // A probe that pays ends the probing; good acceptance keeps it on.
  t.record(1, 1, 1.0);
  EXPECT_FALSE(t.probing());
  for (int i = 0; i < 3 * spec::Throttle::kWindow; ++i) {
    EXPECT_TRUE(t.active());
    t.record(4, 3, 1.0);
  }
}

TEST(Throttle, ComparesWithThePlainStepsSpeed) {
  // Plain steps take 1 s; a verification of 1.5 s that accepts one draft
  // yields 2 tokens: 1.33 tokens/s, it pays.
  spec::Throttle t = warmThrottle();
  t.plainStep(1.0);
  for (int i = 0; i < 3 * spec::Throttle::kWindow; ++i) {
    EXPECT_TRUE(t.active());
    t.record(4, 1, 1.5);
  }
  // Accepting one draft in two steps of 1.6 s: 1.5 tokens per 1.6 s does
  // not pay, although a quarter of the drafts (above kBreakEven) is
  // accepted: the measured speed decides.
  spec::Throttle u = warmThrottle();
  u.plainStep(1.0);
  for (int i = 0; i < spec::Throttle::kWindow; ++i)
    u.record(2, i % 2, 1.6);
  EXPECT_FALSE(u.active());
}

TEST(Options, BadValuesNameTheFlag) {
  spec::SpeculativeOptions o;
  o.method = Method::Ngram;
  o.numTokens = 0;
  EXPECT_THROW(
      {
        try {
          o.validate();
        } catch (const Error &e) {
          EXPECT_THAT(e.what(), HasSubstr("--num-speculative-tokens must be "
                                          "in [1, 16], got 0"));
          throw;
        }
      },
      Error);
  o.numTokens = spec::kMaxSpeculativeTokens + 1;
  EXPECT_THROW(o.validate(), Error);
  o.numTokens = 4;
  o.ngramMax = 0;
  EXPECT_THROW(o.validate(), Error);
  EXPECT_THROW(spec::parseMethod("medusa"), Error);
}

// The draft's cache follows whatever context it is given: what the target
// rejected is truncated, nothing is fed twice, and release frees it all.
TEST(Draft, ItsCacheFollowsTheContext) {
  FakeModel draft({64, 4, false, 512, 50});
  spec::DraftProposer proposer(draft);
  std::vector<int32_t> context = {3, 1, 4, 1, 5};
  spec::Proposal p = proposal(context, 3);
  p.key = 7;
  spec::Proposal *ps[] = {&p};
  proposer.propose(ps);
  ASSERT_EQ(p.tokens.size(), 3u);
  const std::vector<int32_t> drafts = p.tokens;
  // It fed the context and the first two drafts (the third is never fed).
  const size_t stepsBefore = draft.steps.size();
  // The target accepted one draft and chose its own next token.
  context.push_back(drafts[0]);
  context.push_back(49 - drafts[1]);
  p = proposal(context, 3);
  p.key = 7;
  proposer.propose(ps);
  // First step of this round: the rejected token is re-fed after the
  // accepted one, nothing else.
  ASSERT_GT(draft.steps.size(), stepsBefore);
  EXPECT_EQ(draft.steps[stepsBefore].seqLens, (std::vector<int32_t>{1}));
  proposer.release(7);
  draft.checkIdle();
}

//===----------------------------------------------------------------------===//
// The scheduler with speculating requests.
//===----------------------------------------------------------------------===//

std::vector<int32_t> tokens(int32_t n, int32_t salt) {
  std::vector<int32_t> v;
  for (int32_t i = 0; i < n; ++i)
    v.push_back((i * 7 + salt * 13 + 1) % 50);
  return v;
}

ScheduledRequest request(uint64_t id, std::vector<int32_t> prompt,
                         int64_t maxNew, float temperature, uint64_t seed) {
  ScheduledRequest r;
  r.id = id;
  r.prompt = std::move(prompt);
  r.options.maxNewTokens = maxNew;
  r.options.sampling.temperature = temperature;
  r.options.sampling.seed = seed;
  return r;
}

struct Outcome {
  std::map<uint64_t, RequestResult> results;
  SchedulerCounters counters;
};

/// Runs `rs` through a scheduler over a fresh target; `draftSeed` 0: no
/// speculation, else a draft model with that seed (the target's seed: the
/// same model); `ngram` uses prompt lookup instead. Checks both caches.
Outcome runWith(std::vector<ScheduledRequest> rs, FakeModel::Options target,
                SchedulerOptions so, uint64_t draftSeed, bool ngram = false,
                int32_t k = 4) {
  FakeModel model(target);
  FakeModel::Options d = target;
  d.blocks = 256;
  d.seed = draftSeed;
  FakeModel draftModel(d);
  std::unique_ptr<spec::Proposer> proposer;
  if (ngram)
    proposer = std::make_unique<spec::NgramProposer>(3);
  else if (draftSeed)
    proposer = std::make_unique<spec::DraftProposer>(draftModel);
  if (proposer) {
    so.proposer = proposer.get();
    so.speculative.method = ngram ? Method::Ngram : Method::Draft;
    so.speculative.numTokens = k;
    so.speculative.adaptive = false;
  }
  Outcome run;
  {
    Scheduler s(model, nullptr, so);
    for (ScheduledRequest &r : rs) {
      r.onFinish = [&](RequestResult res) {
        run.results[res.id] = std::move(res);
      };
      s.add(std::move(r));
    }
    s.runToCompletion();
    run.counters = s.counters();
  }
  proposer.reset();
  model.checkIdle();
  draftModel.checkIdle();
  return run;
}

std::vector<ScheduledRequest> greedyWorkload() {
  std::vector<ScheduledRequest> rs;
  for (uint64_t id = 0; id < 12; ++id)
    rs.push_back(request(id, tokens(3 + int32_t(id * 3) % 30, int32_t(id)),
                         5 + int64_t(id * 5) % 30, 0.0f, id));
  rs[3].n = 2;
  rs[4].speculativeTokens = 0; // opted out
  rs[5].speculativeTokens = 1; // its own k
  BeamOptions beam;
  beam.numBeams = 2;
  beam.maxNewTokens = 5;
  rs[6].beam = beam; // beams never speculate
  return rs;
}

void expectSameOutputs(const Outcome &got, const Outcome &want) {
  ASSERT_EQ(got.results.size(), want.results.size());
  for (const auto &[id, w] : want.results) {
    const RequestResult &g = got.results.at(id);
    ASSERT_EQ(g.outputs.size(), w.outputs.size()) << "request " << id;
    for (size_t i = 0; i < w.outputs.size(); ++i) {
      EXPECT_EQ(g.outputs[i].outputIds, w.outputs[i].outputIds)
          << "request " << id << " output " << i;
      EXPECT_EQ(g.outputs[i].finishReason, w.outputs[i].finishReason);
    }
  }
}

TEST(SpeculativeScheduler, GreedyOutputIsThePlainOutput) {
  const FakeModel::Options roomy{256, 4, false, 512, 50};
  const SchedulerOptions so{8, 64};
  Outcome plain = runWith(greedyWorkload(), roomy, so, 0);
  // The same model as draft: every draft is accepted.
  Outcome same = runWith(greedyWorkload(), roomy, so, roomy.seed);
  expectSameOutputs(same, plain);
  EXPECT_GT(same.counters.specDraftTokens, 0);
  EXPECT_EQ(same.counters.specAcceptedTokens, same.counters.specDraftTokens);
  // Another model: most drafts are rejected, the output is the same.
  Outcome other = runWith(greedyWorkload(), roomy, so, 12345);
  expectSameOutputs(other, plain);
  EXPECT_LT(other.counters.specAcceptedTokens, other.counters.specDraftTokens);
  Outcome ngram = runWith(greedyWorkload(), roomy, so, 0, true);
  expectSameOutputs(ngram, plain);
  // Fewer steps when drafts are accepted.
  EXPECT_LT(same.counters.steps, plain.counters.steps);
}

// A pool too small for everyone: requests are preempted (their drafts go
// first), recomputed, and still give the plain output; neither cache leaks.
TEST(SpeculativeScheduler, GreedyUnderPreemptionIsThePlainOutput) {
  const FakeModel::Options tight{24, 4, false, 512, 50};
  const SchedulerOptions so{8, 32};
  Outcome plain = runWith(greedyWorkload(), {256, 4, false, 512, 50}, so, 0);
  Outcome same = runWith(greedyWorkload(), tight, so, 1469598103934665603ull);
  EXPECT_GT(same.counters.preemptions, 0);
  expectSameOutputs(same, plain);
  Outcome ngram = runWith(greedyWorkload(), tight, so, 0, true);
  expectSameOutputs(ngram, plain);
  // With prefix caching, rejected drafts' blocks may stay cached: still
  // the same output.
  FakeModel::Options cached = tight;
  cached.prefixCaching = true;
  Outcome other = runWith(greedyWorkload(), cached, so, 777);
  expectSameOutputs(other, plain);
}

/// The joint distribution of a request's first three tokens, over `n`
/// seeds, batched through the scheduler.
std::map<std::vector<int32_t>, int64_t> firstTokens(int64_t n,
                                                    uint64_t draftSeed) {
  std::vector<ScheduledRequest> rs;
  for (int64_t i = 0; i < n; ++i) {
    ScheduledRequest r =
        request(uint64_t(i), tokens(6, 3), 3, 1.0f, uint64_t(1000 + i));
    r.options.sampling.topK = 3;
    rs.push_back(std::move(r));
  }
  Outcome run = runWith(std::move(rs), {1024, 4, false, 512, 50}, {64, 512},
                        draftSeed, false, 2);
  std::map<std::vector<int32_t>, int64_t> counts;
  for (const auto &[id, r] : run.results)
    ++counts[r.outputs[0].outputIds];
  return counts;
}

// Sampling keeps the target's distribution: the first three tokens (the
// last two drafted by a model that disagrees, top-k 3 so that some drafts
// lie outside the target's candidates) are distributed as without
// speculation (chi-square test of homogeneity at p = 1e-3).
TEST(SpeculativeScheduler, SamplingKeepsTheDistribution) {
  const int64_t n = 3000;
  auto plain = firstTokens(n, 0);
  auto spec = firstTokens(n, 4242);
  std::map<std::vector<int32_t>, std::pair<int64_t, int64_t>> both;
  for (const auto &[k, c] : plain)
    both[k].first = c;
  for (const auto &[k, c] : spec)
    both[k].second = c;
  double chi = 0;
  int df = -1;
  for (const auto &[k, c] : both) {
    const double total = double(c.first + c.second);
    if (total < 10)
      continue;
    const double e = total / 2; // equal sample sizes
    chi +=
        (c.first - e) * (c.first - e) / e + (c.second - e) * (c.second - e) / e;
    ++df;
  }
  ASSERT_GT(df, 5);
  EXPECT_LT(chi, chiSquareCritical(df)) << "df " << df;
}

//===----------------------------------------------------------------------===//
// Constrained requests in the scheduler: batched with free ones, sampled,
// n > 1, beams, speculative (a draft and n-grams) and preempted.
//===----------------------------------------------------------------------===//

/// The fake model's 50 ids as bytes: digits, "[", "]", ",", "a".."z",
/// tokens that cross the grammar's boundaries ("1,", "],", "[7", "12",
/// ",3"), and id 49 the EOS (no bytes).
std::shared_ptr<const grammar::TokenVocabulary> fakeVocabulary() {
  std::vector<std::string> b;
  for (char c = '0'; c <= '9'; ++c)
    b.emplace_back(1, c);
  for (const char *t : {"[", "]", ",", "1,", "],", "[7", "12", ",3", " "})
    b.emplace_back(t);
  for (char c = 'a'; b.size() < 49; ++c)
    b.emplace_back(1, c);
  b.emplace_back(); // 49: EOS
  return std::make_shared<grammar::TokenVocabulary>(std::move(b));
}

std::shared_ptr<const grammar::CompiledGrammar> listGrammar() {
  static const auto g = std::make_shared<grammar::CompiledGrammar>(
      grammar::parseGbnf("root ::= \"[\" item (\",\" item)* \"]\"\n"
                         "item ::= [0-9] [0-9]?",
                         "list.gbnf"),
      fakeVocabulary());
  return g;
}

std::string textOf(const std::vector<int32_t> &ids) {
  static const auto v = fakeVocabulary();
  std::string s;
  for (int32_t id : ids)
    s += v->bytes(id);
  return s;
}

/// A complete sentence of listGrammar(), or (cut by its length) a prefix.
void expectInLanguage(const std::string &text, FinishReason why,
                      const std::string &where) {
  grammar::Matcher m(listGrammar(), {49});
  for (unsigned char c : text) {
    bool ok = false;
    for (int32_t id = 0; id < 49 && !ok; ++id)
      if (textOf({id}) == std::string(1, static_cast<char>(c)))
        ok = m.accept(id);
    ASSERT_TRUE(ok) << where << ": '" << text << "' leaves the grammar";
  }
  if (why == FinishReason::Stop || why == FinishReason::Eos)
    EXPECT_TRUE(m.canEnd()) << where << ": '" << text << "' is unfinished";
  else
    EXPECT_EQ(why, FinishReason::Length) << where;
}

/// Even ids constrained, odd ones free; greedy and sampled; one n = 2, one
/// beam search.
std::vector<ScheduledRequest> mixedWorkload() {
  std::vector<ScheduledRequest> rs;
  for (uint64_t id = 0; id < 14; ++id) {
    rs.push_back(request(id, tokens(3 + int32_t(id * 5) % 20, int32_t(id)),
                         8 + int64_t(id * 7) % 30, id % 3 ? 0.0f : 0.9f, id));
    if (id % 2 == 0) {
      rs.back().options.grammar = listGrammar();
      rs.back().options.eosIds = {49};
    }
  }
  rs[4].n = 2;
  BeamOptions beam;
  beam.numBeams = 2;
  beam.maxNewTokens = 12;
  beam.eosIds = {49};
  rs[6].beam = beam;
  return rs;
}

void expectConstrainedOutputs(const Outcome &run) {
  for (const auto &[id, r] : run.results)
    for (size_t i = 0; id % 2 == 0 && i < r.outputs.size(); ++i) {
      std::vector<int32_t> ids = r.outputs[i].outputIds;
      if (!ids.empty() && ids.back() == 49)
        ids.pop_back();
      expectInLanguage(textOf(ids), r.outputs[i].finishReason,
                       "request " + std::to_string(id) + " output " +
                           std::to_string(i));
    }
}

TEST(ConstrainedScheduler, EveryPathKeepsToTheGrammar) {
  const FakeModel::Options roomy{256, 4, false, 512, 50};
  const SchedulerOptions so{8, 64};
  Outcome plain = runWith(mixedWorkload(), roomy, so, 0);
  expectConstrainedOutputs(plain);
  // Most constrained requests complete their list (they stop there).
  int64_t complete = 0;
  for (const auto &[id, r] : plain.results)
    complete += id % 2 == 0 && r.outputs[0].finishReason == FinishReason::Stop;
  EXPECT_GE(complete, 3);
  // Free requests are not changed by batching with constrained ones.
  std::vector<ScheduledRequest> freeOnly;
  for (ScheduledRequest &r : mixedWorkload())
    if (r.id % 2 == 1)
      freeOnly.push_back(std::move(r));
  Outcome alone = runWith(std::move(freeOnly), roomy, so, 0);
  for (const auto &[id, r] : alone.results)
    EXPECT_EQ(r.outputs[0].outputIds, plain.results.at(id).outputs[0].outputIds)
        << "request " << id;
  // Speculation (a draft that agrees, one that does not, n-grams) and
  // preemption: greedy outputs are the plain ones, sampled ones valid.
  const FakeModel::Options tight{20, 4, false, 512, 50};
  struct Variant {
    FakeModel::Options model;
    uint64_t draft;
    bool ngram;
  };
  for (const Variant &v : std::vector<Variant>{{roomy, roomy.seed, false},
                                               {roomy, 99, false},
                                               {roomy, 0, true},
                                               {tight, roomy.seed, false},
                                               {tight, 0, false}}) {
    Outcome run = runWith(mixedWorkload(), v.model, so, v.draft, v.ngram);
    expectConstrainedOutputs(run);
    for (const auto &[id, r] : plain.results) {
      if (id % 3 == 0)
        continue; // sampled: valid, above
      for (size_t i = 0; i < r.outputs.size(); ++i)
        EXPECT_EQ(run.results.at(id).outputs[i].outputIds,
                  r.outputs[i].outputIds)
            << "request " << id << " draft " << v.draft << " ngram " << v.ngram
            << " blocks " << v.model.blocks;
    }
    if (v.model.blocks == tight.blocks) {
      EXPECT_GT(run.counters.preemptions, 0);
    }
  }
}

// A grammar that needs bytes no token writes ends the request (Abort), not
// the step or the server.
TEST(ConstrainedScheduler, ADeadEndAbortsTheRequestAlone) {
  auto vocab = std::make_shared<grammar::TokenVocabulary>(
      std::vector<std::string>{"a", "b", ""});
  RequestOptions o;
  o.maxNewTokens = 8;
  o.sampling.temperature = 0;
  o.eosIds = {2};
  o.grammar = std::make_shared<grammar::CompiledGrammar>(
      grammar::parseGbnf("root ::= \"a\" \"z\"", "g"), vocab);
  RequestState r(o, nullptr, {0}, 64);
  const std::vector<float> logits = {0.f, 5.f, 9.f}; // prefers b, then EOS
  EXPECT_EQ(r.accept(logits), 0);                    // "a": all it may do
  EXPECT_EQ(r.accept(logits), -1);                   // "z" has no token
  EXPECT_EQ(r.finishReason(), FinishReason::Abort);
  EXPECT_EQ(r.outputIds(), std::vector<int32_t>{0});
}

} // namespace
} // namespace llmc::test
