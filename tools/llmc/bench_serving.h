//===- bench_serving.h - llmc bench --concurrency ---------------*- C++ -*-===//
#pragma once

#include "cli_util.h"

#include <string>
#include <vector>

namespace llmc::cli {

struct ServingBenchOptions {
  std::vector<int32_t> concurrency; // 1 is added as the baseline
  int32_t requests = 32;
  int64_t maxPromptLen = 512, maxGenLen = 256;
  uint32_t seed = 1;
  bool json = false;
};

/// A fixed mixed workload through the scheduler at each concurrency
/// (closed loop: a finished request is replaced by the next), against the
/// one-at-a-time run in the same process. Prints a table or one JSON
/// object.
int runServingBench(const OpenedPlan &opened, const EngineFlags &engine,
                    const ServingFlags &serving,
                    const ServingBenchOptions &options);

} // namespace llmc::cli
