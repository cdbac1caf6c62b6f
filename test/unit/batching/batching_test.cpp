// The scheduler on real plans: for every reference checkpoint, on ref and
// cpu, 18 requests of mixed prompt lengths (several longer than one prefill
// chunk) submitted together give, each, exactly the tokens generate() gives
// for it alone; again with a KV pool so small that requests are preempted;
// seeded sampling likewise; a shared prefix comes from the prefix cache
// without changing outputs; an abort frees its blocks. No block leaks
// after any run.
#include "llmc/grammar/json_schema.h"
#include "llmc/runtime/beam.h"
#include "llmc/runtime/generate.h"
#include "llmc/runtime/plan_tokenizer.h"
#include "llmc/runtime/scheduler.h"
#include "llmc/support/error.h"

#include "../compiled_plan.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <random>

namespace llmc {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> models() {
  std::vector<std::string> out;
  for (const auto &e :
       fs::directory_iterator(std::string(LLMC_DATA_DIR) + "/models"))
    if (fs::exists(e.path() / "config.json"))
      out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

struct Case {
  std::string model, backend;
};

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  std::string s = info.param.model + "_" + info.param.backend;
  for (char &c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return s;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const std::string &m : models())
    for (const char *b : {"ref", "cpu"})
      out.push_back({m, b});
  return out;
}

/// Each model compiled once (per flags) for the whole binary.
const Plan *planFor(const std::string &model, const std::string &flags = "") {
  static std::map<std::string, std::unique_ptr<Plan>> plans;
  auto it = plans.find(model + " " + flags);
  if (it == plans.end()) {
    std::unique_ptr<Plan> plan;
    test::compileTestPlan(model, plan, flags);
    it = plans.emplace(model + " " + flags, std::move(plan)).first;
  }
  return it->second.get();
}

class Batching : public ::testing::TestWithParam<Case> {
protected:
  void SetUp() override {
    plan_ = planFor(GetParam().model);
    if (!plan_)
      GTEST_SKIP() << "no compiled plan of " << GetParam().model;
    registry_ = std::make_unique<BackendRegistry>(
        BackendRegistry::discover({LLMC_BIN_DIR}));
    const LoadedBackend *b = registry_->find(GetParam().backend);
    if (!b || !b->usable())
      GTEST_SKIP() << "backend " << GetParam().backend << " is not usable here";
  }

  std::unique_ptr<Engine> engine(int64_t blocks = 0, bool prefix = true) {
    EngineOptions o;
    o.backend = GetParam().backend;
    o.threads = 2;
    o.contextLength = 256;
    o.maxSequences = 24;
    o.kvCacheBlocks = blocks;
    o.prefixCaching = prefix;
    o.kvDtype = kvDtype_;
    return std::make_unique<Engine>(*plan_, *registry_, o);
  }

  /// 18 requests: prompts of 2..90 tokens from the model's vocabulary
  /// (the token budget below is 32), 4..16 new tokens.
  std::vector<ScheduledRequest> workload(float temperature) const {
    std::mt19937 rng(11);
    const auto vocab = static_cast<uint32_t>(plan_->config().vocabSize);
    std::vector<ScheduledRequest> rs;
    for (uint64_t id = 0; id < 18; ++id) {
      ScheduledRequest r;
      r.id = id;
      size_t len = id % 6 == 0 ? 60 + rng() % 31 : 2 + rng() % 40;
      for (size_t i = 0; i < len; ++i)
        r.prompt.push_back(static_cast<int32_t>(rng() % vocab));
      r.options.maxNewTokens = 4 + static_cast<int64_t>(rng() % 13);
      r.options.sampling.temperature = temperature;
      r.options.sampling.topK = temperature > 0 ? 20 : 0;
      r.options.sampling.seed = 1000 + id;
      r.options.eosIds = {}; // lengths as drawn
      rs.push_back(std::move(r));
    }
    return rs;
  }

  /// generate(), one request at a time: the reference.
  std::map<uint64_t, std::vector<int32_t>>
  solo(const std::vector<ScheduledRequest> &rs) {
    auto e = engine();
    std::map<uint64_t, std::vector<int32_t>> out;
    for (const ScheduledRequest &r : rs) {
      GenerateOptions go;
      static_cast<RequestOptions &>(go) = r.options;
      out[r.id] = generate(*e, nullptr, r.prompt, go).outputIds;
    }
    e->checkIdle();
    return out;
  }

  struct Batched {
    std::map<uint64_t, RequestResult> results;
    SchedulerCounters counters;
  };
  Batched batched(std::vector<ScheduledRequest> rs, Engine &e,
                  int32_t budget = 32, spec::Proposer *proposer = nullptr) {
    SchedulerOptions so{24, budget};
    if (proposer) {
      so.proposer = proposer;
      so.speculative.method = proposer->method();
      so.speculative.adaptive = false; // every step speculates
    }
    Scheduler s(e, nullptr, so);
    Batched b;
    for (ScheduledRequest &r : rs) {
      r.onFinish = [&](RequestResult res) {
        b.results[res.id] = std::move(res);
      };
      s.add(std::move(r));
    }
    s.runToCompletion();
    b.counters = s.counters();
    e.checkIdle();
    return b;
  }

  void expectSame(const Batched &b,
                  const std::map<uint64_t, std::vector<int32_t>> &want) {
    ASSERT_EQ(b.results.size(), want.size());
    for (const auto &[id, ids] : want)
      EXPECT_EQ(b.results.at(id).outputs.at(0).outputIds, ids)
          << "request " << id;
  }

  const Plan *plan_ = nullptr;
  std::unique_ptr<BackendRegistry> registry_;
  std::optional<llmc_dtype> kvDtype_; // every engine's; unset: the plan's
};

TEST_P(Batching, GreedyBatchedEqualsAlone) {
  auto want = solo(workload(0.0f));
  auto e = engine();
  Batched b = batched(workload(0.0f), *e);
  EXPECT_EQ(b.counters.preemptions, 0);
  EXPECT_GE(b.counters.maxRunningSeqs, 8);
  expectSame(b, want);
}

TEST_P(Batching, GreedyUnderPreemptionEqualsAlone) {
  auto want = solo(workload(0.0f));
  // 10 blocks of 16 tokens: the longest request (90 + 16) fits alone, the
  // 18 together do not.
  auto e = engine(10);
  Batched b = batched(workload(0.0f), *e);
  EXPECT_GT(b.counters.preemptions, 0);
  expectSame(b, want);
}

// A quantized KV cache is a per-row function of each token's K and V, so
// batching, preemption (recompute) and copy-on-write must not change what a
// request generates: int8 and fp8, batched and preempted against alone.
TEST_P(Batching, ScaledKvBatchedAndPreemptedEqualsAlone) {
  for (llmc_dtype kv : {LLMC_I8, LLMC_FP8_E4M3}) {
    SCOPED_TRACE(llmc_kv_dtype_name(kv));
    kvDtype_ = kv;
    auto want = solo(workload(0.0f));
    auto e = engine();
    EXPECT_EQ(e->kvDtype(), kv);
    expectSame(batched(workload(0.0f), *e), want);
    auto small = engine(10);
    Batched b = batched(workload(0.0f), *small);
    EXPECT_GT(b.counters.preemptions, 0);
    expectSame(b, want);
  }
}

// Quantized weights: the int8 activation rounding and the GEMV/GEMM paths
// are per-row too, so an int4 plan (bf16 cache) batched and preempted must
// give what each request gives alone.
TEST_P(Batching, QuantizedPlanBatchedAndPreemptedEqualsAlone) {
  for (const char *flags : {"--quant int4", "--quant int8", "--dtype bf16"}) {
    SCOPED_TRACE(flags);
    plan_ = planFor(GetParam().model, flags);
    ASSERT_NE(plan_, nullptr);
    auto want = solo(workload(0.0f));
    auto e = engine();
    expectSame(batched(workload(0.0f), *e), want);
    expectSame(batched(workload(0.0f), *e, 128), want); // steps past 48 rows
    auto small = engine(10);
    Batched b = batched(workload(0.0f), *small);
    EXPECT_GT(b.counters.preemptions, 0);
    expectSame(b, want);
  }
}

TEST_P(Batching, SeededSamplingBatchedEqualsAlone) {
  auto want = solo(workload(0.9f));
  auto e = engine();
  expectSame(batched(workload(0.9f), *e), want);
  auto small = engine(10, false);
  Batched b = batched(workload(0.9f), *small);
  EXPECT_GT(b.counters.preemptions, 0);
  expectSame(b, want);
}

TEST_P(Batching, SharedPrefixComesFromTheCache) {
  std::vector<ScheduledRequest> rs = workload(0.0f);
  std::vector<int32_t> prefix = rs[0].prompt; // 60+ tokens: 3+ full blocks
  prefix.resize(48);
  for (ScheduledRequest &r : rs) {
    std::vector<int32_t> p = prefix;
    p.insert(p.end(), r.prompt.begin(), r.prompt.begin() + 2);
    r.prompt = p;
  }
  auto cachedEngine = engine(0, true);
  auto plainEngine = engine(0, false);
  // A budget of 24: the first prompt's blocks exist before the others are
  // admitted.
  Batched cached = batched(rs, *cachedEngine, 24);
  Batched plain = batched(rs, *plainEngine, 24);
  int64_t hits = 0;
  for (const auto &[id, r] : cached.results) {
    if (id > 0) {
      EXPECT_GE(r.cachedPromptTokens, 48) << "request " << id;
    }
    hits += r.cachedPromptTokens;
    EXPECT_EQ(r.outputs.at(0).outputIds,
              plain.results.at(id).outputs.at(0).outputIds)
        << "request " << id;
  }
  EXPECT_GE(hits, 17 * 48);
  EXPECT_EQ(plain.counters.prefixHitTokens, 0);
}

TEST_P(Batching, AbortFreesBlocksAndTheRestGoOn) {
  auto want = solo(workload(0.0f));
  auto e = engine();
  Scheduler s(*e, nullptr, {24, 32});
  std::map<uint64_t, RequestResult> results;
  for (ScheduledRequest &r : workload(0.0f)) {
    r.onFinish = [&](RequestResult res) { results[res.id] = std::move(res); };
    s.add(std::move(r));
  }
  for (int i = 0; i < 4; ++i)
    s.step();
  EXPECT_TRUE(s.abort(3));
  s.runToCompletion();
  e->checkIdle();
  EXPECT_EQ(results.at(3).outputs.at(0).finishReason, FinishReason::Abort);
  for (const auto &[id, ids] : want)
    if (id != 3) {
      EXPECT_EQ(results.at(id).outputs.at(0).outputIds, ids) << id;
    }
}

// Speculative decoding leaves greedy output as it is: prompt lookup and a
// draft (the same checkpoint compiled --quant int8, on its own engine),
// batched through the scheduler and alone through generate(). Neither
// cache leaks.
TEST_P(Batching, GreedySpeculativeEqualsPlain) {
  const Plan *draftPlan = planFor(GetParam().model, "--quant int8");
  ASSERT_NE(draftPlan, nullptr);
  std::vector<ScheduledRequest> rs = workload(0.0f);
  auto want = solo(rs);
  EngineOptions d;
  d.backend = GetParam().backend;
  d.threads = 2;
  d.contextLength = 256;
  d.maxSequences = 24;
  Engine draftEngine(*draftPlan, *registry_, d);
  spec::NgramProposer ngram(4);
  spec::DraftProposer draft(draftEngine);
  for (spec::Proposer *p : {static_cast<spec::Proposer *>(&ngram),
                            static_cast<spec::Proposer *>(&draft)}) {
    SCOPED_TRACE(spec::methodName(p->method()));
    auto e = engine();
    Batched b = batched(workload(0.0f), *e, 32, p);
    expectSame(b, want);
    if (p == &draft) {
      EXPECT_GT(b.counters.specDraftTokens, 0);
    }
    auto alone = engine();
    for (const ScheduledRequest &r : rs) {
      GenerateOptions go;
      static_cast<RequestOptions &>(go) = r.options;
      go.proposer = p;
      go.speculative.method = p->method();
      go.speculative.adaptive = false;
      EXPECT_EQ(generate(*alone, nullptr, r.prompt, go).outputIds, want[r.id])
          << "request " << r.id << " alone";
    }
    alone->checkIdle();
  }
  draftEngine.checkIdle();
}

// Constrained and free requests batched together: each gives exactly what
// it gives alone (generate()), with n-gram speculation too; every
// constrained output keeps to its schema, through beam search and n > 1
// samples as well.
TEST_P(Batching, ConstrainedBatchedEqualsAloneAndKeepsToTheSchema) {
  auto tokenizer = tokenizerFromPlan(*plan_);
  if (!tokenizer)
    GTEST_SKIP() << GetParam().model << " has no tokenizer";
  auto vocab = std::make_shared<grammar::TokenVocabulary>(
      *tokenizer, static_cast<int32_t>(plan_->config().vocabSize));
  auto g = std::make_shared<grammar::CompiledGrammar>(
      grammar::grammarFromJsonSchema(
          R"({"type": "object", "properties": {
                "id": {"type": "integer"},
                "tag": {"enum": ["x", "yy", "日本"]},
                "note": {"type": "string", "maxLength": 5}},
              "required": ["id", "tag"]})",
          "schema", {.strictObjects = true}),
      vocab);
  std::vector<int64_t> eos = plan_->config().eosTokenIds;
  auto constrain = [&](std::vector<ScheduledRequest> rs) {
    for (ScheduledRequest &r : rs)
      if (r.id % 2 == 0) {
        r.options.grammar = g;
        r.options.maxNewTokens = 48;
        r.options.eosIds = eos;
      }
    return rs;
  };
  // The text so far is a sentence of the schema (complete when it stopped).
  auto expectValid = [&](const std::vector<int32_t> &ids, FinishReason why,
                         const std::string &where) {
    grammar::Matcher m(g, {eos.begin(), eos.end()});
    for (int32_t id : ids)
      ASSERT_TRUE(m.accept(id)) << where << ": token " << id;
    if (why == FinishReason::Stop) {
      EXPECT_TRUE(m.mustEnd()) << where;
      std::vector<int32_t> text = ids;
      nlohmann::json j =
          nlohmann::json::parse(tokenizer->decodeBytes(text), nullptr, false);
      EXPECT_TRUE(j.is_object() && j.contains("id") && j.contains("tag"))
          << where << ": " << tokenizer->decodeBytes(text);
    } else if (why == FinishReason::Eos) {
      EXPECT_TRUE(m.ended()) << where;
    } else {
      EXPECT_EQ(why, FinishReason::Length) << where;
    }
  };
  for (float temperature : {0.0f, 0.8f}) {
    SCOPED_TRACE(temperature);
    std::vector<ScheduledRequest> rs = constrain(workload(temperature));
    auto want = solo(rs);
    auto e = engine();
    Batched b = batched(constrain(workload(temperature)), *e);
    expectSame(b, want);
    int64_t stopped = 0;
    for (const auto &[id, r] : b.results)
      if (id % 2 == 0) {
        expectValid(r.outputs[0].outputIds, r.outputs[0].finishReason,
                    "request " + std::to_string(id));
        stopped += r.outputs[0].finishReason == FinishReason::Stop;
      }
    EXPECT_GT(stopped, 0);
    // Speculation: greedy gives the same tokens; sampling draws its
    // acceptances from the same generator, so it gives other (equally
    // distributed) tokens, which must keep to the schema.
    spec::NgramProposer ngram(4);
    auto se = engine();
    Batched sb = batched(constrain(workload(temperature)), *se, 32, &ngram);
    if (temperature == 0.0f)
      expectSame(sb, want);
    for (const auto &[id, r] : sb.results)
      if (id % 2 == 0)
        expectValid(r.outputs[0].outputIds, r.outputs[0].finishReason,
                    "speculative request " + std::to_string(id));
  }
  auto e = engine();
  const std::vector<int32_t> prompt = workload(0.0f)[1].prompt;
  BeamOptions bo;
  bo.numBeams = 3;
  bo.numReturnSequences = 3;
  bo.maxNewTokens = 40;
  bo.eosIds = eos;
  bo.grammar = g;
  for (const BeamHypothesis &h : beamSearch(*e, nullptr, prompt, bo).hypotheses)
    expectValid(h.outputIds, h.finishReason, "beam");
  GenerateOptions go;
  go.maxNewTokens = 40;
  go.sampling.temperature = 1.0f;
  go.sampling.seed = 7;
  go.eosIds = eos;
  go.grammar = g;
  for (const GenerateResult &r : generateN(*e, nullptr, prompt, go, 3))
    expectValid(r.outputIds, r.finishReason, "sample");
  e->checkIdle();
}

// A prompt that repeats itself. Without the adaptive switch every step
// tries prompt lookup, so some draft is accepted exactly when, at some
// position of the plain greedy output, the lookup's first guess was that
// position's token (a run's first acceptance starts there). The trained
// bundled model copies the pattern; random-weight checkpoints may not.
TEST_P(Batching, NgramAcceptsOnARepeatingPrompt) {
  std::mt19937 rng(5);
  const auto vocab = static_cast<uint32_t>(plan_->config().vocabSize);
  std::vector<int32_t> pattern, prompt;
  for (int i = 0; i < 10; ++i)
    pattern.push_back(static_cast<int32_t>(rng() % vocab));
  for (int i = 0; i < 4; ++i)
    prompt.insert(prompt.end(), pattern.begin(), pattern.end());
  GenerateOptions go;
  go.maxNewTokens = 40;
  go.sampling.temperature = 0;
  auto e = engine();
  const std::vector<int32_t> plain =
      generate(*e, nullptr, prompt, go).outputIds;
  spec::NgramProposer ngram(4);
  bool guessable = false;
  for (size_t t = 1; t < plain.size() && !guessable; ++t) {
    std::vector<int32_t> context = prompt;
    context.insert(context.end(), plain.begin(),
                   plain.begin() + static_cast<std::ptrdiff_t>(t));
    spec::Proposal p;
    p.context = context;
    p.maxTokens = 1;
    p.sampling = &go.sampling;
    spec::Proposal *ps[] = {&p};
    ngram.propose(ps);
    guessable = !p.tokens.empty() && p.tokens[0] == plain[t];
  }
  go.proposer = &ngram;
  go.speculative.method = spec::Method::Ngram;
  go.speculative.adaptive = false;
  GenerateResult r = generate(*e, nullptr, prompt, go);
  EXPECT_EQ(r.outputIds, plain);
  EXPECT_GT(r.metrics.speculative.proposed, 0);
  EXPECT_EQ(r.metrics.speculative.accepted > 0, guessable)
      << "proposed " << r.metrics.speculative.proposed;
  if (GetParam().model == "fortune-llama") {
    EXPECT_GT(r.metrics.speculative.accepted, 0);
  }
  e->checkIdle();
}

// The bundled model with its own draft (test/data/models/fortune-llama-draft,
// trained on the same data with the same tokenizer).
class BundledDraft : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    target_ = planFor("fortune-llama");
    draft_ = planFor("fortune-llama-draft");
    if (!target_ || !draft_)
      GTEST_SKIP() << "no compiled plans of the bundled model and its draft";
    registry_ = std::make_unique<BackendRegistry>(
        BackendRegistry::discover({LLMC_BIN_DIR}));
    const LoadedBackend *b = registry_->find(GetParam());
    if (!b || !b->usable())
      GTEST_SKIP() << "backend " << GetParam() << " is not usable here";
  }

  std::unique_ptr<Engine> engine(const Plan &plan) const {
    EngineOptions o;
    o.backend = GetParam();
    o.threads = 2;
    o.maxSequences = 64;
    return std::make_unique<Engine>(plan, *registry_, o);
  }

  /// The first `tokens` tokens of `n` seeded samples of one prompt, batched
  /// through the scheduler, with or without the draft.
  std::map<std::vector<int32_t>, int64_t> samples(int64_t n, int64_t tokens,
                                                  bool speculate) {
    auto e = engine(*target_);
    auto d = engine(*draft_);
    std::map<std::vector<int32_t>, int64_t> counts;
    {
      spec::DraftProposer proposer(*d);
      SchedulerOptions so{64, 512};
      if (speculate) {
        so.proposer = &proposer;
        so.speculative.method = spec::Method::Draft;
        so.speculative.numTokens = 3;
        so.speculative.adaptive = false;
      }
      Scheduler s(*e, nullptr, so);
      for (int64_t i = 0; i < n; ++i) {
        ScheduledRequest r;
        r.id = uint64_t(i);
        r.prompt = {1, 377, 463, 476, 544}; // "<s> The man who has"
        r.options.maxNewTokens = tokens;
        r.options.sampling.temperature = 1.0f;
        r.options.sampling.topK = 3;
        r.options.sampling.seed = uint64_t(7000 + i);
        r.onFinish = [&](RequestResult res) {
          ++counts[res.outputs.at(0).outputIds];
        };
        s.add(std::move(r));
      }
      s.runToCompletion();
    }
    e->checkIdle();
    d->checkIdle();
    return counts;
  }

  const Plan *target_ = nullptr, *draft_ = nullptr;
  std::unique_ptr<BackendRegistry> registry_;
};

TEST_P(BundledDraft, GreedyWithItsDraftIsThePlainOutput) {
  auto e = engine(*target_);
  auto d = engine(*draft_);
  spec::DraftProposer proposer(*d);
  for (const std::vector<int32_t> &prompt :
       {std::vector<int32_t>{1, 377, 463, 476, 544, 497, 644},
        std::vector<int32_t>{1, 600, 1200, 33, 5}}) {
    GenerateOptions go;
    go.maxNewTokens = 48;
    go.sampling.temperature = 0;
    go.eosIds = {};
    const std::vector<int32_t> plain =
        generate(*e, nullptr, prompt, go).outputIds;
    go.proposer = &proposer;
    go.speculative.method = spec::Method::Draft;
    go.speculative.adaptive = false;
    GenerateResult r = generate(*e, nullptr, prompt, go);
    EXPECT_EQ(r.outputIds, plain);
    EXPECT_GT(r.metrics.speculative.accepted, 0);
  }
  e->checkIdle();
}

// Sampling keeps the target's distribution: the joint distribution of the
// first three tokens of 1500 seeded samples (top-k 3, temperature 1; the
// last two drafted by the draft) against 1500 plain samples, chi-square
// test of homogeneity at p = 1e-3.
TEST_P(BundledDraft, SamplingWithItsDraftKeepsTheDistribution) {
  if (GetParam() == "ref")
    GTEST_SKIP() << "the rule is the backend's logits' business only: run "
                    "on cpu (6000 samples take a minute on ref)";
  const int64_t n = 1500;
  auto plain = samples(n, 3, false);
  auto spec = samples(n, 3, true);
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
    const double e = total / 2;
    chi += (double(c.first) - e) * (double(c.first) - e) / e +
           (double(c.second) - e) * (double(c.second) - e) / e;
    ++df;
  }
  ASSERT_GT(df, 3);
  // Wilson-Hilferty: the chi-square quantile at 1 - 1e-3 (z = 3.09).
  const double a = 2.0 / (9.0 * df);
  const double critical = df * std::pow(1.0 - a + 3.09 * std::sqrt(a), 3);
  EXPECT_LT(chi, critical) << "df " << df;
}

INSTANTIATE_TEST_SUITE_P(Backends, BundledDraft,
                         ::testing::Values("ref", "cpu"));

INSTANTIATE_TEST_SUITE_P(Models, Batching, ::testing::ValuesIn(cases()),
                         caseName);

// GGUF plans keep their block formats: K-quants (their dot up to 32 rows,
// their GEMM tiles above) and MXFP4 experts (gpt-oss). The same equality.
class GgufBatching : public Batching {};

TEST_P(GgufBatching, BatchedAndPreemptedEqualsAlone) {
  auto want = solo(workload(0.0f));
  auto e = engine();
  expectSame(batched(workload(0.0f), *e), want);
  // A budget of 128: steps past 32 rows, on the K-quants' GEMM tiles.
  expectSame(batched(workload(0.0f), *e, 128), want);
  auto small = engine(10);
  Batched b = batched(workload(0.0f), *small);
  EXPECT_GT(b.counters.preemptions, 0);
  expectSame(b, want);
}

std::vector<Case> ggufCases() {
  std::vector<Case> out;
  for (const char *m :
       {"fortune-Q4_K_M", "fortune-Q5_K_M", "fortune-Q6_K", "gpt-oss-mxfp4"})
    for (const char *b : {"ref", "cpu"})
      out.push_back({std::string("../gguf-llamacpp/") + m + ".gguf", b});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Gguf, GgufBatching, ::testing::ValuesIn(ggufCases()),
                         caseName);

// The point of an int8 cache: in the same --kv-cache-memory the scheduler
// runs about twice as many sequences at once as with bf16 (2 x head_dim /
// (head_dim + 4) with the scale; 1.78 at the bundled model's head_dim of
// 32, 1.94 at 128).
TEST(KvCapacity, Int8AdmitsAboutTwiceAsManySequencesAsBf16) {
  const Plan *plan = planFor("fortune-llama");
  if (!plan)
    GTEST_SKIP() << "no compiled plan of fortune-llama";
  auto registry = std::make_unique<BackendRegistry>(
      BackendRegistry::discover({LLMC_BIN_DIR}));
  const LoadedBackend *cpu = registry->find("cpu");
  const std::string backend = cpu && cpu->usable() ? "cpu" : "ref";
  std::map<llmc_dtype, int32_t> running, blocks;
  for (llmc_dtype kv : {LLMC_BF16, LLMC_I8}) {
    EngineOptions o;
    o.backend = backend;
    o.threads = 2;
    o.kvCacheBytes = 1 << 20; // 1 MiB: 16 sequences of 64 tokens in bf16
    o.maxSequences = 256;
    o.kvDtype = kv;
    Engine e(*plan, *registry, o);
    blocks[kv] = e.numBlocks();
    // Every request needs 4 blocks: 60 prompt tokens and 4 new ones.
    Scheduler s(e, nullptr, {256, 8192});
    std::mt19937 rng(3);
    for (uint64_t id = 0; id < 96; ++id) {
      ScheduledRequest r;
      r.id = id;
      for (int i = 0; i < 60; ++i)
        r.prompt.push_back(3 + int32_t(rng() % 5000));
      r.options.maxNewTokens = 4;
      r.options.eosIds = {};
      s.add(std::move(r));
    }
    s.runToCompletion();
    e.checkIdle();
    running[kv] = s.counters().maxRunningSeqs;
    std::printf("[ capacity ] %s KV: %d blocks in 1 MiB, %d sequences at "
                "once\n",
                llmc_kv_dtype_name(kv), blocks[kv], running[kv]);
  }
  const double ratio = double(running[LLMC_I8]) / running[LLMC_BF16];
  EXPECT_NEAR(double(blocks[LLMC_I8]) / blocks[LLMC_BF16], 64.0 / 36.0, 0.05);
  EXPECT_GE(ratio, 1.6) << running[LLMC_I8] << " vs " << running[LLMC_BF16];
  EXPECT_LE(ratio, 2.0) << running[LLMC_I8] << " vs " << running[LLMC_BF16];
}

} // namespace
} // namespace llmc
