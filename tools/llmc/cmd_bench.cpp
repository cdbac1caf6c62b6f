//===- cmd_bench.cpp - llmc bench PLAN: prefill/decode speed
//---------------===//
//
// Times the Engine directly (no tokenizer, no sampler policy) so the numbers
// are the backend's: prefill of random prompts, which gives each sequence's
// first token, then greedy decode steps over B sequences at once for the
// other --gen-len - 1 tokens. TPOT is (t_N - t_1) / (N - 1), as in llmc run.
// One warm-up repetition is dropped (first-touch page faults on the mapped
// weights, oneDNN primitive creation) and the median of the rest is reported,
// because shared machines are noisy and a median ignores the odd descheduled
// run where a mean would not.
//
//===----------------------------------------------------------------------===//

#include "bench_serving.h"
#include "cli_util.h"
#include "commands.h"
#include "llmc/runtime/engine.h"
#include "llmc/runtime/weight_traffic.h"
#include "llmc/support/error.h"
#include "llmc/support/memory.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

namespace llmc::cli {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

int32_t argmax(const float *row, int64_t n) {
  return static_cast<int32_t>(std::max_element(row, row + n) - row);
}

int64_t rowsAt(const llmc_rows &r, int64_t t, int64_t b) {
  return r.t_coef * t + r.b_coef * b + r.constant;
}

/// FLOPs of one `tokens`-token prefill, per token: the linears at the rows
/// the prefill graph gives them (the LM head runs on the last row only) plus
/// causal attention (QKᵀ and PV, 2 FLOPs per multiply-add, half the square).
double prefillFlopsPerToken(const Plan &plan, int64_t tokens) {
  const Graph *g = plan.graph("prefill");
  if (!g)
    throw Error(plan.path() + ": the plan has no 'prefill' graph");
  double flops = 0;
  for (const llmc_op_desc &op : g->ops) {
    if (op.kind == LLMC_OP_LINEAR &&
        op.operands[0].kind == LLMC_OPERAND_BUFFER) {
      const llmc_buffer_desc &x = g->buffers.at(op.operands[0].index);
      const llmc_buffer_desc &y = g->buffers.at(op.results[0]);
      flops += 2.0 * static_cast<double>(rowsAt(x.rows, tokens, 1)) *
               static_cast<double>(x.cols) * static_cast<double>(y.cols);
    } else if (op.kind == LLMC_OP_EXPERT_LINEAR) {
      // k runs per row, each [K] x [N, K] of its expert: the active FLOPs.
      const llmc_buffer_desc &x = g->buffers.at(op.operands[0].index);
      const llmc_buffer_desc &y = g->buffers.at(op.results[0]);
      const WeightInfo &w = plan.weights().at(op.operands[1].index);
      flops += 2.0 * static_cast<double>(rowsAt(x.rows, tokens, 1)) *
               static_cast<double>(y.cols) *
               static_cast<double>(w.shape.back() > 0 ? w.shape.back() : 0);
    } else if (op.kind == LLMC_OP_PREFILL_ATTENTION) {
      double heads = static_cast<double>(op.i[1]),
             hd = static_cast<double>(op.i[3]);
      double t = static_cast<double>(tokens);
      flops += 4.0 * heads * hd * t * (t + 1) / 2;
    }
  }
  return flops / static_cast<double>(tokens);
}

struct BatchResult {
  int32_t batch = 1;
  std::vector<double> prefillTokS, decodeTokS, ttftMs, tpotMs;
};

} // namespace

Action addBench(CLI::App &app) {
  struct Options {
    std::string plan, batch = "1";
    int64_t promptLen = 512, genLen = 128;
    int reps = 3;
    EngineFlags engine;
    uint32_t seed = 1;
    bool json = false, profile = false;
    std::string concurrency;
    int32_t requests = 32;
    ServingFlags serving;
  };
  auto o = std::make_shared<Options>();
  app.add_option("PLAN", o->plan, "A plan written by llmc compile")->required();
  app.add_option("--prompt-len", o->promptLen,
                 "Prompt tokens per sequence (default 512)");
  app.add_option("--gen-len", o->genLen,
                 "Tokens generated per sequence, the first by the prefill "
                 "(default 128)");
  app.add_option(
      "--batch", o->batch,
      "Sequences decoded at once; a list like 1,8 runs each (default 1). "
      "Their prompts are prefilled one after another");
  addEngineFlags(app, o->engine);
  app.add_option("--reps", o->reps,
                 "Timed repetitions after one warm-up (default 3)");
  app.add_option("--seed", o->seed, "Seed of the random prompt token ids");
  app.add_flag("--json", o->json, "Print one JSON object instead of a table");
  app.add_flag("--profile", o->profile,
               "Time every op per graph and op kind (cpu backend: the table "
               "goes to stderr at the end; warm-up included)");
  app.add_option("--concurrency", o->concurrency,
                 "Serving benchmark: a mixed workload through the scheduler "
                 "with this many requests in flight, e.g. 1,4,16 (prompt and "
                 "output lengths drawn up to --prompt-len and --gen-len)");
  app.add_option("--requests", o->requests,
                 "Requests in the --concurrency workload (default 32)");
  addServingFlags(app, o->serving);
  return [o, &app]() -> int {
    // Read by the cpu backend when it is created.
    if (o->profile)
      setenv("LLMC_CPU_PROFILE", "1", 1);
    if (!o->concurrency.empty()) {
      if (app.count("--batch") || app.count("--reps"))
        throw Error("--batch and --reps do not apply to --concurrency");
      ServingBenchOptions so;
      try {
        so.concurrency = parseIds(o->concurrency, "--concurrency");
      } catch (const Error &) {
        throw Error("--concurrency: expected levels like 1,4,16, got '" +
                    o->concurrency + "'");
      }
      so.requests = o->requests;
      so.maxPromptLen = app.count("--prompt-len") ? o->promptLen : 512;
      so.maxGenLen = app.count("--gen-len") ? o->genLen : 256;
      so.seed = o->seed;
      so.json = o->json;
      OpenedPlan opened = openPlan(o->plan);
      return runServingBench(opened, o->engine, o->serving, so);
    }
    if (o->promptLen < 1)
      throw Error("--prompt-len must be at least 1, got " +
                  std::to_string(o->promptLen));
    if (o->genLen < 2)
      throw Error("--gen-len must be at least 2 (TPOT needs two tokens), "
                  "got " +
                  std::to_string(o->genLen));
    if (o->reps < 1)
      throw Error("--reps must be at least 1, got " + std::to_string(o->reps));
    std::vector<int32_t> batches;
    try {
      batches = parseIds(o->batch, "--batch");
    } catch (const Error &) {
      throw Error("--batch: expected batch sizes like 1 or 1,8, got '" +
                  o->batch + "'");
    }
    for (int32_t b : batches)
      if (b < 1)
        throw Error("--batch: every batch size must be at least 1, got " +
                    std::to_string(b));

    OpenedPlan opened = openPlan(o->plan);
    const Plan *plan = opened.plan.get();
    const PlanConfig &cfg = plan->config();
    // The last token is sampled, never fed.
    int64_t need = o->promptLen + o->genLen - 1;
    if (need > cfg.contextLength)
      throw Error("--prompt-len " + std::to_string(o->promptLen) +
                  " + --gen-len " + std::to_string(o->genLen) +
                  " - 1 = " + std::to_string(need) +
                  " tokens, more than the plan's context length " +
                  std::to_string(cfg.contextLength));
    if (cfg.vocabSize < 1)
      throw Error(o->plan + ": the plan has no vocabulary size");

    EngineOptions eo;
    eo.maxSequences = *std::max_element(batches.begin(), batches.end());
    // A pool sized to what the bench uses, not the plan's full context,
    // keeps peak RSS about the model rather than about unused KV blocks.
    eo.contextLength = need;
    std::unique_ptr<Engine> enginePtr = opened.engine(o->engine, eo);
    Engine &engine = *enginePtr;
    const int64_t vocab = engine.vocabSize();

    std::mt19937 rng(o->seed);
    std::uniform_int_distribution<int32_t> pick(
        0, static_cast<int32_t>(vocab - 1));

    std::vector<BatchResult> results;
    for (int32_t B : batches) {
      BatchResult r;
      r.batch = B;
      std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(B));
      for (auto &p : prompts) {
        p.resize(static_cast<size_t>(o->promptLen));
        for (auto &t : p)
          t = pick(rng);
      }
      std::vector<float> logits(static_cast<size_t>(B * vocab));
      for (int rep = 0; rep <= o->reps; ++rep) {
        std::vector<int32_t> seqs, next(static_cast<size_t>(B));
        auto t0 = Clock::now();
        for (int32_t b = 0; b < B; ++b) {
          seqs.push_back(engine.newSequence());
          engine.prefill(seqs.back(), prompts[static_cast<size_t>(b)],
                         logits.data() + b * vocab);
        }
        double prefillS = secondsSince(t0);
        for (int32_t b = 0; b < B; ++b)
          next[static_cast<size_t>(b)] =
              argmax(logits.data() + b * vocab, vocab);
        double ttftS = secondsSince(t0);
        auto t1 = Clock::now();
        for (int64_t step = 1; step < o->genLen; ++step) {
          engine.decode(seqs, next, logits.data());
          for (int32_t b = 0; b < B; ++b)
            next[static_cast<size_t>(b)] =
                argmax(logits.data() + b * vocab, vocab);
        }
        double decodeS = secondsSince(t1);
        for (int32_t s : seqs)
          engine.releaseSequence(s);
        if (rep == 0)
          continue; // warm-up
        double decodeSteps = static_cast<double>(o->genLen - 1);
        double genTokens = static_cast<double>(B) * decodeSteps;
        r.prefillTokS.push_back(static_cast<double>(B) *
                                static_cast<double>(o->promptLen) / prefillS);
        r.decodeTokS.push_back(genTokens / decodeS);
        r.ttftMs.push_back(ttftS * 1e3);
        r.tpotMs.push_back(decodeS * 1e3 / decodeSteps);
      }
      results.push_back(std::move(r));
    }

    const WeightTraffic traffic = weightTraffic(*plan);
    const uint64_t weightBytes = traffic.planBytes;
    const uint64_t decodeBytes = traffic.decodeBytes(1);
    double flopsPerToken = prefillFlopsPerToken(*plan, o->promptLen);
    int64_t rss = peakRssBytes();
    // Every decode step streams the weights once for all B sequences (with
    // experts, those the batch's tokens chose: weight_traffic.h).
    auto impliedGBs = [&](const BatchResult &r) {
      return median(r.decodeTokS) / r.batch *
             static_cast<double>(traffic.decodeBytes(r.batch)) / 1e9;
    };

    if (o->json) {
      nlohmann::json runs = nlohmann::json::array();
      for (const BatchResult &r : results)
        runs.push_back({{"batch", r.batch},
                        {"prefill_tok_s", median(r.prefillTokS)},
                        {"decode_tok_s", median(r.decodeTokS)},
                        {"ttft_ms", median(r.ttftMs)},
                        {"tpot_ms", median(r.tpotMs)},
                        {"decode_weight_gb_s", impliedGBs(r)},
                        {"prefill_tok_s_reps", r.prefillTokS},
                        {"decode_tok_s_reps", r.decodeTokS}});
      nlohmann::json j = {{"plan", o->plan},
                          {"backend", engine.backendName()},
                          {"threads", o->engine.threads},
                          {"compute_dtype", cfg.computeDtype},
                          {"quantization", cfg.quantization},
                          {"prompt_len", o->promptLen},
                          {"gen_len", o->genLen},
                          {"reps", o->reps},
                          {"warmup_reps", 1},
                          {"seed", o->seed},
                          {"weight_bytes", weightBytes},
                          {"decode_weight_bytes_per_token", decodeBytes},
                          {"total_parameters", cfg.totalParameters},
                          {"active_parameters", cfg.activeParameters},
                          {"num_experts", cfg.numExperts},
                          {"experts_per_token", cfg.expertsPerToken},
                          {"prefill_flops_per_token", flopsPerToken},
                          {"kv_dtype", llmc_kv_dtype_name(engine.kvDtype())},
                          {"kv_bytes_per_token", engine.kvBytesPerToken()},
                          {"peak_rss_bytes", rss},
                          {"results", runs}};
      std::printf("%s\n", j.dump().c_str());
      return 0;
    }
    std::string threads =
        o->engine.threads ? std::to_string(o->engine.threads) : "default";
    std::printf(
        "llmc bench %s: %s backend, %s threads, %s compute, quantization "
        "%s, KV cache %s (%lld bytes/token)\n"
        "prompt %lld tokens, %lld generated (1 by the prefill, %lld decode "
        "steps), median of %d reps after 1 warm-up\n"
        "weights %.1f MiB in the plan, %.1f MiB read per decode step; "
        "prefill %.2f GFLOP per token\n\n",
        o->plan.c_str(), engine.backendName().c_str(), threads.c_str(),
        cfg.computeDtype.c_str(), cfg.quantization.c_str(),
        llmc_kv_dtype_name(engine.kvDtype()),
        static_cast<long long>(engine.kvBytesPerToken()),
        static_cast<long long>(o->promptLen), static_cast<long long>(o->genLen),
        static_cast<long long>(o->genLen - 1), o->reps,
        static_cast<double>(weightBytes) / (1 << 20),
        static_cast<double>(decodeBytes) / (1 << 20), flopsPerToken / 1e9);
    if (cfg.numExperts > 0)
      std::printf("experts: %lld of %lld per token in %lld of %lld layers; "
                  "%.1fM of %.1fM parameters active; a batch of B reads the "
                  "experts its tokens chose once (weight GB/s below assumes "
                  "uniform routing)\n\n",
                  static_cast<long long>(cfg.expertsPerToken),
                  static_cast<long long>(cfg.numExperts),
                  static_cast<long long>(cfg.moeLayers),
                  static_cast<long long>(cfg.numLayers),
                  static_cast<double>(cfg.activeParameters) / 1e6,
                  static_cast<double>(cfg.totalParameters) / 1e6);
    std::printf("%5s  %14s  %10s  %13s  %9s  %12s\n", "batch", "prefill tok/s",
                "TTFT ms", "decode tok/s", "TPOT ms", "weight GB/s");
    for (const BatchResult &r : results)
      std::printf("%5d  %14.1f  %10.1f  %13.1f  %9.2f  %12.1f\n", r.batch,
                  median(r.prefillTokS), median(r.ttftMs), median(r.decodeTokS),
                  median(r.tpotMs), impliedGBs(r));
    std::printf(
        "\npeak RSS %.1f MiB; TTFT = prefill of all the batch's prompts + "
        "first token; TPOT = (t_N - t_1) / (N - 1), the time of a decode "
        "step\n",
        static_cast<double>(rss) / (1 << 20));
    return 0;
  };
}

} // namespace llmc::cli
