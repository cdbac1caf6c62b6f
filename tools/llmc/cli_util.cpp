//===- cli_util.cpp - What the subcommands share --------------------------===//
#include "cli_util.h"

#include "llmc/runtime/plan_tokenizer.h"
#include "llmc/support/error.h"

#include <cerrno>
#include <charconv>
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

OpenedPlan openPlan(const std::string &path) {
  OpenedPlan o;
  o.plan = Plan::load(path);
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
  return std::make_unique<Engine>(*plan, registry, options);
}

const tok::Tokenizer &OpenedPlan::requireTokenizer(const std::string &why) const {
  if (!tokenizer)
    throw Error(plan->path() + ": the plan has no tokenizer, which " + why +
                " needs");
  return *tokenizer;
}

} // namespace llmc::cli
