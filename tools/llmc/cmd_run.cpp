//===- cmd_run.cpp - llmc run PLAN --prompt TEXT
//---------------------------===//

#include "cli_util.h"
#include "commands.h"
#include "llmc/runtime/beam.h"
#include "llmc/runtime/explain.h"
#include "llmc/runtime/generate.h"
#include "llmc/runtime/weight_traffic.h"
#include "llmc/support/error.h"
#include "prompts_file.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace llmc::cli {
namespace {

nlohmann::json statsJson(const GenerationMetrics &m, const Engine &engine,
                         const spec::SpeculativeOptions &spec) {
  nlohmann::json j = {{"backend", engine.backendName()},
                      {"prompt_tokens", m.promptTokens},
                      {"generated_tokens", m.generatedTokens},
                      {"ttft_ms", m.ttftSeconds * 1e3},
                      {"tpot_ms", m.tpotSeconds * 1e3},
                      {"prefill_tokens_per_s", m.prefillTokensPerSecond},
                      {"decode_tokens_per_s", m.decodeTokensPerSecond},
                      {"peak_rss_bytes", m.peakRssBytes},
                      {"kv_bytes_per_token", m.kvBytesPerToken},
                      {"kv_bytes_used", m.kvBytesUsed},
                      {"dropped_prompt_tokens", m.droppedPromptTokens}};
  const PlanConfig &c = engine.config();
  const WeightTraffic traffic = weightTraffic(engine.plan());
  j["decode_weight_bytes_per_token"] = traffic.decodeBytes(1);
  j["total_parameters"] = c.totalParameters;
  j["active_parameters"] = c.activeParameters;
  if (c.numExperts > 0)
    j["experts"] = {{"num_experts", c.numExperts},
                    {"experts_per_token", c.expertsPerToken},
                    {"moe_layers", c.moeLayers}};
  if (spec.enabled())
    j["speculative"] = speculativeStatsJson(m.speculative, spec);
  return j;
}

void printStats(const GenerationMetrics &m, const Engine &engine,
                const spec::SpeculativeOptions &spec) {
  const std::string &backend = engine.backendName();
  std::fprintf(stderr,
               "\n--- stats (%s backend)\n"
               "prompt tokens     %lld, prefill %.1f tok/s\n"
               "generated tokens  %lld, decode %.1f tok/s\n"
               "TTFT              %.2f ms (start to first token)\n"
               "TPOT              %.2f ms ((t_N - t_1) / (N - 1))\n"
               "KV cache          %lld bytes/token (%s), %lld bytes used\n"
               "peak RSS          %.1f MiB\n"
               "truncated         %lld prompt tokens dropped (--truncate)\n",
               backend.c_str(), static_cast<long long>(m.promptTokens),
               m.prefillTokensPerSecond,
               static_cast<long long>(m.generatedTokens),
               m.decodeTokensPerSecond, m.ttftSeconds * 1e3,
               m.tpotSeconds * 1e3, static_cast<long long>(m.kvBytesPerToken),
               llmc_kv_dtype_name(engine.kvDtype()),
               static_cast<long long>(m.kvBytesUsed),
               static_cast<double>(m.peakRssBytes) / (1 << 20),
               static_cast<long long>(m.droppedPromptTokens));
  std::fprintf(stderr,
               "KV pool           %d blocks of %d tokens = %lld tokens, "
               "%.1f MiB (%s)\n",
               engine.numBlocks(), engine.blockSize(),
               static_cast<long long>(engine.numBlocks()) * engine.blockSize(),
               static_cast<double>(engine.kvPoolBytes()) / (1 << 20),
               engine.kvPoolOrigin().c_str());
  std::fputs(cli::slidingPoolText(engine).c_str(), stderr);
  const PlanConfig &c = engine.config();
  if (c.numExperts > 0)
    std::fprintf(stderr,
                 "experts           %lld of %lld per token in %lld of %lld "
                 "layers; %.2fM of %.2fM parameters active\n",
                 static_cast<long long>(c.expertsPerToken),
                 static_cast<long long>(c.numExperts),
                 static_cast<long long>(c.moeLayers),
                 static_cast<long long>(c.numLayers),
                 static_cast<double>(c.activeParameters) / 1e6,
                 static_cast<double>(c.totalParameters) / 1e6);
  const WeightTraffic traffic = weightTraffic(engine.plan());
  std::fprintf(stderr,
               "weights read      %.2f MiB per decode token (of %.2f MiB in "
               "the plan)\n",
               static_cast<double>(traffic.decodeBytes(1)) / (1 << 20),
               static_cast<double>(traffic.planBytes) / (1 << 20));
  if (spec.enabled())
    std::fputs(speculativeStatsText(m.speculative, spec).c_str(), stderr);
}

/// --num-beams, --n and friends: several sequences over one prefilled prompt
/// (llmc/runtime/beam.h).
struct ManyOptions {
  int32_t beams = 1, n = 1, returnSequences = 1;
  float lengthPenalty = 1.0f;
  std::string earlyStopping = "false";
  bool wanted() const {
    return beams != 1 || n != 1 || returnSequences != 1 ||
           earlyStopping != "false" || lengthPenalty != 1.0f;
  }
};

struct ManyRun {
  std::vector<int32_t> prompt;
  int64_t maxNewTokens;
  sample::SamplingParams sampling;
  std::vector<std::string> stops;
  std::vector<int64_t> eosIds;
  bool json, stats;
  const Speculation &spec;
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
};

int runMany(const ManyOptions &m, const ManyRun &r, Engine &engine,
            const tok::Tokenizer *tokenizer) {
  if (m.beams > 1 && m.n > 1)
    throw Error("--num-beams and --n cannot be combined: beam search is "
                "deterministic, --n draws independent samples");
  nlohmann::json outputs = nlohmann::json::array();
  GenerationMetrics metrics;
  if (m.n != 1) { // generateN rejects n < 1 with the flag's name
    if (m.returnSequences != 1 || m.earlyStopping != "false" ||
        m.lengthPenalty != 1.0f)
      throw Error("--num-return-sequences, --length-penalty and "
                  "--early-stopping need --num-beams > 1");
    GenerateOptions go;
    go.maxNewTokens = r.maxNewTokens;
    go.sampling = r.sampling;
    go.stops = r.stops;
    go.eosIds = r.eosIds;
    go.proposer = r.spec.get();
    go.speculative = r.spec.options;
    go.grammar = r.grammar;
    auto results = generateN(engine, tokenizer, r.prompt, go, m.n);
    for (const GenerateResult &g : results)
      outputs.push_back({{"output_ids", g.outputIds},
                         {"text", g.text},
                         {"finish_reason", finishReasonName(g.finishReason)},
                         {"seed", go.sampling.seed + outputs.size()}});
    metrics = results[0].metrics;
  } else {
    if (!r.stops.empty())
      throw Error("--stop is not supported with --num-beams");
    if (r.spec.get())
      throw Error("--speculative is not supported with --num-beams");
    BeamOptions bo;
    bo.numBeams = m.beams;
    bo.lengthPenalty = m.lengthPenalty;
    bo.earlyStopping = m.earlyStopping == "true"    ? EarlyStopping::True
                       : m.earlyStopping == "never" ? EarlyStopping::Never
                                                    : EarlyStopping::False;
    bo.numReturnSequences = m.returnSequences;
    bo.maxNewTokens = r.maxNewTokens;
    bo.eosIds = r.eosIds;
    bo.penalties = r.sampling;
    bo.grammar = r.grammar;
    BeamResult b = beamSearch(engine, tokenizer, r.prompt, bo);
    for (const BeamHypothesis &h : b.hypotheses)
      outputs.push_back({{"output_ids", h.outputIds},
                         {"text", h.text},
                         {"finish_reason", finishReasonName(h.finishReason)},
                         {"score", h.score},
                         {"sum_logprobs", h.sumLogprobs}});
    metrics = b.metrics;
  }
  if (r.json) {
    nlohmann::json j = {{"prompt_ids", r.prompt},
                        {"output_ids", outputs[0]["output_ids"]},
                        {"text", outputs[0]["text"]},
                        {"finish_reason", outputs[0]["finish_reason"]},
                        {"outputs", outputs},
                        {"stats", statsJson(metrics, engine, r.spec.options)}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    for (size_t i = 0; i < outputs.size(); ++i) {
      const nlohmann::json &out = outputs[i];
      std::string body = out["text"].get<std::string>();
      if (!tokenizer) {
        body.clear();
        for (int32_t id : out["output_ids"])
          body += (body.empty() ? "" : ",") + std::to_string(id);
      }
      std::printf("--- output %zu (%s", i,
                  out["finish_reason"].get<std::string>().c_str());
      if (out.contains("score"))
        std::printf(", score %.4f", out["score"].get<double>());
      std::printf(")\n%s\n", body.c_str());
    }
  }
  if (r.stats) {
    printStats(metrics, engine, r.spec.options);
    if (r.grammar)
      std::fputs(grammarStatsText(*r.grammar).c_str(), stderr);
  }
  return 0;
}

} // namespace

Action addRun(CLI::App &app) {
  struct Options {
    std::string plan, prompt, promptIds, promptsFile, dumpLogits, dumpAllLogits,
        truncate, explain;
    int64_t maxNewTokens = 128;
    EngineFlags engine;
    ServingFlags serving;
    SpeculativeFlags spec;
    GrammarFlags grammar;
    bool json = false, stats = false, ignoreEos = false;
    sample::SamplingParams sampling;
    std::vector<std::string> stops;
  };
  auto o = std::make_shared<Options>();
  o->sampling.temperature = 0.0f;
  app.add_option("PLAN", o->plan, "A plan written by llmc compile")->required();
  auto *text = app.add_option("--prompt", o->prompt, "Prompt text");
  auto *ids = app.add_option("--prompt-ids", o->promptIds,
                             "Prompt as token ids: 1,2,3");
  text->excludes(ids);
  auto *file = app.add_option(
      "--prompts-file", o->promptsFile,
      "Many requests at once through the scheduler: a JSON Lines file, one "
      "object per line with \"prompt\" or \"prompt_ids\" and optionally "
      "max_new_tokens, temperature, top_k, top_p, min_p, "
      "repetition_penalty, presence_penalty, frequency_penalty, seed, stop, "
      "ignore_eos, response_format (OpenAI's), grammar (GBNF text) (the "
      "flags give the defaults)");
  file->excludes(text)->excludes(ids);
  app.add_option("--max-new-tokens", o->maxNewTokens,
                 "Tokens to generate at most");
  addEngineFlags(app, o->engine);
  addSamplingFlags(app, o->sampling);
  addServingFlags(app, o->serving);
  addSpeculativeFlags(app, o->spec);
  addGrammarFlags(app, o->grammar);
  app.add_option("--stop", o->stops,
                 "Stop when this text appears (repeatable)");
  app.add_flag("--ignore-eos", o->ignoreEos, "Do not stop at EOS tokens");
  app.add_flag("--json", o->json, "Print one JSON object instead of text");
  app.add_option("--dump-logits", o->dumpLogits,
                 "Write the last prompt position's float32 logits here");
  app.add_option("--dump-prompt-logits", o->dumpAllLogits,
                 "Write float32 logits [prompt tokens, vocab] of every prompt "
                 "position here");
  app.add_flag("--stats", o->stats, "Print TTFT, TPOT, tokens/s, memory");
  auto many = std::make_shared<ManyOptions>();
  app.add_option("--num-beams", many->beams,
                 "Beam search with this many beams (HF semantics; 1 = off)");
  app.add_option("--length-penalty", many->lengthPenalty,
                 "Beam score = sum logprobs / generated_len^L (default 1)");
  app.add_flag("--early-stopping{true}", many->earlyStopping,
               "Beam search stops once --num-beams hypotheses ended "
               "(=never: only when none can improve; default false: HF's "
               "heuristic)")
      ->check(CLI::IsMember({"true", "false", "never"}));
  app.add_option("--num-return-sequences", many->returnSequences,
                 "Best beams to print, in [1, --num-beams]");
  app.add_option("--n", many->n,
                 "Draw this many samples (seeds --seed, --seed+1, ...) "
                 "sharing the prompt's KV cache");
  app.add_option("--truncate", o->truncate,
                 "left: keep the prompt's last context-1 tokens when it does "
                 "not fit (default: an error)")
      ->check(CLI::IsMember({"left"}));
  app.add_flag("--explain{text}", o->explain,
               "Print every step: phase, tokens fed, KV positions, top "
               "candidates before/after each sampling processor, the choice; "
               "--explain=json for JSON Lines")
      ->check(CLI::IsMember({"text", "json"}));
  return [o, many, &app]() -> int {
    if (!o->promptsFile.empty()) {
      for (const char *flag :
           {"--dump-logits", "--dump-prompt-logits", "--explain", "--truncate",
            "--num-beams", "--n", "--num-return-sequences", "--length-penalty",
            "--early-stopping"})
        if (app.count(flag))
          throw Error(std::string(flag) + " is not supported with "
                                          "--prompts-file");
      OpenedPlan opened = openPlan(o->plan);
      BatchDefaults d{o->maxNewTokens, o->sampling, o->stops, o->ignoreEos,
                      makeGrammar(o->grammar, opened)};
      return runPromptsFile(o->promptsFile, opened, o->engine, o->serving,
                            o->spec, d, o->json, o->stats);
    }
    for (const char *flag :
         {"--max-num-seqs", "--max-num-batched-tokens", "--no-prefix-cache"})
      if (app.count(flag))
        throw Error(std::string(flag) + " applies to --prompts-file runs");
    if (o->prompt.empty() && o->promptIds.empty())
      throw Error("give a prompt: --prompt TEXT, --prompt-ids 1,2,3 or "
                  "--prompts-file FILE.jsonl");
    OpenedPlan opened = openPlan(o->plan);
    const Plan *plan = opened.plan.get();
    const tok::Tokenizer *tokenizer = opened.tokenizer.get();
    const auto grammar = makeGrammar(o->grammar, opened);
    std::vector<int32_t> prompt;
    if (!o->promptIds.empty()) {
      prompt = parseIds(o->promptIds, "--prompt-ids");
    } else {
      if (!tokenizer)
        throw Error(o->plan + ": the plan has no tokenizer; use --prompt-ids");
      prompt = tokenizer->encode(o->prompt, /*addSpecial=*/true);
    }
    EngineOptions eo;
    {
      EngineOptions pool = o->serving.engineOptions();
      eo.kvCacheBytes = pool.kvCacheBytes;
      eo.kvCacheBlocks = pool.kvCacheBlocks;
    }
    if (many->wanted()) {
      if (!o->dumpLogits.empty() || !o->dumpAllLogits.empty())
        throw Error("--dump-logits and --dump-prompt-logits are not "
                    "supported with --num-beams or --n");
      if (!o->explain.empty() || !o->truncate.empty())
        throw Error("--explain and --truncate are not supported with "
                    "--num-beams or --n");
      eo.maxSequences = std::max({1, many->beams, many->n});
      std::unique_ptr<Engine> engine = opened.engine(o->engine, eo);
      Speculation spec =
          makeSpeculation(o->spec, opened, *engine, o->engine, eo.maxSequences);
      ManyRun r{prompt,
                o->maxNewTokens,
                o->sampling,
                o->stops,
                o->ignoreEos ? std::vector<int64_t>{}
                             : plan->config().eosTokenIds,
                o->json,
                o->stats,
                spec,
                grammar};
      return runMany(*many, r, *engine, tokenizer);
    }
    std::unique_ptr<Engine> enginePtr = opened.engine(o->engine, eo);
    Engine &engine = *enginePtr;
    Speculation spec = makeSpeculation(o->spec, opened, engine, o->engine, 1);

    GenerateOptions go;
    go.maxNewTokens = o->maxNewTokens;
    go.sampling = o->sampling;
    go.stops = o->stops;
    if (!o->ignoreEos)
      go.eosIds = plan->config().eosTokenIds;
    go.keepPromptLogits = !o->dumpLogits.empty();
    go.keepAllPromptLogits = !o->dumpAllLogits.empty();
    go.truncateLeft = o->truncate == "left";
    go.proposer = spec.get();
    go.speculative = spec.options;
    go.grammar = grammar;
    const bool explain = !o->explain.empty();
    const bool explainJson = o->explain == "json";
    if (explain)
      go.onStep = [&](const StepTrace &s) {
        std::string out = explainJson ? explainStepJson(s, tokenizer) + "\n"
                                      : explainStepText(s, tokenizer);
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fflush(stdout);
      };
    auto onText = [&](const std::string &s) {
      // --explain shows each token in its step; the text comes at the end.
      if (!o->json && !explain) {
        std::fwrite(s.data(), 1, s.size(), stdout);
        std::fflush(stdout);
      }
    };
    GenerateResult r = generate(engine, tokenizer, prompt, go, onText);
    if (!o->dumpLogits.empty())
      writeFile(o->dumpLogits, r.promptLogits.data(),
                r.promptLogits.size() * sizeof(float));
    if (!o->dumpAllLogits.empty())
      writeFile(o->dumpAllLogits, r.allPromptLogits.data(),
                r.allPromptLogits.size() * sizeof(float));
    if (explain) {
      std::string out = explainJson ? explainSummaryJson(r, engine) + "\n"
                                    : explainSummaryText(r, engine) +
                                          "  text: " + r.text + "\n";
      std::fwrite(out.data(), 1, out.size(), stdout);
    }
    if (o->json) {
      nlohmann::json j = {
          {"prompt_ids", r.promptIds},
          {"output_ids", r.outputIds},
          {"text", r.text},
          {"finish_reason", finishReasonName(r.finishReason)},
          {"stats", statsJson(r.metrics, engine, spec.options)}};
      std::printf("%s\n", j.dump().c_str());
    } else if (!explain) {
      std::printf("\n");
      if (!tokenizer) {
        std::string s;
        for (int32_t id : r.outputIds)
          s += (s.empty() ? "" : ",") + std::to_string(id);
        std::printf("output ids: %s\n", s.c_str());
      }
    }
    if (o->stats) {
      printStats(r.metrics, engine, spec.options);
      if (grammar)
        std::fputs(grammarStatsText(*grammar).c_str(), stderr);
    }
    return 0;
  };
}

} // namespace llmc::cli
