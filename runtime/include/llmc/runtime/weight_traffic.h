//===- weight_traffic.h - What a plan's weights cost per token -*- C++ -*-===//
//
// The bytes of plan weights a decode step reads, read off the decode graph
// itself: every weight an op uses, except that an embedding table costs one
// row per token and a stack of experts costs the experts chosen. One
// answer for `llmc inspect`, `--stats`, `--explain` and `llmc bench`. Pure
// functions of a loaded plan; any thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/plan.h"

#include <cstdint>

namespace llmc {

struct WeightTraffic {
  uint64_t planBytes = 0;            // every weight of the plan
  uint64_t denseBytes = 0;           // decode weights read in full each step
  uint64_t expertBytes = 0;          // all experts' bytes (weights and scales)
  int64_t experts = 0, perToken = 0; // per MoE layer (0: dense)

  /// Bytes one decode step of `batch` sequences reads. With experts, a
  /// batch of one reads k of E experts per layer; a larger batch the
  /// experts its tokens chose, each once: E (1 - (1 - k/E)^batch) expected
  /// under uniform routing (an estimate: real routers are skewed, so
  /// fewer).
  uint64_t decodeBytes(int64_t batch = 1) const;
};

/// Throws llmc::Error when the plan has no decode graph.
WeightTraffic weightTraffic(const Plan &plan);

} // namespace llmc
