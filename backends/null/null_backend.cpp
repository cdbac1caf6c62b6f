//===- null_backend.cpp - The skeleton a new backend starts from ----------===//
//
// Copy backends/null to backends/NAME, rename the target in CMakeLists.txt,
// set the name in kPlugin, and replace each Unimplemented in turn. The
// runtime's errors tell you which entry it needs next, and test/conformance
// tells you when an op is right (it compares every op with the ref
// backend).
//
// backends/common does the rest, as for every backend:
//  - plugin.h writes the C entries: they check pointers, catch every
//    exception and turn it into a status and a last_error message, so
//    nothing unwinds across the C ABI. Throw common::InvalidArgument for bad
//    input, common::OutOfMemory when memory runs out, common::Unimplemented
//    for what you do not do yet.
//  - graph.h / op_checks.h: common::loadGraph checks a graph and every op's
//    operands and attributes, with the messages every backend gives.
//  - step.h: common::checkStepArgs checks a step's metadata (every slot,
//    block index and id) before anything runs; placeBuffers lays the
//    buffers out for T and B; checkAliasing enforces the in-place rules.
//  - host.h: a host-memory KV pool and step loop, if your device is the CPU.
//
//===----------------------------------------------------------------------===//
#include "common/plugin.h"

#include <cstdio>

namespace llmc::null {
namespace {

using common::Unimplemented;

// A graph prepared for your device: packed or uploaded weights, chosen
// kernels, the workspace.
struct Prepared : common::PreparedGraph {
  common::Graph graph;
};

class Backend : public common::Backend {
public:
  // Called before every entry on this backend (a GPU backend selects its
  // device here).
  void enter() override {}

  // Validate the graph (common::loadGraph) and do every per-graph cost once:
  // pack or upload weights (desc.weights[i].data is host memory that
  // outlives the prepared graph), choose kernels, size the workspace from
  // workspace_{t,b,c}.
  std::unique_ptr<common::PreparedGraph>
  prepare(const llmc_graph_desc &) override {
    throw Unimplemented("prepare is not implemented");
  }

  // Allocate the paged KV pool: per layer, K and V each [num_blocks,
  // block_size, kv_heads, head_dim] in desc.dtype (vLLM's layout).
  std::unique_ptr<common::KvPool>
  createKvCache(const llmc_kv_cache_desc &) override {
    throw Unimplemented("kv_create is not implemented");
  }

  // Copy block src to block dst in every layer, K and V (copy-on-write when
  // sequences that shared a prefix diverge).
  void copyKvBlock(common::KvPool &, int32_t, int32_t, bool) override {
    throw Unimplemented("kv_copy_block is not implemented");
  }

  // Run one step: common::checkStepArgs, place the buffers for T and B, run
  // the ops in order, copy args.num_logits rows of the logits buffer to
  // args.logits.
  void execute(common::PreparedGraph &, common::KvPool *,
               const llmc_step_args &) override {
    throw Unimplemented("execute is not implemented");
  }
};

// How many devices this build can see. Report devices that are present but
// unusable too (say, a GPU with too old a driver): the user is told why.
int32_t deviceCount() { return 1; }

// Fill in `info` for one device. usable = 0 with a reason keeps the runtime
// from choosing it while `llmc` can still explain the choice.
void deviceInfo(int32_t, llmc_device_info &info) {
  std::snprintf(info.name, sizeof info.name, "null device");
  std::snprintf(info.reason, sizeof info.reason,
                "the null backend is a template and runs nothing");
}

// Optional: when several builds of one backend load (cpu-avx512, cpu-amx),
// the highest score that runs on this machine wins.
int32_t score() { return 0; }

// Open options.device with options.threads worker threads (0 = one per core).
std::unique_ptr<common::Backend> create(const llmc_backend_options &) {
  throw Unimplemented("create is not implemented (the null backend is a "
                      "template)");
}

const common::PluginDesc kPlugin = {"null", deviceCount, deviceInfo, score,
                                    create};

} // namespace
} // namespace llmc::null

// The one exported symbol: the ABI table, or NULL for a host whose ABI major
// is too old.
LLMC_DEFINE_BACKEND_PLUGIN(llmc::null::kPlugin)
