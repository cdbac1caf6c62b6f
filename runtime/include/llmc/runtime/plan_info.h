//===- plan_info.h - What `llmc inspect PLAN` prints -----------*- C++ -*-===//
//
// A summary of a loaded plan: config, tokenizer, graphs (op counts, workspace
// formula), weights by dtype and the KV-cache cost per token, so a user can
// size a deployment before running it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/plan.h"

#include <string>

namespace llmc {

/// Human-readable text, or (json = true) the same facts as a JSON object.
std::string describePlan(const Plan &plan, bool json = false);

} // namespace llmc
