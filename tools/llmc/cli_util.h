//===- cli_util.h - What the subcommands share -----------------*- C++ -*-===//
//
// One definition of each flag that several subcommands take (the engine
// flags, the sampling flags) and of the set-up every subcommand that runs
// a plan starts with: open the plan, rebuild its tokenizer, discover the
// backends, make the engine.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/grammar/grammar_cache.h"
#include "llmc/runtime/engine.h"
#include "llmc/runtime/sampler.h"
#include "llmc/runtime/scheduler.h"
#include "llmc/runtime/speculative.h"
#include "llmc/tokenizer/tokenizer.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llmc::cli {

/// "1,2,3" -> {1, 2, 3}; errors name `flag` and the bad item.
std::vector<int32_t> parseIds(const std::string &text, const std::string &flag);

/// The q-quantile (0..1, nearest rank) of `v`; 0 when empty.
double percentile(std::vector<double> v, double q);

/// Writes `bytes` to `path`, naming it in errors.
void writeFile(const std::string &path, const void *bytes, size_t size);

/// --backend, --threads and --kv-dtype.
struct EngineFlags {
  std::string backend;
  int threads = 0;
  std::string kvDtype; // "" = the plan's
};
void addEngineFlags(CLI::App &app, EngineFlags &flags);

/// --temperature, --top-k, --top-p, --min-p, the three penalties, --seed.
/// The defaults are `params`' own (llmc run and chat default to greedy).
void addSamplingFlags(CLI::App &app, sample::SamplingParams &params);

/// "4GiB", "512M", "1.5G", "1000000": bytes (K, M, G, T and KiB.. are
/// powers of 1024, KB, MB, GB, TB powers of 1000). Errors name `flag`.
int64_t parseBytes(const std::string &text, const std::string &flag);

/// The scheduler and KV-pool flags of llmc run --prompts-file, bench
/// --concurrency and serve.
struct ServingFlags {
  int32_t maxNumSeqs = 64;
  int32_t maxNumBatchedTokens = 2048;
  std::string kvCacheMemory; // bytes, with a unit
  int64_t kvCacheBlocks = 0;
  bool noPrefixCache = false;

  /// The engine options these flags set (the pool and prefix caching).
  EngineOptions engineOptions() const;
  SchedulerOptions schedulerOptions() const;
};
void addServingFlags(CLI::App &app, ServingFlags &flags);

/// A plan opened for running: the plan, its tokenizer (null when it has
/// none) and the backends found.
struct OpenedPlan {
  std::unique_ptr<Plan> plan;
  std::unique_ptr<tok::Tokenizer> tokenizer;
  BackendRegistry registry;

  /// An engine on the flags' backend and threads (the rest from `options`).
  /// Under mpirun, on a tensor-parallel rank > 0, it follows rank 0's
  /// engine instead and then throws FollowerDone: such a rank prints
  /// nothing and returns.
  std::unique_ptr<Engine> engine(const EngineFlags &flags,
                                 EngineOptions options = {}) const;
  /// The tokenizer, or an error naming the plan and saying `why`.
  const tok::Tokenizer &requireTokenizer(const std::string &why) const;
  /// Compiled grammars over the tokenizer's vocabulary (the logits'
  /// width), made on first use; an error naming `why` without a tokenizer.
  /// Special tokens are left out of the vocabulary but for those inside
  /// `markers` (a chat template's, chat_format.h), read on first use.
  grammar::GrammarCache &
  grammars(const std::string &why,
           const std::vector<std::string> &markers = {}) const;

private:
  mutable std::unique_ptr<grammar::GrammarCache> grammars_;
};
/// Loads the plan's slices for this process's tensor-parallel rank (under
/// mpirun; rank 0 otherwise).
OpenedPlan openPlan(const std::string &path);

/// Thrown on a rank > 0 once rank 0's engine is gone: the command is done.
struct FollowerDone {};

/// --json-schema FILE, --grammar FILE and --json-object: structured output.
struct GrammarFlags {
  std::string jsonSchema, grammar;
  bool jsonObject = false;
  bool strictObjects = false; // --disable-additional-properties
};
void addGrammarFlags(CLI::App &app, GrammarFlags &flags);
/// The grammar the flags ask for (null: none). Errors name the file.
std::shared_ptr<const grammar::CompiledGrammar>
makeGrammar(const GrammarFlags &flags, const OpenedPlan &opened);
/// The --stats line of a grammar's compilation.
std::string grammarStatsText(const grammar::CompiledGrammar &g);

/// --speculative, --draft, --num-speculative-tokens, --ngram-max and
/// --no-adaptive-speculation.
struct SpeculativeFlags {
  std::string method, draft;
  int32_t numTokens = 4, ngramMax = 4;
  bool noAdaptive = false;
};
void addSpeculativeFlags(CLI::App &app, SpeculativeFlags &flags);

/// What the flags ask for: the options and the proposer (null when off); a
/// draft plan, its engine (on the target's backend, with room for
/// `maxSequences` sequences) and their checks (the same tokenizer) come
/// with it.
struct Speculation {
  spec::SpeculativeOptions options;
  std::unique_ptr<OpenedPlan> draft;
  std::unique_ptr<Engine> draftEngine;
  std::unique_ptr<spec::Proposer> proposer;
  spec::Proposer *get() const { return proposer.get(); }
};
Speculation makeSpeculation(const SpeculativeFlags &flags,
                            const OpenedPlan &target, const Engine &engine,
                            const EngineFlags &engineFlags,
                            int32_t maxSequences);

/// The --stats lines and the JSON of speculative decoding's counts.
std::string speculativeStatsText(const SpecStats &s,
                                 const spec::SpeculativeOptions &o);
nlohmann::json speculativeStatsJson(const SpecStats &s,
                                    const spec::SpeculativeOptions &o);

/// The --stats line of the sliding pool ("" without one).
std::string slidingPoolText(const Engine &engine);

} // namespace llmc::cli
