//===- kv_pool.h - How big an engine's KV pools are -------------*- C++ -*-===//
//
// The pool a run asked for (--kv-cache-blocks, --kv-cache-memory, or room
// for maxSequences whole contexts within a share of memory) split between
// the full pool and, where the backend takes one, the sliding pool of the
// layers that read only their window (docs/kv-cache.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/backend_registry.h"
#include "llmc/runtime/kv_manager.h"
#include "llmc/runtime/plan.h"
#include "llmc/runtime/sliding_layers.h"

#include <cstdint>
#include <string>

namespace llmc {

struct EngineOptions;

struct KvPoolPlan {
  KvManager::Options options;
  std::string origin;    // "--kv-cache-memory", ... or "default (...)"
  SlidingLayers sliding; // count() 0: no sliding pool
  /// K and V of one block over the layers of each pool.
  int64_t fullBlockBytes = 0, slidingBlockBytes = 0;
  int64_t bytes() const;
  /// What one sequence of `tokens` holds, alone, after its last step.
  int64_t bytesFor(int64_t tokens) const;
};

KvPoolPlan planKvPool(const Plan &plan, const EngineOptions &options,
                      const LoadedBackend &backend);

/// The context a run gets (options.contextLength or the plan's), and its
/// KV dtype (options.kvDtype or the plan's).
int64_t planContext(const Plan &plan, const EngineOptions &options);
llmc_dtype kvDtypeOf(const Plan &plan, const EngineOptions &options);

/// Whether the plugin takes a sliding pool (ABI 1.6 kv_copy_sliding_block).
bool takesSlidingPool(const llmc_backend_api &api);

} // namespace llmc
