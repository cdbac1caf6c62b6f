//===- beam_search_test.cpp - Beam search and --n on a tiny model
//----------===//
//
// The model is test/data/models/llama-mqa (vocab 2048), compiled once with
// the llmc binary and run on the ref backend with 4-token blocks, so that
// prompts end in partly filled blocks and every fork exercises copy-on-write.
//
// Oracles:
//  - hfBeamSearch below: transformers' BeamSearchScorer written out the
//    plainest way, with every beam's log-probability recomputed from scratch
//    by running prompt + beam through a fresh sequence (verify graph, no
//    cache sharing, no forks) on each step;
//  - exhaustive search over two tokens, restricted to the T best tokens at
//    each step (2048^2 full sequences would be 4M runs; the restriction
//    cannot hide the optimum of a 2-token search, see ExhaustiveTwoTokens).
//
//===----------------------------------------------------------------------===//

#include "llmc/runtime/beam.h"
#include "llmc/support/error.h"

#include "../compiled_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace llmc {
namespace {

const std::string kBin = LLMC_BIN_DIR;

class BeamTest : public test::CompiledPlanTest<BeamTest> {
public:
  static constexpr const char *kModel = "llama-mqa";

protected:
  static std::unique_ptr<Engine> engine(int32_t blockSize = 4,
                                        int64_t context = 64,
                                        int32_t maxSequences = 8) {
    EngineOptions o;
    o.backend = "ref";
    o.threads = 1;
    o.blockSize = blockSize;
    o.contextLength = context;
    o.maxSequences = maxSequences;
    return std::make_unique<Engine>(*plan_, *registry_, o);
  }
};

// 7 tokens: one full block and a 3-token block that the beams share.
const std::vector<int32_t> kPrompt = {2047, 17, 905, 1300, 44, 2000, 613};

struct FullRun {
  double sum = 0;          // log P(tokens | prompt)
  std::vector<float> next; // log-softmax after prompt + tokens
};

/// No cache reuse: a fresh sequence runs prompt + tokens through the verify
/// graph and every log-probability is read off its rows.
FullRun fullRun(Engine &e, const std::vector<int32_t> &prompt,
                const std::vector<int32_t> &tokens) {
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), tokens.begin(), tokens.end());
  const auto V = static_cast<size_t>(e.vocabSize());
  std::vector<float> logits(all.size() * V);
  int32_t seq = e.newSequence();
  e.prefill(seq, all, logits.data(), /*allLogits=*/true);
  e.releaseSequence(seq);
  FullRun r;
  for (size_t j = 0; j < tokens.size(); ++j) {
    auto row = sample::logSoftmax(
        std::span<const float>(logits.data() + (prompt.size() - 1 + j) * V, V));
    r.sum += row[static_cast<size_t>(tokens[j])];
  }
  r.next = sample::logSoftmax(
      std::span<const float>(logits.data() + (all.size() - 1) * V, V));
  return r;
}

struct RefHyp {
  double score;
  std::vector<int32_t> ids;
};

/// transformers' beam search (BeamSearchScorer.process/finalize and
/// BeamHypotheses, >= 4.36 length convention) for one prompt, with B beams
/// from the start and beams 1.. scored -1e9, as HF initialises them.
std::vector<RefHyp> hfBeamSearch(Engine &e, const std::vector<int32_t> &prompt,
                                 const BeamOptions &o) {
  const int32_t B = o.numBeams;
  const size_t V = static_cast<size_t>(e.vocabSize());
  const double lp = o.lengthPenalty;
  std::vector<std::vector<int32_t>> beams(static_cast<size_t>(B));
  std::vector<double> beamScores(static_cast<size_t>(B), -1e9);
  beamScores[0] = 0;
  std::vector<RefHyp> hyps;
  double worst = 1e9;
  auto add = [&](std::vector<int32_t> ids, double sum, int64_t genLen) {
    double score = sum / std::pow(static_cast<double>(genLen), lp);
    if (static_cast<int32_t>(hyps.size()) < B || score > worst) {
      hyps.push_back({score, std::move(ids)});
      if (static_cast<int32_t>(hyps.size()) > B) {
        std::vector<size_t> idx(hyps.size());
        std::iota(idx.begin(), idx.end(), 0);
        std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
          return hyps[a].score < hyps[b].score;
        });
        worst = hyps[idx[1]].score;
        hyps.erase(hyps.begin() + static_cast<long>(idx[0]));
      } else {
        worst = std::min(score, worst);
      }
    }
  };
  auto isDone = [&](double best, int64_t curLen) {
    if (static_cast<int32_t>(hyps.size()) < B)
      return false;
    if (o.earlyStopping == EarlyStopping::True)
      return true;
    double len = static_cast<double>(curLen);
    if (o.earlyStopping == EarlyStopping::Never && lp > 0)
      len = static_cast<double>(o.maxNewTokens);
    return worst >= best / std::pow(len, lp);
  };
  auto isEos = [&](size_t v) {
    return std::find(o.eosIds.begin(), o.eosIds.end(),
                     static_cast<int64_t>(v)) != o.eosIds.end();
  };
  const size_t keep =
      static_cast<size_t>(std::max<size_t>(2, 1 + o.eosIds.size()) * B);
  bool done = false;
  for (int64_t curLen = 1; curLen <= o.maxNewTokens && !done; ++curLen) {
    std::vector<double> scores(static_cast<size_t>(B) * V);
    for (size_t b = 0; b < static_cast<size_t>(B); ++b) {
      FullRun r = fullRun(e, prompt, beams[b]);
      // The recomputed sum stands in for the carried score, except for the
      // -1e9 placeholders of the first step.
      double base = beamScores[b] <= -1e8 ? beamScores[b] : r.sum;
      for (size_t v = 0; v < V; ++v)
        scores[b * V + v] = base + r.next[v];
    }
    std::vector<size_t> order(scores.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    std::vector<std::vector<int32_t>> nextBeams;
    std::vector<double> nextScores;
    for (size_t rank = 0; rank < keep; ++rank) {
      size_t b = order[rank] / V, v = order[rank] % V;
      std::vector<int32_t> ids = beams[b];
      ids.push_back(static_cast<int32_t>(v));
      if (isEos(v)) {
        if (rank >= static_cast<size_t>(B))
          continue;
        add(ids, scores[order[rank]], curLen);
      } else {
        nextBeams.push_back(ids);
        nextScores.push_back(scores[order[rank]]);
      }
      if (static_cast<int32_t>(nextBeams.size()) == B)
        break;
    }
    done = isDone(scores[order[0]], curLen);
    beams = nextBeams;
    beamScores = nextScores;
  }
  if (!done)
    for (size_t b = 0; b < beams.size(); ++b)
      add(beams[b], fullRun(e, prompt, beams[b]).sum,
          static_cast<int64_t>(beams[b].size()));
  std::stable_sort(
      hyps.begin(), hyps.end(),
      [](const RefHyp &a, const RefHyp &b) { return a.score > b.score; });
  hyps.resize(std::min(hyps.size(), static_cast<size_t>(o.numReturnSequences)));
  return hyps;
}

/// Token ids of `row` by descending value, ties to the lower id.
std::vector<int32_t> ranked(const std::vector<float> &row, size_t n) {
  std::vector<int32_t> ids(row.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(),
                   [&](int32_t a, int32_t b) { return row[a] > row[b]; });
  ids.resize(n);
  return ids;
}

std::string str(const std::vector<int32_t> &v) {
  std::string s;
  for (int32_t x : v)
    s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

/// beamSearch against hfBeamSearch over beam counts, lengths, early
/// stopping, length penalties `penalties` and EOS sets that end hypotheses
/// at every point; counts the hypotheses an EOS finished.
void expectBeamSearchMatchesHf(Engine &e, const std::vector<float> &penalties,
                               int &finishedByEos) {
  FullRun s1 = fullRun(e, kPrompt, {});
  std::vector<int32_t> top = ranked(s1.next, 5);
  FullRun s2 = fullRun(e, kPrompt, {top[0]});
  int32_t step2 = ranked(s2.next, 1)[0];
  // EOS sets that finish hypotheses at step 1 inside the top num_beams,
  // that reach an EOS candidate ranked >= num_beams (which HF drops), that
  // finish at step 2, and with two or three EOS ids (more candidates kept).
  const std::vector<std::vector<int64_t>> eosSets = {{},
                                                     {top[0]},
                                                     {top[1]},
                                                     {top[0], top[2]},
                                                     {top[0], top[1], top[3]},
                                                     {top[2], top[4]},
                                                     {step2}};
  int checked = 0;
  finishedByEos = 0;
  for (int32_t beams : {2, 3})
    for (int64_t maxNew : {1, 2, 3})
      for (EarlyStopping es :
           {EarlyStopping::False, EarlyStopping::True, EarlyStopping::Never})
        for (float lp : penalties)
          for (const auto &eos : eosSets) {
            BeamOptions o;
            o.numBeams = beams;
            o.numReturnSequences = beams;
            o.maxNewTokens = maxNew;
            o.earlyStopping = es;
            o.lengthPenalty = lp;
            o.eosIds = eos;
            std::string what =
                "beams " + std::to_string(beams) + " max " +
                std::to_string(maxNew) + " es " +
                std::to_string(static_cast<int>(es)) + " lp " +
                std::to_string(lp) + " eos {" +
                str(std::vector<int32_t>(eos.begin(), eos.end())) + "}";
            BeamResult got = beamSearch(e, nullptr, kPrompt, o);
            std::vector<RefHyp> want = hfBeamSearch(e, kPrompt, o);
            ASSERT_EQ(got.hypotheses.size(), want.size()) << what;
            for (size_t i = 0; i < want.size(); ++i) {
              EXPECT_EQ(str(got.hypotheses[i].outputIds), str(want[i].ids))
                  << what << " hypothesis " << i;
              EXPECT_NEAR(got.hypotheses[i].score, want[i].score, 1e-4)
                  << what << " hypothesis " << i;
              finishedByEos +=
                  got.hypotheses[i].finishReason == FinishReason::Eos;
            }
            EXPECT_EQ(e.freeBlocks(), e.numBlocks()) << what << ": leak";
            ++checked;
          }
  EXPECT_EQ(checked, 2 * 3 * 3 * int(penalties.size()) * 7);
}

TEST_F(BeamTest, MatchesHfReferenceWithoutSharing) {
  auto e = engine();
  int finishedByEos = 0;
  expectBeamSearchMatchesHf(*e, {1.0f, 0.5f, 2.0f, -1.0f}, finishedByEos);
  EXPECT_GT(finishedByEos, 50); // the EOS paths were really taken
}

TEST_F(BeamTest, ExhaustiveTwoTokens) {
  // Two tokens, no EOS: beam search keeps the B best first tokens, then the
  // B best of their B x V continuations. An exhaustive search over the T
  // best tokens at each step (T >= B) contains that set's winners, because
  // the best continuation of a prefix is its top-1 token. So: the beam's best
  // never beats the exhaustive optimum, equals it whenever the optimum's
  // first token is among the B best, and the B returned hypotheses are
  // exactly the B best pairs with a first token from the B best.
  auto e = engine();
  const size_t T = 8;
  FullRun s1 = fullRun(*e, kPrompt, {});
  std::vector<int32_t> first = ranked(s1.next, T);
  struct Pair {
    double sum;
    std::vector<int32_t> ids;
    size_t firstRank;
  };
  std::vector<Pair> all;
  for (size_t r = 0; r < T; ++r) {
    FullRun s2 = fullRun(*e, kPrompt, {first[r]});
    for (int32_t x2 : ranked(s2.next, T))
      all.push_back({s1.next[static_cast<size_t>(first[r])] +
                         s2.next[static_cast<size_t>(x2)],
                     {first[r], x2},
                     r});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Pair &a, const Pair &b) { return a.sum > b.sum; });
  for (int32_t B : {2, 3}) {
    BeamOptions o;
    o.numBeams = B;
    o.numReturnSequences = B;
    o.maxNewTokens = 2;
    BeamResult got = beamSearch(*e, nullptr, kPrompt, o);
    ASSERT_EQ(got.hypotheses.size(), static_cast<size_t>(B));
    EXPECT_LE(got.hypotheses[0].sumLogprobs, all[0].sum + 1e-5);
    if (all[0].firstRank < static_cast<size_t>(B)) {
      EXPECT_EQ(str(got.hypotheses[0].outputIds), str(all[0].ids));
    }
    std::vector<Pair> restricted;
    for (const Pair &p : all)
      if (p.firstRank < static_cast<size_t>(B))
        restricted.push_back(p);
    for (size_t i = 0; i < static_cast<size_t>(B); ++i) {
      EXPECT_EQ(str(got.hypotheses[i].outputIds), str(restricted[i].ids))
          << "B " << B << " hypothesis " << i;
      // length_penalty 1, two generated tokens.
      EXPECT_NEAR(got.hypotheses[i].score, restricted[i].sum / 2, 1e-4);
      EXPECT_EQ(got.hypotheses[i].finishReason, FinishReason::Length);
    }
  }
}

TEST_F(BeamTest, ForkSharesBlocksAndCopiesOnWrite) {
  auto e = engine();
  const size_t V = static_cast<size_t>(e->vocabSize());
  std::vector<float> logits(2 * V), alone(V);
  int32_t a = e->newSequence();
  e->prefill(a, kPrompt, logits.data()); // 7 tokens: blocks of 4 + 3
  const int32_t afterPrefill = e->freeBlocks();
  EXPECT_EQ(e->numBlocks() - afterPrefill, 2);
  int32_t b = e->forkSequence(a);
  EXPECT_EQ(e->freeBlocks(), afterPrefill) << "a fork copies nothing";
  std::vector<int32_t> seqs = {a, b}, toks = {5, 6};
  e->decode(seqs, toks, logits.data());
  // Both write position 7 into the shared 3-token block: one copies it, the
  // other (then its sole owner) writes in place.
  EXPECT_EQ(e->freeBlocks(), afterPrefill - 1);
  // Position 8 opens a new block for each.
  toks = {7, 8};
  e->decode(seqs, toks, logits.data());
  EXPECT_EQ(e->freeBlocks(), afterPrefill - 3);

  // Each equals an unshared run of the same tokens.
  for (int which = 0; which < 2; ++which) {
    // Same steps (prefill, decode, decode), private blocks.
    int32_t c = e->newSequence();
    e->prefill(c, kPrompt, alone.data());
    for (int32_t t : {which == 0 ? 5 : 6, which == 0 ? 7 : 8})
      e->decode(std::span<const int32_t>(&c, 1),
                std::span<const int32_t>(&t, 1), alone.data());
    e->releaseSequence(c);
    for (size_t i = 0; i < V; ++i)
      ASSERT_NEAR(logits[static_cast<size_t>(which) * V + i], alone[i], 1e-5)
          << "sequence " << which << " id " << i;
  }
  e->releaseSequence(a);
  e->releaseSequence(b);
  EXPECT_EQ(e->freeBlocks(), e->numBlocks());
}

TEST_F(BeamTest, BeamsShareBlocksAndSharingDoesNotChangeResults) {
  // A 13-token prompt is 3 full blocks + 1 token; with private copies each
  // of 3 beams would hold all of them.
  std::vector<int32_t> prompt = kPrompt;
  for (int32_t t : {3, 1000, 77, 1500, 9, 12})
    prompt.push_back(t);
  BeamOptions o;
  o.numBeams = 3;
  o.numReturnSequences = 3;
  o.maxNewTokens = 6;
  auto e4 = engine(4);
  BeamResult shared = beamSearch(*e4, nullptr, prompt, o);
  EXPECT_GT(shared.stats.decodeSteps, 0);
  EXPECT_LT(shared.stats.peakBlocksUsed, shared.stats.peakBlocksUnshared);
  // 3 shared prompt blocks + per beam at most 2 blocks for 1 + 5 tokens.
  EXPECT_LE(shared.stats.peakBlocksUsed, 3 + 3 * 2);
  EXPECT_EQ(e4->freeBlocks(), e4->numBlocks());

  // The no-sharing oracle gives the same beams, and so does a block size
  // where nothing but the prompt's full blocks is ever shared.
  std::vector<RefHyp> want = hfBeamSearch(*e4, prompt, o);
  auto e16 = engine(16);
  BeamResult big = beamSearch(*e16, nullptr, prompt, o);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(str(shared.hypotheses[i].outputIds), str(want[i].ids));
    EXPECT_NEAR(shared.hypotheses[i].score, want[i].score, 1e-4);
    EXPECT_EQ(str(big.hypotheses[i].outputIds), str(want[i].ids));
  }
}

TEST_F(BeamTest, OneBeamIsGreedy) {
  auto e = engine();
  BeamOptions o;
  o.numBeams = 1;
  o.maxNewTokens = 8;
  BeamResult beam = beamSearch(*e, nullptr, kPrompt, o);
  GenerateOptions g;
  g.maxNewTokens = 8;
  g.sampling.temperature = 0;
  GenerateResult greedy = generate(*e, nullptr, kPrompt, g);
  EXPECT_EQ(str(beam.hypotheses[0].outputIds), str(greedy.outputIds));
}

TEST_F(BeamTest, ContextWindowEndsTheSearch) {
  auto e = engine(4, /*context=*/9);
  BeamOptions o;
  o.numBeams = 2;
  o.maxNewTokens = 10;
  BeamResult r = beamSearch(*e, nullptr, kPrompt, o);
  // 7 prompt tokens, 9 positions: tokens 1 and 2 are decoded, 3 is chosen.
  EXPECT_EQ(r.hypotheses[0].outputIds.size(), 3u);
  EXPECT_EQ(r.hypotheses[0].finishReason, FinishReason::Context);
  EXPECT_EQ(e->freeBlocks(), e->numBlocks());
}

TEST_F(BeamTest, RejectsBadOptions) {
  auto e = engine();
  auto message = [&](BeamOptions o) {
    try {
      beamSearch(*e, nullptr, kPrompt, o);
    } catch (const Error &err) {
      return std::string(err.what());
    }
    return std::string("no error");
  };
  BeamOptions o;
  o.numBeams = 0;
  EXPECT_EQ(message(o), "--num-beams must be in [1, 1024], got 0");
  o.numBeams = 1025;
  EXPECT_EQ(message(o), "--num-beams must be in [1, 1024], got 1025");
  o = {};
  o.numReturnSequences = 5;
  EXPECT_EQ(message(o),
            "--num-return-sequences must be in [1, --num-beams = 4], got 5");
  o = {};
  o.penalties.temperature = 0.7f;
  EXPECT_NE(message(o).find("beam search is deterministic: drop "
                            "--temperature"),
            std::string::npos);
  o = {};
  o.penalties.topP = 0.9f;
  EXPECT_NE(message(o).find("--top-p"), std::string::npos);
}

TEST_F(BeamTest, RepetitionPenaltyIsAppliedPerBeam) {
  // HF applies the penalty to log-probabilities (negative, so they are
  // multiplied): with 1e4 the best beam can repeat neither a prompt token
  // nor one of its own.
  auto e = engine();
  BeamOptions o;
  o.numBeams = 2;
  o.maxNewTokens = 6;
  o.penalties.repetitionPenalty = 1e4f;
  BeamResult penalised = beamSearch(*e, nullptr, kPrompt, o);
  for (int32_t id : penalised.hypotheses[0].outputIds)
    EXPECT_EQ(std::count(kPrompt.begin(), kPrompt.end(), id), 0) << id;
  std::vector<int32_t> out = penalised.hypotheses[0].outputIds;
  std::sort(out.begin(), out.end());
  EXPECT_EQ(std::adjacent_find(out.begin(), out.end()), out.end())
      << "a penalised beam repeated a token: " << str(out);
}

//===----------------------------------------------------------------------===//
// --n
//===----------------------------------------------------------------------===//

/// generateN's samples, forks of one prompt decoded as a batch, against
/// the same seeds run one at a time.
void expectParallelSamplesEqualSingleRuns(Engine &engine) {
  Engine *e = &engine;
  GenerateOptions g;
  g.maxNewTokens = 10;
  g.sampling.temperature = 1.0f;
  g.sampling.seed = 42;
  for (bool withEos : {false, true}) {
    g.eosIds.clear();
    if (withEos) // a fifth of the vocabulary: samples stop at different steps
      for (int64_t id = 0; id < 400; ++id)
        g.eosIds.push_back(id);
    std::vector<GenerateResult> many = generateN(*e, nullptr, kPrompt, g, 5);
    ASSERT_EQ(many.size(), 5u);
    EXPECT_EQ(e->freeBlocks(), e->numBlocks());
    std::vector<std::string> distinct;
    for (int32_t i = 0; i < 5; ++i) {
      GenerateOptions one = g;
      one.sampling.seed = g.sampling.seed + static_cast<uint64_t>(i);
      GenerateResult single = generate(*e, nullptr, kPrompt, one);
      EXPECT_EQ(str(many[static_cast<size_t>(i)].outputIds),
                str(single.outputIds))
          << "sample " << i << (withEos ? " with eos" : "");
      EXPECT_EQ(many[static_cast<size_t>(i)].finishReason, single.finishReason);
      distinct.push_back(str(single.outputIds));
    }
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()),
                   distinct.end());
    EXPECT_GE(distinct.size(), 4u) << "seeds must give different samples";
  }
  EXPECT_THROW(generateN(*e, nullptr, kPrompt, g, 0), Error);
}

TEST_F(BeamTest, ParallelSamplesEqualSingleRuns) {
  auto e = engine();
  expectParallelSamplesEqualSingleRuns(*e);
}

//===----------------------------------------------------------------------===//
// A mixture of experts: beams and samples decode as a batch, whose tokens
// choose experts together, and fork the prompt's blocks.
//===----------------------------------------------------------------------===//

/// ref, and cpu where this machine runs it.
std::vector<std::string> refAndCpu(const BackendRegistry &registry) {
  std::vector<std::string> out = {"ref"};
  if (const LoadedBackend *cpu = registry.find("cpu"); cpu && cpu->usable())
    out.push_back("cpu");
  return out;
}

/// A batch of 8 sequences of 64 tokens in blocks of 4, one thread.
std::unique_ptr<Engine> smallEngine(const Plan &plan,
                                    const BackendRegistry &registry,
                                    const std::string &backend) {
  EngineOptions o;
  o.backend = backend;
  o.threads = 1;
  o.blockSize = 4;
  o.contextLength = 64;
  o.maxSequences = 8;
  return std::make_unique<Engine>(plan, registry, o);
}

class MoeBeamTest : public test::CompiledPlanTest<MoeBeamTest> {
public:
  static constexpr const char *kModel = "qwen3-moe";

protected:
  static std::vector<std::string> backends() { return refAndCpu(*registry_); }
  static std::unique_ptr<Engine> engine(const std::string &backend) {
    return smallEngine(*plan_, *registry_, backend);
  }
};

TEST_F(MoeBeamTest, MatchesHfReferenceWithoutSharing) {
  for (const std::string &backend : backends()) {
    SCOPED_TRACE(backend);
    auto e = engine(backend);
    int finishedByEos = 0;
    expectBeamSearchMatchesHf(*e, {1.0f}, finishedByEos);
    EXPECT_GT(finishedByEos, 10);
  }
}

TEST_F(MoeBeamTest, ParallelSamplesEqualSingleRuns) {
  for (const std::string &backend : backends()) {
    SCOPED_TRACE(backend);
    auto e = engine(backend);
    expectParallelSamplesEqualSingleRuns(*e);
  }
}

// gpt-oss (MXFP4 experts, sinks, a sliding layer): --n samples batched are
// each sample run alone. (No beam reference ships with that checkpoint.)
class GptOssSamplesTest : public test::CompiledPlanTest<GptOssSamplesTest> {
public:
  static constexpr const char *kModel = "gpt-oss-mxfp4";
};

TEST_F(GptOssSamplesTest, ParallelSamplesEqualSingleRuns) {
  for (const std::string &backend : refAndCpu(*registry_)) {
    SCOPED_TRACE(backend);
    expectParallelSamplesEqualSingleRuns(
        *smallEngine(*plan_, *registry_, backend));
  }
}

TEST_F(BeamTest, GreedyParallelSamplesAgree) {
  auto e = engine();
  GenerateOptions g;
  g.maxNewTokens = 6;
  g.sampling.temperature = 0;
  std::vector<GenerateResult> many = generateN(*e, nullptr, kPrompt, g, 3);
  for (const GenerateResult &r : many)
    EXPECT_EQ(str(r.outputIds), str(many[0].outputIds));
}

} // namespace
} // namespace llmc
