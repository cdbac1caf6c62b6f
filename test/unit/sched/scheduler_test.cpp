// The scheduler's policy against a fake model (fake_model.h): the token
// budget, decode-first order, admission, the preemption victim, eviction of
// cached blocks, refusals, abort; and that every request's output is the
// same batched (with or without preemption and prefix caching) as alone.
#include "fake_model.h"

#include "llmc/runtime/scheduler.h"
#include "llmc/support/error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <random>

namespace llmc::test {
namespace {

using ::testing::HasSubstr;

ScheduledRequest request(uint64_t id, std::vector<int32_t> prompt,
                         int64_t maxNew, float temperature = 0.0f,
                         uint64_t seed = 0) {
  ScheduledRequest r;
  r.id = id;
  r.prompt = std::move(prompt);
  r.options.maxNewTokens = maxNew;
  r.options.sampling.temperature = temperature;
  r.options.sampling.seed = seed;
  return r;
}

std::vector<int32_t> tokens(int32_t n, int32_t salt) {
  std::vector<int32_t> v;
  for (int32_t i = 0; i < n; ++i)
    v.push_back((i * 7 + salt * 13 + 1) % 50);
  return v;
}

struct Outcome {
  std::map<uint64_t, RequestResult> results;
  SchedulerCounters counters;
};

/// Runs `requests` together on a fresh model; checks nothing leaked.
Outcome runAll(std::vector<ScheduledRequest> requests, FakeModel::Options mo,
               SchedulerOptions so) {
  FakeModel model(mo);
  Scheduler s(model, nullptr, so);
  Outcome run;
  for (ScheduledRequest &r : requests) {
    r.onFinish = [&](RequestResult res) {
      run.results[res.id] = std::move(res);
    };
    s.add(std::move(r));
  }
  s.runToCompletion();
  run.counters = s.counters();
  model.checkIdle();
  return run;
}

/// Each request alone, on a fresh model with a roomy pool.
std::map<uint64_t, RequestResult> runSolo(std::vector<ScheduledRequest> rs) {
  std::map<uint64_t, RequestResult> out;
  for (ScheduledRequest &r : rs) {
    uint64_t id = r.id;
    std::vector<ScheduledRequest> one;
    one.push_back(std::move(r));
    out[id] = runAll(std::move(one), {256, 4, false, 512, 50}, {8, 2048})
                  .results.at(id);
  }
  return out;
}

void expectSameOutputs(const std::map<uint64_t, RequestResult> &got,
                       const std::map<uint64_t, RequestResult> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto &[id, w] : want) {
    const RequestResult &g = got.at(id);
    ASSERT_EQ(g.outputs.size(), w.outputs.size()) << "request " << id;
    for (size_t i = 0; i < w.outputs.size(); ++i) {
      EXPECT_EQ(g.outputs[i].outputIds, w.outputs[i].outputIds)
          << "request " << id << " output " << i;
      EXPECT_EQ(g.outputs[i].finishReason, w.outputs[i].finishReason);
    }
  }
}

/// 20 requests: prompts of 3..40 tokens (the budget below is 16), 1..24 new
/// tokens, greedy and seeded sampling, one of 3 samples and one beam search.
std::vector<ScheduledRequest> mixedWorkload() {
  std::mt19937 rng(7);
  std::vector<ScheduledRequest> rs;
  for (uint64_t id = 0; id < 20; ++id) {
    int32_t len = 3 + static_cast<int32_t>(rng() % 38);
    int64_t gen = 1 + static_cast<int64_t>(rng() % 24);
    float temp = id % 3 == 0 ? 0.0f : 0.9f;
    rs.push_back(request(id, tokens(len, static_cast<int32_t>(id)), gen, temp,
                         100 + id));
  }
  rs[5].n = 3;
  rs[5].options.sampling.temperature = 1.0f;
  BeamOptions beam;
  beam.numBeams = 3;
  beam.numReturnSequences = 2;
  beam.maxNewTokens = 6;
  rs[8].beam = beam;
  return rs;
}

TEST(Scheduler, ChunkedPrefillRespectsTheTokenBudget) {
  FakeModel model({64, 4, false, 512, 50});
  Scheduler s(model, nullptr, {4, 8});
  s.add(request(1, tokens(20, 1), 3));
  s.runToCompletion();
  ASSERT_EQ(model.steps.size(), 5u);
  EXPECT_EQ(model.steps[0].seqLens, (std::vector<int32_t>{8}));
  EXPECT_EQ(model.steps[1].seqLens, (std::vector<int32_t>{8}));
  EXPECT_EQ(model.steps[2].seqLens, (std::vector<int32_t>{4}));
  EXPECT_EQ(model.steps[2].logitRows, 1); // only the prompt's last chunk
  EXPECT_EQ(model.steps[0].logitRows, 0);
  EXPECT_EQ(model.steps[3].graph, "decode");
  model.checkIdle();
}

TEST(Scheduler, RunningDecodesComeBeforeNewPrefills) {
  FakeModel model({64, 4, false, 512, 50});
  Scheduler s(model, nullptr, {4, 8});
  s.add(request(1, tokens(4, 1), 10));
  s.step(); // A's prompt
  s.add(request(2, tokens(20, 2), 2));
  s.step();
  // A's one decode token first, then as much of B's prompt as fits.
  EXPECT_EQ(model.steps.back().seqLens, (std::vector<int32_t>{1, 7}));
  EXPECT_EQ(model.steps.back().graph, "prefill");
  s.runToCompletion();
  model.checkIdle();
  // The counters sort every step by kind: A's prompt (prefill), A's decode
  // beside B's chunks (mixed) until B's prompt is in, then decodes.
  const auto &t = s.counters().stepTime;
  const StepTime &prefill = t[size_t(StepKind::Prefill)],
                 &mixed = t[size_t(StepKind::Mixed)],
                 &decode = t[size_t(StepKind::Decode)];
  EXPECT_EQ(prefill.steps, 1);
  EXPECT_EQ(prefill.chunkTokens, 4);
  EXPECT_EQ(mixed.decodeRows, mixed.steps);
  EXPECT_EQ(mixed.chunkTokens, 20);
  EXPECT_EQ(t[size_t(StepKind::Verify)].steps, 0);
  EXPECT_EQ(prefill.steps + mixed.steps + decode.steps,
            static_cast<int64_t>(model.steps.size()));
  EXPECT_EQ(decode.chunkTokens, 0);
  EXPECT_GT(decode.engineSeconds + mixed.engineSeconds, 0.0);
}

TEST(Scheduler, AdmitsUpToMaxNumSeqs) {
  FakeModel model({64, 4, false, 512, 50});
  Scheduler s(model, nullptr, {2, 64});
  for (uint64_t id = 1; id <= 3; ++id)
    s.add(request(id, tokens(4, static_cast<int32_t>(id)), 5));
  s.step();
  EXPECT_EQ(model.steps[0].seqLens.size(), 2u);
  EXPECT_EQ(s.runningRequests(), 2u);
  EXPECT_EQ(s.waitingRequests(), 1u);
  s.runToCompletion();
  EXPECT_EQ(s.counters().maxRunningSeqs, 2);
  model.checkIdle();
}

TEST(Scheduler, PreemptsTheMostRecentlyAdmittedRequest) {
  // 6 blocks of 4: two requests of 8 + 12 tokens cannot both grow.
  std::vector<ScheduledRequest> rs;
  rs.push_back(request(1, tokens(8, 1), 12));
  rs.push_back(request(2, tokens(8, 2), 12));
  Outcome run = runAll(rs, {6, 4, false, 512, 50}, {4, 64});
  EXPECT_GT(run.counters.preemptions, 0);
  EXPECT_EQ(run.results.at(1).metrics.preemptions, 0);
  EXPECT_GT(run.results.at(2).metrics.preemptions, 0);
  expectSameOutputs(run.results, runSolo(rs));
}

TEST(Scheduler, EvictsCachedBlocksBeforePreemptingAnyone) {
  FakeModel model({8, 4, true, 512, 50});
  Scheduler s(model, nullptr, {4, 64});
  s.add(request(1, tokens(12, 1), 4));
  s.runToCompletion();
  EXPECT_GT(model.kv().cachedBlocks(), 0);
  // Needs all 8 blocks: the cached ones are evicted, nobody is preempted.
  RequestResult got;
  auto r = request(2, tokens(20, 2), 13);
  r.onFinish = [&](RequestResult res) { got = std::move(res); };
  s.add(std::move(r));
  s.runToCompletion();
  EXPECT_EQ(s.counters().preemptions, 0);
  EXPECT_EQ(got.outputs[0].outputIds.size(), 13u);
  model.checkIdle();
  std::vector<ScheduledRequest> again;
  again.push_back(request(2, tokens(20, 2), 13));
  EXPECT_EQ(got.outputs[0].outputIds,
            runSolo(std::move(again)).at(2).outputs[0].outputIds);
}

TEST(Scheduler, RefusesWhatCanNeverFit) {
  FakeModel model({4, 4, false, 512, 50});
  Scheduler s(model, nullptr, {4, 64});
  try {
    s.add(request(1, tokens(10, 1), 10));
    FAIL() << "a request larger than the pool was queued";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("room for 19 tokens"));
    EXPECT_THAT(e.what(), HasSubstr("the KV cache holds 16 tokens"));
  }
  EXPECT_TRUE(s.idle());
  EXPECT_THROW(s.add(request(2, {}, 4)), Error);
  EXPECT_THROW(s.add(request(3, {1, 99}, 4)), Error); // outside the vocab
  auto bad = request(4, {1, 2}, 4);
  bad.n = 0;
  EXPECT_THROW(s.add(bad), Error);
  auto wide = request(5, {1, 2}, 1);
  wide.n = 5; // more sequences than --max-num-seqs
  EXPECT_THROW(s.add(wide), Error);
  try {
    Scheduler z(model, nullptr, {0, 64});
    FAIL() << "--max-num-seqs 0 was accepted";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("--max-num-seqs"));
  }
  EXPECT_THROW(Scheduler(model, nullptr, {4, 0}), Error);
}

TEST(Scheduler, AbortFreesTheRequestsBlocks) {
  FakeModel model({32, 4, false, 512, 50});
  Scheduler s(model, nullptr, {4, 64});
  RequestResult aborted;
  auto r = request(1, tokens(9, 1), 100);
  r.onFinish = [&](RequestResult res) { aborted = std::move(res); };
  s.add(std::move(r));
  s.add(request(2, tokens(5, 2), 3));
  s.step();
  s.step();
  EXPECT_GT(model.kv().usedBlocks(), 0);
  EXPECT_TRUE(s.abort(1));
  EXPECT_FALSE(s.abort(1));
  EXPECT_EQ(aborted.outputs[0].finishReason, FinishReason::Abort);
  EXPECT_EQ(aborted.outputs[0].outputIds.size(), 2u);
  s.runToCompletion();
  model.checkIdle();
  // A waiting request can be aborted too.
  s.add(request(3, tokens(5, 3), 3));
  EXPECT_TRUE(s.abort(3));
  EXPECT_TRUE(s.idle());
  EXPECT_EQ(s.counters().finished.at(FinishReason::Abort), 2);
  // abortAll ends waiting and running requests alike.
  s.add(request(4, tokens(5, 4), 30));
  s.step();
  s.add(request(5, tokens(5, 5), 30));
  s.abortAll();
  EXPECT_TRUE(s.idle());
  EXPECT_EQ(s.counters().finished.at(FinishReason::Abort), 4);
  model.checkIdle();
}

TEST(Scheduler, BatchedEqualsSolo) {
  auto solo = runSolo(mixedWorkload());
  Outcome batched = runAll(mixedWorkload(), {256, 4, false, 512, 50}, {16, 16});
  EXPECT_EQ(batched.counters.preemptions, 0);
  EXPECT_GT(batched.counters.maxRunningSeqs, 8);
  expectSameOutputs(batched.results, solo);
}

TEST(Scheduler, BatchedEqualsSoloUnderPreemption) {
  auto solo = runSolo(mixedWorkload());
  for (bool prefix : {false, true}) {
    // 40 blocks of 4: the largest request alone fits, not many together.
    Outcome small = runAll(mixedWorkload(), {40, 4, prefix, 512, 50}, {16, 16});
    EXPECT_GT(small.counters.preemptions, 0) << "prefix " << prefix;
    expectSameOutputs(small.results, solo);
  }
}

TEST(Scheduler, SharedPrefixesComeFromTheCache) {
  std::vector<int32_t> shared = tokens(24, 9);
  std::vector<ScheduledRequest> rs;
  for (uint64_t id = 0; id < 4; ++id) {
    std::vector<int32_t> p = shared;
    p.push_back(static_cast<int32_t>(id + 1));
    p.push_back(static_cast<int32_t>(id + 20));
    rs.push_back(request(id, p, 5));
  }
  // A budget of 8 tokens: the first request's prefix is computed before
  // the next ones are admitted.
  Outcome cached = runAll(rs, {64, 4, true, 512, 50}, {4, 8});
  Outcome plain = runAll(rs, {64, 4, false, 512, 50}, {4, 8});
  EXPECT_EQ(cached.results.at(0).cachedPromptTokens, 0);
  for (uint64_t id = 1; id < 4; ++id)
    EXPECT_GE(cached.results.at(id).cachedPromptTokens, 24) << id;
  EXPECT_GE(cached.counters.prefixHitTokens, 72);
  EXPECT_EQ(plain.counters.prefixHitTokens, 0);
  expectSameOutputs(cached.results, plain.results);
}

TEST(Scheduler, StreamsEventsPerSample) {
  FakeModel model({64, 4, false, 512, 50});
  Scheduler s(model, nullptr, {4, 64});
  auto r = request(1, tokens(6, 1), 4, 1.0f, 3);
  r.n = 2;
  std::map<int32_t, std::vector<int32_t>> streamed;
  std::map<int32_t, FinishReason> ended;
  RequestResult done;
  r.onEvent = [&](const RequestEvent &e) {
    auto &v = streamed[e.index];
    v.insert(v.end(), e.tokens.begin(), e.tokens.end());
    if (e.finished != FinishReason::None)
      ended[e.index] = e.finished;
  };
  r.onFinish = [&](RequestResult res) { done = std::move(res); };
  s.add(std::move(r));
  s.runToCompletion();
  ASSERT_EQ(done.outputs.size(), 2u);
  for (int32_t i = 0; i < 2; ++i) {
    EXPECT_EQ(streamed[i], done.outputs[static_cast<size_t>(i)].outputIds);
    EXPECT_EQ(ended[i], FinishReason::Length);
  }
  EXPECT_GE(done.metrics.ttftSeconds, done.metrics.queueSeconds);
  model.checkIdle();
}

} // namespace
} // namespace llmc::test
