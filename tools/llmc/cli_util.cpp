//===- cli_util.cpp - What the subcommands share --------------------------===//
#include "cli_util.h"

#include "llmc/runtime/plan_tokenizer.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace llmc::cli {

std::vector<int32_t> parseIds(const std::string &text,
                              const std::string &flag) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos)
      comma = text.size();
    std::string item = text.substr(pos, comma - pos);
    while (!item.empty() && item.front() == ' ')
      item.erase(item.begin());
    while (!item.empty() && item.back() == ' ')
      item.pop_back();
    int32_t v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size())
      throw Error(flag + ": '" + item +
                  "' is not a token id (expected comma-separated integers "
                  "like 1,2,3)");
    ids.push_back(v);
    pos = comma + 1;
  }
  return ids;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

void writeFile(const std::string &path, const void *bytes, size_t size) {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw Error(path + ": cannot write: " + std::strerror(errno));
  out.write(static_cast<const char *>(bytes),
            static_cast<std::streamsize>(size));
  if (!out)
    throw Error(path + ": write failed");
}

void addEngineFlags(CLI::App &app, EngineFlags &flags) {
  app.add_option("--backend", flags.backend,
                 "Backend plugin (default: the plan's target if usable "
                 "here, else ref)");
  app.add_option("--threads", flags.threads,
                 "Threads (default: the backend's, for cpu one per core)");
  app.add_option("--kv-dtype", flags.kvDtype,
                 "KV-cache dtype: f32, bf16, f16, int8 (a scale per token "
                 "and kv head) or fp8 (e4m3, the same scales); default: the "
                 "plan's (llmc compile --kv-dtype)");
}

void addSamplingFlags(CLI::App &app, sample::SamplingParams &p) {
  app.add_option("--temperature", p.temperature, "0 = greedy")
      ->capture_default_str();
  app.add_option("--top-k", p.topK, "Keep the k most likely tokens (0 = off)");
  app.add_option("--top-p", p.topP, "Nucleus sampling mass in (0, 1]");
  app.add_option("--min-p", p.minP,
                 "Drop tokens below min-p x the top probability");
  app.add_option("--repetition-penalty", p.repetitionPenalty,
                 "HF repetition penalty (1 = off)");
  app.add_option("--presence-penalty", p.presencePenalty,
                 "OpenAI presence penalty in [-2, 2]");
  app.add_option("--frequency-penalty", p.frequencyPenalty,
                 "OpenAI frequency penalty in [-2, 2]");
  app.add_option("--seed", p.seed, "Sampling seed");
}

int64_t parseBytes(const std::string &text, const std::string &flag) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  std::string unit = text.substr(used);
  while (!unit.empty() && unit.front() == ' ')
    unit.erase(unit.begin());
  for (char &c : unit)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::pair<const char *, double> units[] = {
      {"", 1},
      {"B", 1},
      {"K", 1024.0},
      {"KIB", 1024.0},
      {"KB", 1e3},
      {"M", 1048576.0},
      {"MIB", 1048576.0},
      {"MB", 1e6},
      {"G", 1073741824.0},
      {"GIB", 1073741824.0},
      {"GB", 1e9},
      {"T", 1099511627776.0},
      {"TIB", 1099511627776.0},
      {"TB", 1e12}};
  for (const auto &[name, scale] : units)
    if (used > 0 && unit == name) {
      double bytes = value * scale;
      if (!(bytes >= 1) || bytes > 9.0e18)
        throw Error(flag + ": '" + text + "' is not a positive size in bytes");
      return static_cast<int64_t>(bytes);
    }
  throw Error(flag + ": '" + text +
              "' is not a size (expected a number of bytes with an optional "
              "unit: 4GiB, 512M, 2e9)");
}

EngineOptions ServingFlags::engineOptions() const {
  EngineOptions o;
  if (kvCacheBlocks < 0)
    throw Error("--kv-cache-blocks must be positive, got " +
                std::to_string(kvCacheBlocks));
  if (!kvCacheMemory.empty() && kvCacheBlocks > 0)
    throw Error("give --kv-cache-memory or --kv-cache-blocks, not both");
  if (!kvCacheMemory.empty())
    o.kvCacheBytes = parseBytes(kvCacheMemory, "--kv-cache-memory");
  o.kvCacheBlocks = kvCacheBlocks;
  o.maxSequences = std::max(1, maxNumSeqs);
  o.maxStepTokens = std::max(1, maxNumBatchedTokens);
  o.prefixCaching = !noPrefixCache;
  return o;
}

SchedulerOptions ServingFlags::schedulerOptions() const {
  SchedulerOptions o;
  o.maxNumSeqs = maxNumSeqs;
  o.maxNumBatchedTokens = maxNumBatchedTokens;
  o.validate();
  return o;
}

void addServingFlags(CLI::App &app, ServingFlags &flags) {
  app.add_option("--max-num-seqs", flags.maxNumSeqs,
                 "Sequences running at once (default 64)");
  app.add_option("--max-num-batched-tokens", flags.maxNumBatchedTokens,
                 "New tokens per engine step, decodes first, then prompt "
                 "chunks (default 2048)");
  app.add_option("--kv-cache-memory", flags.kvCacheMemory,
                 "KV cache size, e.g. 2GiB (default: --max-num-seqs full "
                 "contexts, at most 40% of the available memory)");
  app.add_option("--kv-cache-blocks", flags.kvCacheBlocks,
                 "KV cache size in blocks of 16 tokens");
  app.add_flag("--no-prefix-cache", flags.noPrefixCache,
               "Do not share cached prompt blocks between requests");
}

OpenedPlan openPlan(const std::string &path) {
  OpenedPlan o;
  PlanLoadOptions load;
  if (Communicator *comm = launched())
    load.rank = comm->rank();
  o.plan = Plan::load(path, load);
  o.tokenizer = tokenizerFromPlan(*o.plan);
  o.registry = BackendRegistry::discover();
  return o;
}

std::unique_ptr<Engine> OpenedPlan::engine(const EngineFlags &flags,
                                           EngineOptions options) const {
  if (flags.threads < 0)
    throw Error("--threads must not be negative, got " +
                std::to_string(flags.threads));
  options.backend = flags.backend;
  options.threads = flags.threads;
  if (!flags.kvDtype.empty())
    options.kvDtype = parseKvDtype(flags.kvDtype, "--kv-dtype");
  options.comm = launched();
  auto engine = std::make_unique<Engine>(*plan, registry, options);
  if (options.comm && options.comm->rank() > 0) {
    // mpirun hands SIGINT/SIGTERM to every rank; rank 0 ends the job (a
    // server drains first) and its engine releases the followers.
    std::signal(SIGINT, SIG_IGN);
    std::signal(SIGTERM, SIG_IGN);
    engine->follow();
    throw FollowerDone{};
  }
  return engine;
}

const tok::Tokenizer &
OpenedPlan::requireTokenizer(const std::string &why) const {
  if (!tokenizer)
    throw Error(plan->path() + ": the plan has no tokenizer, which " + why +
                " needs");
  return *tokenizer;
}

grammar::GrammarCache &
OpenedPlan::grammars(const std::string &why,
                     const std::vector<std::string> &markers) const {
  if (!grammars_) {
    const tok::Tokenizer &t = requireTokenizer(why);
    grammars_ = std::make_unique<grammar::GrammarCache>(
        std::make_shared<grammar::TokenVocabulary>(
            t, static_cast<int32_t>(plan->config().vocabSize), markers));
  }
  return *grammars_;
}

void addGrammarFlags(CLI::App &app, GrammarFlags &flags) {
  auto *schema = app.add_option(
      "--json-schema", flags.jsonSchema,
      "Structured output: the text is JSON valid under this JSON Schema file "
      "(docs/structured-output.md lists the keywords)");
  auto *gbnf = app.add_option("--grammar", flags.grammar,
                              "Structured output: the text follows this GBNF "
                              "grammar file (llama.cpp's format)");
  auto *object = app.add_flag("--json-object", flags.jsonObject,
                              "Structured output: the text is one JSON object "
                              "(OpenAI's {\"type\": \"json_object\"})");
  schema->excludes(gbnf)->excludes(object);
  gbnf->excludes(object);
  app.add_flag(
      "--disable-additional-properties", flags.strictObjects,
      "JSON Schema: an object schema that lists properties but has no "
      "additionalProperties takes only the listed keys (OpenAI's strict "
      "mode); by default other keys are allowed, as JSON Schema says");
}

std::shared_ptr<const grammar::CompiledGrammar>
makeGrammar(const GrammarFlags &flags, const OpenedPlan &opened) {
  using grammar::SourceKind;
  if (flags.jsonObject)
    return opened.grammars("--json-object")
        .get(SourceKind::JsonObject, "", "--json-object");
  const bool schema = !flags.jsonSchema.empty();
  const std::string &file = schema ? flags.jsonSchema : flags.grammar;
  if (file.empty())
    return nullptr;
  const std::string flag = schema ? "--json-schema" : "--grammar";
  std::string text;
  try {
    text = readFile(file);
  } catch (const Error &e) {
    throw Error(flag + ": " + e.what());
  }
  return opened.grammars(flag).get(
      schema ? SourceKind::JsonSchema : SourceKind::Gbnf, text, file,
      {.strictObjects = flags.strictObjects});
}

std::string grammarStatsText(const grammar::CompiledGrammar &g) {
  const grammar::CompileStats s = g.stats();
  char line[160];
  std::snprintf(line, sizeof line,
                "grammar           compiled in %.1f ms, %lld stack tops "
                "precomputed, %lld uncertain tokens\n",
                s.seconds * 1e3, static_cast<long long>(s.keys),
                static_cast<long long>(s.uncertainTokens));
  return line;
}

void addSpeculativeFlags(CLI::App &app, SpeculativeFlags &flags) {
  app.add_option("--speculative", flags.method,
                 "Speculative decoding: ngram (prompt lookup) or draft (a "
                 "smaller plan, --draft); greedy output is unchanged, sampled "
                 "output keeps its distribution")
      ->check(CLI::IsMember({"ngram", "draft"}));
  app.add_option("--draft", flags.draft,
                 "The draft plan for --speculative draft (the same "
                 "tokenizer as the target)");
  app.add_option("--num-speculative-tokens", flags.numTokens,
                 "Tokens proposed per verification, in [1, 16] (default 4)");
  app.add_option("--ngram-max", flags.ngramMax,
                 "Longest n-gram --speculative ngram looks up (default 4)");
  app.add_flag("--no-adaptive-speculation", flags.noAdaptive,
               "Keep speculating when acceptance is below break-even");
}

Speculation makeSpeculation(const SpeculativeFlags &flags,
                            const OpenedPlan &target, const Engine &engine,
                            const EngineFlags &engineFlags,
                            int32_t maxSequences) {
  Speculation s;
  if (flags.method.empty()) {
    if (!flags.draft.empty())
      throw Error("--draft needs --speculative draft");
    return s;
  }
  s.options.method = spec::parseMethod(flags.method);
  s.options.numTokens = flags.numTokens;
  s.options.ngramMax = flags.ngramMax;
  s.options.adaptive = !flags.noAdaptive;
  s.options.validate();
  if (s.options.method == spec::Method::Ngram) {
    if (!flags.draft.empty())
      throw Error("--draft is for --speculative draft, not ngram");
    s.proposer = std::make_unique<spec::NgramProposer>(flags.ngramMax);
    return s;
  }
  if (flags.draft.empty())
    throw Error("--speculative draft needs --draft PLAN");
  s.draft = std::make_unique<OpenedPlan>(openPlan(flags.draft));
  spec::checkDraftCompatible(*target.plan, *s.draft->plan);
  EngineFlags ef = engineFlags;
  ef.backend = engine.backendName(); // the target's, whatever chose it
  EngineOptions eo;
  eo.maxSequences = std::max(1, maxSequences);
  s.draftEngine = s.draft->engine(ef, eo);
  s.proposer = std::make_unique<spec::DraftProposer>(*s.draftEngine);
  return s;
}

std::string speculativeStatsText(const SpecStats &s,
                                 const spec::SpeculativeOptions &o) {
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "speculative       %s, k=%d: %lld proposed, %lld accepted (%.1f%%), "
      "%.2f tokens per verify step over %lld steps; %lld steps paused\n"
      "spec time         %.2f ms proposing, %.2f ms verifying\n",
      spec::methodName(o.method), o.numTokens,
      static_cast<long long>(s.proposed), static_cast<long long>(s.accepted),
      100.0 * s.acceptanceRate(), s.meanAcceptedLength(),
      static_cast<long long>(s.verifySteps),
      static_cast<long long>(s.pausedSteps), s.proposeSeconds * 1e3,
      s.verifySeconds * 1e3);
  return buf;
}

nlohmann::json speculativeStatsJson(const SpecStats &s,
                                    const spec::SpeculativeOptions &o) {
  return {{"method", spec::methodName(o.method)},
          {"num_speculative_tokens", o.numTokens},
          {"proposed_tokens", s.proposed},
          {"accepted_tokens", s.accepted},
          {"acceptance_rate", s.acceptanceRate()},
          {"mean_accepted_length", s.meanAcceptedLength()},
          {"verify_steps", s.verifySteps},
          {"paused_steps", s.pausedSteps},
          {"propose_ms", s.proposeSeconds * 1e3},
          {"verify_ms", s.verifySeconds * 1e3}};
}

std::string slidingPoolText(const Engine &engine) {
  const KvPoolPlan &p = engine.kvPool();
  if (p.options.slidingBlocks == 0)
    return "";
  char line[320];
  std::snprintf(
      line, sizeof line,
      "sliding KV pool   %d blocks for %lld of %lld layers (window %lld), "
      "%.1f MiB; %d held now; one sequence of the context holds %.1f MiB "
      "(%.1f MiB without it)\n",
      engine.kv().numSlidingBlocks(), static_cast<long long>(p.sliding.count()),
      static_cast<long long>(engine.config().numLayers),
      static_cast<long long>(p.sliding.window),
      static_cast<double>(p.slidingBlockBytes * p.options.slidingBlocks) /
          (1 << 20),
      engine.kv().usedSlidingBlocks(),
      static_cast<double>(p.bytesFor(engine.contextLength())) / (1 << 20),
      static_cast<double>(engine.kvBytesPerToken() * engine.contextLength()) /
          (1 << 20));
  return line;
}

} // namespace llmc::cli
