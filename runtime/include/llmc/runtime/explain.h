//===- explain.h - llmc run --explain: generation step by step -*- C++ -*-===//
//
// Formats the StepTrace that generate() reports for each step, for people
// learning how inference works (text) and for tools (JSON Lines: one object
// per step, then one summary object with "type": "summary").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/generate.h"

#include <string>

namespace llmc {

/// A few lines: the phase, the tokens fed, the KV-cache positions after the
/// step, the raw top candidates, each processor's before/after, the choice
/// and, on the last step, why generation stopped. `tokenizer` may be null.
std::string explainStepText(const StepTrace &step,
                            const tok::Tokenizer *tokenizer);
/// One JSON object on one line (no trailing newline), "type": "step".
std::string explainStepJson(const StepTrace &step,
                            const tok::Tokenizer *tokenizer);

/// TTFT, TPOT and the KV-cache bytes with the formula written out.
std::string explainSummaryText(const GenerateResult &result,
                               const Engine &engine);
/// One JSON object on one line, "type": "summary".
std::string explainSummaryJson(const GenerateResult &result,
                               const Engine &engine);

/// What a finish reason means, for people: Eos -> "an end-of-sequence
/// token was chosen", ...
std::string finishReasonText(FinishReason reason);

} // namespace llmc
