//===- bench_serving.cpp - llmc bench --concurrency -----------------------===//
//
// The workload (fixed by --seed, the same at every concurrency): prompt
// lengths uniform in [max/16, max] tokens, half of them starting with one
// shared 64-token prefix (a system prompt: what the prefix cache is for);
// output lengths uniform in [max/16, max], EOS ignored so every request
// generates exactly its length; greedy. Token ids are random.
//
//===----------------------------------------------------------------------===//
#include "bench_serving.h"

#include "llmc/runtime/scheduler.h"
#include "llmc/support/error.h"
#include "llmc/support/memory.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <set>

namespace llmc::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct Work {
  std::vector<int32_t> prompt;
  int64_t gen;
};

std::vector<Work> workload(const ServingBenchOptions &o, int64_t vocab,
                           int64_t context) {
  std::mt19937 rng(o.seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return lo +
           static_cast<int64_t>(rng() % static_cast<uint32_t>(hi - lo + 1));
  };
  auto token = [&] { return static_cast<int32_t>(rng() % vocab); };
  std::vector<int32_t> shared(64);
  for (int32_t &t : shared)
    t = token();
  std::vector<Work> out;
  for (int32_t i = 0; i < o.requests; ++i) {
    Work w;
    int64_t len =
        uniform(std::max<int64_t>(1, o.maxPromptLen / 16), o.maxPromptLen);
    w.gen = uniform(std::max<int64_t>(1, o.maxGenLen / 16), o.maxGenLen);
    len = std::min(len, context - w.gen);
    if (i % 2 == 0 && len > 64)
      w.prompt = shared;
    while (static_cast<int64_t>(w.prompt.size()) < len)
      w.prompt.push_back(token());
    out.push_back(std::move(w));
  }
  return out;
}

struct Level {
  int32_t concurrency;
  double seconds = 0;
  int64_t outputTokens = 0;
  std::vector<double> ttftMs, tpotMs;
  int32_t maxBatch = 0;
  int64_t preemptions = 0, steps = 0;
  double prefixHitRate = 0;
  std::array<StepTime, 4> stepTime;
};

constexpr const char *kStepKinds[] = {"decode", "mixed", "prefill", "verify"};

Level runLevel(Engine &engine, const std::vector<Work> &work,
               const SchedulerOptions &so, int32_t concurrency) {
  engine.kv().clearCache(); // every level starts cold
  Scheduler s(engine, nullptr, so);
  Level l;
  l.concurrency = concurrency;
  size_t next = 0, done = 0;
  auto submit = [&] {
    ScheduledRequest r;
    r.id = next;
    r.prompt = work[next].prompt;
    r.options.maxNewTokens = work[next].gen;
    r.options.sampling.temperature = 0;
    r.onFinish = [&](RequestResult res) {
      ++done;
      const GenerationMetrics &m = res.metrics;
      l.outputTokens += m.generatedTokens;
      l.ttftMs.push_back(m.ttftSeconds * 1e3);
      if (m.generatedTokens > 1)
        l.tpotMs.push_back(m.tpotSeconds * 1e3);
    };
    ++next;
    s.add(std::move(r));
  };
  const auto start = Clock::now();
  while (done < work.size()) {
    while (next < work.size() && next - done < static_cast<size_t>(concurrency))
      submit();
    s.step();
  }
  l.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const SchedulerCounters &c = s.counters();
  l.maxBatch = c.maxRunningSeqs;
  l.preemptions = c.preemptions;
  l.steps = c.steps;
  l.stepTime = c.stepTime;
  l.prefixHitRate = c.prefixQueryTokens
                        ? static_cast<double>(c.prefixHitTokens) /
                              static_cast<double>(c.prefixQueryTokens)
                        : 0;
  engine.checkIdle();
  return l;
}

nlohmann::json stepKindsJson(const Level &l) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t k = 0; k < l.stepTime.size(); ++k) {
    const StepTime &t = l.stepTime[k];
    if (t.steps)
      j[kStepKinds[k]] = {{"steps", t.steps},
                          {"decode_rows", t.decodeRows},
                          {"chunk_tokens", t.chunkTokens},
                          {"plan_seconds", t.planSeconds},
                          {"engine_seconds", t.engineSeconds},
                          {"sample_seconds", t.sampleSeconds}};
  }
  return j;
}

/// Where each level's time went, by kind of step: what `--profile`'s op
/// table (per graph) cannot say on its own.
void printStepKinds(const std::vector<Level> &results) {
  std::printf("\nsteps by kind: count, decode rows and prompt-chunk tokens "
              "per step, ms per step (planning | engine | sampling and "
              "bookkeeping), share of the level's time\n");
  std::printf("%5s %-8s %7s %7s %8s %8s %8s %8s %6s\n", "conc", "kind", "steps",
              "rows", "chunk", "plan", "engine", "sample", "time");
  for (const Level &l : results)
    for (size_t k = 0; k < l.stepTime.size(); ++k) {
      const StepTime &t = l.stepTime[k];
      if (!t.steps)
        continue;
      const double n = static_cast<double>(t.steps);
      std::printf("%5d %-8s %7lld %7.1f %8.1f %8.3f %8.3f %8.3f %5.1f%%\n",
                  l.concurrency, kStepKinds[k], static_cast<long long>(t.steps),
                  static_cast<double>(t.decodeRows) / n,
                  static_cast<double>(t.chunkTokens) / n,
                  1e3 * t.planSeconds / n, 1e3 * t.engineSeconds / n,
                  1e3 * t.sampleSeconds / n,
                  100 * (t.planSeconds + t.engineSeconds + t.sampleSeconds) /
                      l.seconds);
    }
}

} // namespace

int runServingBench(const OpenedPlan &opened, const EngineFlags &engineFlags,
                    const ServingFlags &serving, const ServingBenchOptions &o) {
  if (o.requests < 1)
    throw Error("--requests must be at least 1, got " +
                std::to_string(o.requests));
  std::set<int32_t> levels(o.concurrency.begin(), o.concurrency.end());
  for (int32_t c : levels)
    if (c < 1)
      throw Error("--concurrency: every level must be at least 1, got " +
                  std::to_string(c));
  levels.insert(1); // the one-at-a-time baseline
  const PlanConfig &cfg = opened.plan->config();
  const int64_t context = cfg.contextLength;
  if (o.maxPromptLen < 1 || o.maxGenLen < 2 ||
      o.maxPromptLen + o.maxGenLen > context)
    throw Error("--prompt-len " + std::to_string(o.maxPromptLen) +
                " and --gen-len " + std::to_string(o.maxGenLen) +
                " must be positive (gen-len at least 2) and fit the plan's "
                "context length " +
                std::to_string(context));
  SchedulerOptions so = serving.schedulerOptions();
  EngineOptions eo = serving.engineOptions();
  std::unique_ptr<Engine> engine = opened.engine(engineFlags, eo);
  std::vector<Work> work = workload(o, cfg.vocabSize, context);
  int64_t promptTokens = 0, genTokens = 0;
  for (const Work &w : work) {
    promptTokens += static_cast<int64_t>(w.prompt.size());
    genTokens += w.gen;
  }
  // A short warm-up: first-touch page faults on the weights, oneDNN
  // primitive creation.
  {
    ServingBenchOptions warm = o;
    warm.requests = 2;
    runLevel(*engine, workload(warm, cfg.vocabSize, context), so, 2);
  }
  std::vector<Level> results;
  for (int32_t c : levels)
    results.push_back(runLevel(*engine, work, so, c));
  const Level &base = results.front();
  auto tokS = [](const Level &l) {
    return l.seconds > 0 ? static_cast<double>(l.outputTokens) / l.seconds : 0;
  };

  if (o.json) {
    nlohmann::json runs = nlohmann::json::array();
    for (const Level &l : results)
      runs.push_back(
          {{"concurrency", l.concurrency},
           {"seconds", l.seconds},
           {"requests_per_s", static_cast<double>(o.requests) / l.seconds},
           {"output_tokens_per_s", tokS(l)},
           {"speedup_vs_sequential", tokS(l) / tokS(base)},
           {"ttft_ms_p50", percentile(l.ttftMs, 0.5)},
           {"ttft_ms_p99", percentile(l.ttftMs, 0.99)},
           {"tpot_ms_p50", percentile(l.tpotMs, 0.5)},
           {"tpot_ms_p99", percentile(l.tpotMs, 0.99)},
           {"max_batch", l.maxBatch},
           {"preemptions", l.preemptions},
           {"steps", l.steps},
           {"prefix_cache_hit_rate", l.prefixHitRate},
           {"step_kinds", stepKindsJson(l)}});
    nlohmann::json j = {{"plan", opened.plan->path()},
                        {"backend", engine->backendName()},
                        {"threads", engineFlags.threads},
                        {"requests", o.requests},
                        {"prompt_tokens", promptTokens},
                        {"output_tokens", genTokens},
                        {"max_num_seqs", so.maxNumSeqs},
                        {"max_num_batched_tokens", so.maxNumBatchedTokens},
                        {"kv_cache_blocks", engine->numBlocks()},
                        {"peak_rss_bytes", peakRssBytes()},
                        {"results", runs}};
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("llmc bench --concurrency: %s, %s backend, %d requests "
              "(%lld prompt tokens, %lld output tokens; seed %u), "
              "--max-num-seqs %d, --max-num-batched-tokens %d, KV %d blocks "
              "of %d\n\n",
              opened.plan->path().c_str(), engine->backendName().c_str(),
              o.requests, static_cast<long long>(promptTokens),
              static_cast<long long>(genTokens), o.seed, so.maxNumSeqs,
              so.maxNumBatchedTokens, engine->numBlocks(), engine->blockSize());
  std::printf("%5s %9s %8s %9s %7s %9s %9s %9s %9s %6s %7s %7s\n", "conc",
              "req/s", "out tok/s", "vs seq", "TTFT50", "TTFT99", "TPOT50",
              "TPOT99", "batch", "preempt", "prefix", "steps");
  for (const Level &l : results)
    std::printf("%5d %9.2f %8.1f %8.2fx %7.0f %9.0f %9.2f %9.2f %9d %6lld "
                "%6.0f%% %7lld\n",
                l.concurrency, static_cast<double>(o.requests) / l.seconds,
                tokS(l), tokS(l) / tokS(base), percentile(l.ttftMs, 0.5),
                percentile(l.ttftMs, 0.99), percentile(l.tpotMs, 0.5),
                percentile(l.tpotMs, 0.99), l.maxBatch,
                static_cast<long long>(l.preemptions), 100 * l.prefixHitRate,
                static_cast<long long>(l.steps));
  std::printf("\nTTFT/TPOT in ms (p50, p99 over requests); vs seq = output "
              "tokens/s over concurrency 1's; peak RSS %.1f MiB\n",
              static_cast<double>(peakRssBytes()) / (1 << 20));
  printStepKinds(results);
  return 0;
}

} // namespace llmc::cli
