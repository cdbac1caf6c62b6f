//===- sliding_layers.h - Which layers need only their window ---*- C++ -*-===//
//
// A layer whose attention reads only the last `window` positions (Mistral,
// Gemma 2/3's local layers, gpt-oss) never needs the K/V of older ones: the
// engine keeps such layers in a pool of their own and frees what left the
// window (docs/kv-cache.md). Read from the plan's attention ops, the truth
// a backend runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/plan.h"

#include <cstdint>
#include <vector>

namespace llmc {

struct SlidingLayers {
  std::vector<uint8_t> layers; // [numLayers]: 1 = reads only its window
  int64_t window = 0;          // the largest of their windows
  int64_t count() const;
};

/// The layers of `plan` whose window is shorter than `context` (a window
/// the context never outgrows frees nothing).
SlidingLayers slidingLayers(const Plan &plan, int64_t context);

} // namespace llmc
