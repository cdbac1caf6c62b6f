//===- plan_info.h - What `llmc inspect PLAN` prints -----------*- C++ -*-===//
//
// A summary of a loaded plan: config, tokenizer, graphs (op counts, workspace
// formula), weights by dtype and the KV-cache cost per token, so a user can
// size a deployment before running it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/plan.h"

#include <optional>
#include <string>

namespace llmc {

/// The KV cache a deployment would run with (llmc inspect's --kv-dtype and
/// --kv-cache-memory).
struct DescribeOptions {
  std::optional<llmc_dtype> kvDtype; // unset: the plan's
  int64_t kvCacheBytes = 0;          // 0: say nothing about a budget
  int64_t contextLength = 0;         // 0: the plan's (inspect --context)
};
/// Tokens fitting a budget are counted in whole blocks of this many
/// (the runtime's default --block-size).
inline constexpr uint64_t kDescribeBlockSize = 16;

/// Human-readable text, or (json = true) the same facts as a JSON object.
std::string describePlan(const Plan &plan, bool json = false,
                         const DescribeOptions &options = {});

/// One weight by name: dtype, shape, bytes and, for float weights, the mean,
/// min, max and first `count` values as stored (after every conversion the
/// compiler made, e.g. Gemma's 1 + w). Throws llmc::Error for an unknown name.
std::string describeWeight(const Plan &plan, const std::string &name,
                           size_t count = 8);

} // namespace llmc
