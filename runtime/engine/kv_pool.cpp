//===- kv_pool.cpp - How big an engine's KV pools are ---------------------===//
#include "llmc/runtime/kv_pool.h"

#include "llmc/runtime/engine.h"
#include "llmc/runtime/speculative.h"
#include "llmc/support/error.h"
#include "llmc/support/memory.h"

#include <algorithm>
#include <climits>
#include <cstddef>

namespace llmc {

int64_t planContext(const Plan &plan, const EngineOptions &o) {
  int64_t ctx =
      o.contextLength > 0 ? o.contextLength : plan.config().contextLength;
  if (ctx <= 0)
    throw Error(plan.path() + ": the plan has no context length");
  return ctx;
}

llmc_dtype kvDtypeOf(const Plan &plan, const EngineOptions &o) {
  return o.kvDtype ? *o.kvDtype : plan.config().kvDtype;
}

bool takesSlidingPool(const llmc_backend_api &api) {
  return api.abi_minor >= 6 &&
         api.struct_size >= offsetof(llmc_backend_api, kv_copy_sliding_block) +
                                sizeof(api.kv_copy_sliding_block) &&
         api.kv_copy_sliding_block != nullptr;
}

int64_t KvPoolPlan::bytes() const {
  return fullBlockBytes * options.numBlocks +
         slidingBlockBytes * options.slidingBlocks;
}

int64_t KvPoolPlan::bytesFor(int64_t tokens) const {
  // Per token, as a run counts them; the sliding layers' for the tokens
  // still in their blocks.
  const int64_t bs = options.blockSize;
  int64_t held = tokens;
  if (options.slidingBlocks > 0)
    held = tokens - ((tokens + bs - 1) / bs -
                     slidingBlocksHeld(tokens, options.window, bs)) *
                        bs;
  return fullBlockBytes / bs * tokens + slidingBlockBytes / bs * held;
}

namespace {

/// K and V bytes of one block of `layers` layers.
int64_t blockBytes(const Plan &plan, llmc_dtype dtype, int64_t blockSize,
                   int64_t layers) {
  const PlanConfig &c = plan.config();
  return 2 * layers *
         int64_t(llmc_kv_block_bytes(dtype, uint32_t(blockSize),
                                     uint32_t(c.rankKvHeads()),
                                     uint32_t(c.headDim)));
}

} // namespace

KvPoolPlan planKvPool(const Plan &plan, const EngineOptions &o,
                      const LoadedBackend &backend) {
  if (o.blockSize <= 0)
    throw Error("--block-size must be positive, got " +
                std::to_string(o.blockSize));
  const int64_t bs = o.blockSize;
  const llmc_dtype dtype = kvDtypeOf(plan, o);
  const int64_t context = planContext(plan, o);
  const int64_t seqs = std::max(1, o.maxSequences);
  KvPoolPlan p;
  if (backend.api && takesSlidingPool(*backend.api))
    p.sliding = slidingLayers(plan, context);
  const int64_t layers = plan.config().numLayers;
  const int64_t slidingLayers = p.sliding.count();
  p.fullBlockBytes = blockBytes(plan, dtype, bs, layers - slidingLayers);
  p.slidingBlockBytes = blockBytes(plan, dtype, bs, slidingLayers);
  const int64_t allBytes = std::max<int64_t>(
      blockBytes(plan, dtype, bs, layers), 1); // a block of every layer

  // The sliding pool a run wants for n sequences: each one's window (and
  // the slack a rollback may cut back into) plus one step's worth of new
  // tokens; never more than the full pool, whose blocks it shadows, so it
  // is never the one that runs short where the full pool would not.
  static_assert(kSlidingSlackTokens >= spec::kMaxSpeculativeTokens);
  const int64_t perSeq =
      (p.sliding.window + kSlidingSlackTokens + bs - 1) / bs + 2;
  // A step of the scheduler's or of Engine::prefill's chunks.
  const int64_t stepBlocks =
      (std::max({1, o.maxStepTokens, o.prefillChunk}) + bs - 1) / bs;
  const int64_t contextBlocks = (context + bs - 1) / bs;
  auto wanted = [&](int64_t n) { return n * perSeq + stepBlocks + 1; };
  // For a full pool of `full` blocks: room for the sequences of the whole
  // context it holds (maxSequences at most).
  auto slidingFor = [&](int64_t full) {
    if (slidingLayers == 0)
      return int64_t(0);
    const int64_t n = std::clamp<int64_t>(full / contextBlocks, 1, seqs);
    return std::min(full + 1, wanted(n));
  };
  // Both pools in `bytes`: as many whole-context sequences as fit (up to
  // maxSequences) get their windows; the rest is full blocks.
  int64_t slidingInBytes = 0;
  auto fullIn = [&](int64_t bytes) -> int64_t {
    if (slidingLayers == 0)
      return bytes / allBytes;
    if (p.fullBlockBytes == 0) { // every layer slides: all of it
      slidingInBytes = std::max<int64_t>(2, bytes / p.slidingBlockBytes);
      return slidingInBytes - 1;
    }
    const int64_t n = std::clamp<int64_t>(
        (bytes - (stepBlocks + 1) * p.slidingBlockBytes) /
            (contextBlocks * p.fullBlockBytes + perSeq * p.slidingBlockBytes),
        1, seqs);
    slidingInBytes = wanted(n);
    int64_t full =
        (bytes - slidingInBytes * p.slidingBlockBytes) / p.fullBlockBytes;
    if (full + 1 < slidingInBytes) { // the full pool is the smaller: pair
      full = (bytes - p.slidingBlockBytes) /
             (p.fullBlockBytes + p.slidingBlockBytes);
      slidingInBytes = full + 1;
    }
    return full;
  };

  int64_t blocks;
  bool fromBytes = false; // blocks came from fullIn: slidingInBytes holds
  if (o.kvCacheBlocks > 0) {
    blocks = o.kvCacheBlocks;
    p.origin = "--kv-cache-blocks";
  } else if (o.kvCacheBytes > 0) {
    blocks = fullIn(o.kvCacheBytes);
    fromBytes = true;
    p.origin = "--kv-cache-memory";
    if (blocks < 1)
      throw Error("--kv-cache-memory " + std::to_string(o.kvCacheBytes) +
                  " bytes holds no KV block: one block of " +
                  std::to_string(bs) + " tokens takes " +
                  std::to_string(allBytes) + " bytes with this plan's " +
                  llmc_kv_dtype_name(dtype) + " KV cache");
  } else {
    blocks = (context + bs - 1) / bs * seqs;
    p.origin = "default (" + std::to_string(seqs) + " x the context)";
    // A device that reports its memory holds the pool there; the host's
    // available memory otherwise.
    int64_t memory =
        backend.devices().empty()
            ? 0
            : static_cast<int64_t>(backend.devices()[0].memory_bytes);
    const char *where = "of the GPU's memory";
    if (memory == 0) {
      memory = availableMemoryBytes();
      where = "of the available memory";
    }
    const int64_t share = static_cast<int64_t>(kDefaultKvMemoryShare *
                                               static_cast<double>(memory));
    const int64_t cap = fullIn(share);
    const int64_t need =
        p.fullBlockBytes * blocks + p.slidingBlockBytes * slidingFor(blocks);
    if (memory > 0 && cap >= 1 && need > share && cap < blocks) {
      blocks = cap;
      fromBytes = true;
      p.origin = "default (" +
                 std::to_string(static_cast<int>(kDefaultKvMemoryShare * 100)) +
                 "% " + where + ")";
    }
  }
  if (blocks > INT32_MAX / bs)
    throw Error("the KV cache of " + std::to_string(blocks) +
                " blocks is larger than llmc can address (" +
                std::to_string(INT32_MAX / bs) + " blocks of " +
                std::to_string(bs) + " tokens)");
  int64_t sliding = fromBytes ? slidingInBytes : slidingFor(blocks);
  if (slidingLayers > 0 && p.fullBlockBytes == 0) {
    // Every layer slides: the full pool only counts tokens (it costs
    // nothing); --kv-cache-blocks and memory all go to the sliding pool.
    if (o.kvCacheBlocks > 0)
      sliding = blocks + 1;
    blocks = std::max(blocks, contextBlocks * seqs);
  }
  p.options = {static_cast<int32_t>(std::min<int64_t>(blocks, INT32_MAX / bs)),
               o.blockSize, o.prefixCaching};
  if (slidingLayers > 0) {
    p.options.slidingBlocks =
        static_cast<int32_t>(std::min<int64_t>(sliding, INT32_MAX / bs));
    p.options.window = p.sliding.window;
  } else {
    p.fullBlockBytes = allBytes;
    p.sliding = {};
  }
  return p;
}

} // namespace llmc
