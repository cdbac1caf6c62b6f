//===- prompts_file.cpp - llmc run --prompts-file: offline batches --------===//
//
// What vLLM's LLM.generate gives: many prompts in, all of them in the
// scheduler at once, one result each out, in order.
//
//===----------------------------------------------------------------------===//
#include "prompts_file.h"

#include "llmc/runtime/scheduler.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include "llmc/grammar/response_format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <optional>

namespace llmc::cli {
namespace {

using json = nlohmann::ordered_json;

const char *typeName(const json &v) {
  switch (v.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "a boolean";
  case json::value_t::string:
    return "a string";
  case json::value_t::array:
    return "a list";
  case json::value_t::object:
    return "an object";
  default:
    return "a number";
  }
}

[[noreturn]] void bad(const std::string &field, const std::string &what,
                      const json &v) {
  throw Error("\"" + field + "\" must be " + what + ", got " + typeName(v) +
              (v.is_primitive() ? " " + v.dump() : std::string()));
}

float number(const json &line, const char *field, float fallback) {
  if (!line.contains(field))
    return fallback;
  const json &v = line[field];
  if (!v.is_number())
    bad(field, "a number", v);
  return v.get<float>();
}

template <typename Int>
Int integer(const json &line, const char *field, Int fallback) {
  if (!line.contains(field))
    return fallback;
  const json &v = line[field];
  if (!v.is_number_integer())
    bad(field, "an integer", v);
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<Int>::max()))
      bad(field, "an integer in range", v);
    return static_cast<Int>(u);
  }
  auto i = v.get<int64_t>();
  if (i < static_cast<int64_t>(std::numeric_limits<Int>::min()) ||
      (i > 0 && static_cast<uint64_t>(i) >
                    static_cast<uint64_t>(std::numeric_limits<Int>::max())))
    bad(field, "an integer in range", v);
  return static_cast<Int>(i);
}

/// One line of the file as a request, or an error naming the field.
ScheduledRequest parseLine(const std::string &text, const OpenedPlan &opened,
                           const BatchDefaults &d) {
  json line = json::parse(text, nullptr, false);
  if (line.is_discarded())
    throw Error("not valid JSON");
  if (!line.is_object())
    throw Error("expected a JSON object, got " + std::string(typeName(line)));
  static const char *known[] = {"prompt",
                                "prompt_ids",
                                "max_new_tokens",
                                "temperature",
                                "top_k",
                                "top_p",
                                "min_p",
                                "repetition_penalty",
                                "presence_penalty",
                                "frequency_penalty",
                                "seed",
                                "stop",
                                "ignore_eos",
                                "response_format",
                                "disable_additional_properties",
                                "grammar"};
  for (const auto &[key, value] : line.items())
    if (std::find_if(std::begin(known), std::end(known), [&](const char *k) {
          return key == k;
        }) == std::end(known))
      throw Error("unknown field \"" + key + "\"");

  ScheduledRequest r;
  const bool hasText = line.contains("prompt"),
             hasIds = line.contains("prompt_ids");
  if (hasText && hasIds)
    throw Error("give \"prompt\" or \"prompt_ids\", not both");
  if (!hasText && !hasIds)
    throw Error("missing \"prompt\" (text) or \"prompt_ids\" (token ids)");
  if (hasText) {
    if (!line["prompt"].is_string())
      bad("prompt", "a string", line["prompt"]);
    r.prompt = opened.requireTokenizer("\"prompt\" text")
                   .encode(line["prompt"].get<std::string>(), true);
  } else {
    const json &ids = line["prompt_ids"];
    if (!ids.is_array())
      bad("prompt_ids", "a list of token ids", ids);
    for (const json &id : ids) {
      if (!id.is_number_integer())
        bad("prompt_ids", "a list of token ids", id);
      r.prompt.push_back(
          integer<int32_t>(json{{"prompt_ids", id}}, "prompt_ids", 0));
    }
  }
  RequestOptions &o = r.options;
  o.maxNewTokens = integer<int64_t>(line, "max_new_tokens", d.maxNewTokens);
  sample::SamplingParams &p = o.sampling;
  p = d.sampling;
  p.temperature = number(line, "temperature", p.temperature);
  p.topK = integer<int>(line, "top_k", p.topK);
  p.topP = number(line, "top_p", p.topP);
  p.minP = number(line, "min_p", p.minP);
  p.repetitionPenalty = number(line, "repetition_penalty", p.repetitionPenalty);
  p.presencePenalty = number(line, "presence_penalty", p.presencePenalty);
  p.frequencyPenalty = number(line, "frequency_penalty", p.frequencyPenalty);
  p.seed = integer<uint64_t>(line, "seed", p.seed);
  o.stops = d.stops;
  if (line.contains("stop")) {
    const json &stop = line["stop"];
    o.stops.clear();
    if (stop.is_string())
      o.stops.push_back(stop.get<std::string>());
    else if (stop.is_array())
      for (const json &s : stop) {
        if (!s.is_string())
          bad("stop", "a list of strings", s);
        o.stops.push_back(s.get<std::string>());
      }
    else
      bad("stop", "a list of strings", stop);
  }
  bool ignoreEos = d.ignoreEos;
  if (line.contains("ignore_eos")) {
    if (!line["ignore_eos"].is_boolean())
      bad("ignore_eos", "true or false", line["ignore_eos"]);
    ignoreEos = line["ignore_eos"].get<bool>();
  }
  if (!ignoreEos)
    o.eosIds = opened.plan->config().eosTokenIds;
  o.grammar = d.grammar;
  if (line.contains("response_format") && line.contains("grammar"))
    throw Error("give \"response_format\" or \"grammar\", not both");
  if (line.contains("response_format")) {
    auto source = grammar::parseResponseFormat(line["response_format"]);
    grammar::JsonSchemaOptions options{.strictObjects =
                                           source && source->strict};
    if (line.contains("disable_additional_properties")) {
      if (!line["disable_additional_properties"].is_boolean())
        bad("disable_additional_properties", "true or false",
            line["disable_additional_properties"]);
      options.strictObjects = line["disable_additional_properties"].get<bool>();
    }
    o.grammar =
        source ? opened.grammars("\"response_format\"")
                     .get(source->kind, source->text, source->origin, options)
               : nullptr;
  }
  if (line.contains("grammar")) {
    if (!line["grammar"].is_string())
      bad("grammar", "GBNF text", line["grammar"]);
    o.grammar = opened.grammars("\"grammar\"")
                    .get(grammar::SourceKind::Gbnf,
                         line["grammar"].get<std::string>(), "grammar");
  }
  o.validate(sample::ParamNames::Json);
  return r;
}

} // namespace

int runPromptsFile(const std::string &file, const OpenedPlan &opened,
                   const EngineFlags &engineFlags, const ServingFlags &serving,
                   const SpeculativeFlags &specFlags,
                   const BatchDefaults &defaults, bool json, bool stats) {
  std::string text = readFile(file);
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos)
      nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  // Blank lines are skipped but keep the numbering of the others.
  size_t requests = 0;
  for (const std::string &l : lines)
    requests += l.find_first_not_of(" \t\r") != std::string::npos;
  if (requests == 0)
    throw Error(file + ": no requests (the file is empty; expected one JSON "
                       "object per line)");

  SchedulerOptions so = serving.schedulerOptions();
  std::unique_ptr<Engine> engine =
      opened.engine(engineFlags, serving.engineOptions());
  Speculation spec =
      makeSpeculation(specFlags, opened, *engine, engineFlags, so.maxNumSeqs);
  so.proposer = spec.get();
  so.speculative = spec.options;
  Scheduler scheduler(*engine, opened.tokenizer.get(), so);

  struct Slot {
    size_t line;
    std::vector<int32_t> prompt;
    std::optional<RequestResult> result;
    std::string error;
  };
  std::vector<Slot> slots;
  int failed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find_first_not_of(" \t\r") == std::string::npos)
      continue;
    Slot slot{i + 1, {}, std::nullopt, {}};
    const size_t index = slots.size();
    try {
      ScheduledRequest r = parseLine(lines[i], opened, defaults);
      r.id = index;
      r.arrival = start;
      slot.prompt = r.prompt;
      r.onFinish = [&slots, index](RequestResult res) {
        slots[index].result = std::move(res);
      };
      slots.push_back(std::move(slot));
      scheduler.add(std::move(r));
    } catch (const Error &e) {
      if (slots.size() == index)
        slots.push_back(std::move(slot));
      slots[index].error = file + ":" + std::to_string(i + 1) + ": " + e.what();
      std::fprintf(stderr, "llmc: error: %s\n", slots[index].error.c_str());
      ++failed;
    }
  }
  scheduler.runToCompletion();
  engine->checkIdle();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  int64_t outputTokens = 0;
  std::vector<double> ttft, tpot;
  SpecStats specTotal;
  for (size_t i = 0; i < slots.size(); ++i) {
    const Slot &s = slots[i];
    if (!s.result) {
      if (json)
        std::printf("%s\n", nlohmann::json({{"index", i}, {"error", s.error}})
                                .dump(-1, ' ', false,
                                      nlohmann::json::error_handler_t::replace)
                                .c_str());
      continue;
    }
    const RequestResult &r = *s.result;
    const SequenceOutput &out = r.outputs.at(0);
    const GenerationMetrics &m = r.metrics;
    outputTokens += static_cast<int64_t>(out.outputIds.size());
    specTotal += m.speculative;
    ttft.push_back(m.ttftSeconds * 1e3);
    if (out.outputIds.size() > 1)
      tpot.push_back(m.tpotSeconds * 1e3);
    if (json) {
      nlohmann::json st = {{"backend", engine->backendName()},
                           {"prompt_tokens", m.promptTokens},
                           {"generated_tokens", m.generatedTokens},
                           {"ttft_ms", m.ttftSeconds * 1e3},
                           {"tpot_ms", m.tpotSeconds * 1e3},
                           {"queue_ms", m.queueSeconds * 1e3},
                           {"cached_prompt_tokens", r.cachedPromptTokens},
                           {"preemptions", m.preemptions},
                           {"kv_bytes_per_token", m.kvBytesPerToken}};
      if (spec.options.enabled())
        st["speculative"] = speculativeStatsJson(m.speculative, spec.options);
      nlohmann::json j = {{"index", i},
                          {"prompt_ids", s.prompt},
                          {"output_ids", out.outputIds},
                          {"text", out.text},
                          {"finish_reason", finishReasonName(out.finishReason)},
                          {"stats", st}};
      std::printf("%s\n", j.dump(-1, ' ', false,
                                 nlohmann::json::error_handler_t::replace)
                              .c_str());
    } else {
      std::printf("--- request %zu (line %zu, %s)\n%s\n", i, s.line,
                  finishReasonName(out.finishReason), out.text.c_str());
    }
  }
  std::fflush(stdout);
  if (stats) {
    const SchedulerCounters &c = scheduler.counters();
    std::fprintf(
        stderr,
        "\n--- batch stats (%s backend)\n"
        "requests          %zu in %.2f s: %.2f requests/s, %.1f output "
        "tokens/s\n"
        "TTFT              p50 %.1f ms, p99 %.1f ms (queueing included)\n"
        "TPOT              p50 %.2f ms, p99 %.2f ms\n"
        "batch             %d sequences at most, %lld steps, %lld "
        "preemptions\n"
        "prefix cache      %lld of %lld prompt tokens (%.1f%%)\n"
        "KV cache          %d blocks of %d tokens = %.1f MiB (%s)\n",
        engine->backendName().c_str(), slots.size() - size_t(failed), seconds,
        seconds > 0
            ? static_cast<double>(slots.size() - size_t(failed)) / seconds
            : 0,
        seconds > 0 ? static_cast<double>(outputTokens) / seconds : 0,
        percentile(ttft, 0.5), percentile(ttft, 0.99), percentile(tpot, 0.5),
        percentile(tpot, 0.99), c.maxRunningSeqs,
        static_cast<long long>(c.steps), static_cast<long long>(c.preemptions),
        static_cast<long long>(c.prefixHitTokens),
        static_cast<long long>(c.prefixQueryTokens),
        c.prefixQueryTokens ? 100.0 * static_cast<double>(c.prefixHitTokens) /
                                  static_cast<double>(c.prefixQueryTokens)
                            : 0.0,
        engine->numBlocks(), engine->blockSize(),
        static_cast<double>(engine->kvPoolBytes()) / (1 << 20),
        engine->kvPoolOrigin().c_str());
    std::fputs(cli::slidingPoolText(*engine).c_str(), stderr);
    if (spec.options.enabled())
      std::fputs(speculativeStatsText(specTotal, spec.options).c_str(), stderr);
  }
  return failed ? 1 : 0;
}

} // namespace llmc::cli
