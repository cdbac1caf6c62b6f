//===- prompts_file.h - llmc run --prompts-file: offline batches -*- C++
//-*-===//
#pragma once

#include "cli_util.h"

#include <string>
#include <vector>

namespace llmc::cli {

/// What a line does not set: the flags of llmc run.
struct BatchDefaults {
  int64_t maxNewTokens = 128;
  sample::SamplingParams sampling;
  std::vector<std::string> stops;
  bool ignoreEos = false;
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
};

/// Runs every request of a JSON Lines file through the scheduler together
/// and prints each result in input order. Each line is an object with
/// "prompt" (text) or "prompt_ids" (ids) and optionally max_new_tokens,
/// temperature, top_k, top_p, min_p, repetition_penalty, presence_penalty,
/// frequency_penalty, seed, stop (a list), ignore_eos, response_format
/// (OpenAI's json_object / json_schema; disable_additional_properties as the
/// server's) and grammar (GBNF text). A malformed line is an error naming
/// its line number and the field; the other requests still run. Returns the
/// exit code (1 if any line failed).
int runPromptsFile(const std::string &file, const OpenedPlan &opened,
                   const EngineFlags &engineFlags, const ServingFlags &serving,
                   const SpeculativeFlags &spec, const BatchDefaults &defaults,
                   bool json, bool stats);

} // namespace llmc::cli
