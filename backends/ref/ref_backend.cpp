//===- ref_backend.cpp - The ref plugin: one loop per op ------------------===//
//
// Prepare is backends/common's graph check; a step is common's host step
// loop calling the run* function of each op. One thread, whatever `threads`
// says.
//
//===----------------------------------------------------------------------===//
#include "ref.h"

#include <cstdio>

namespace llmc::ref {

namespace {

using RunFn = void (*)(const llmc_op_desc &, Step &);

const RunFn kRun[LLMC_OP_COUNT] = {
    runEmbedding,
    runRmsNorm,
    runAddRmsNorm,
    runLayerNorm,
    runLinear,
    runRope,
    runAdd,
    runMul,
    runSilu,
    runGelu,
    runSwiglu,
    runSlice,
    runKvWrite,
    runPrefillAttention,
    runDecodeAttention,
    runTakeRows,
    runScale,
    runSoftcap,
    runMoeGating,
    runExpertLinear,
    runMoeCombine,
    runExpertBias,
    nullptr, // ALL_REDUCE: the backend's communicator (execute)
};

struct Prepared : common::PreparedGraph {
  Graph graph;
  common::AlignedBuffer workspace;
};

class Backend : public common::HostBackend {
public:
  std::unique_ptr<common::PreparedGraph>
  prepare(const llmc_graph_desc &desc) override {
    auto p = std::make_unique<Prepared>();
    p->graph = common::loadGraph(desc);
    return p;
  }

  void execute(common::PreparedGraph &graph, common::KvPool *pool,
               const llmc_step_args &args) override {
    auto &p = static_cast<Prepared &>(graph);
    common::runHostStep(p.graph, p.workspace, hostCache(pool), args,
                        [&](size_t i, Step &step) {
                          const llmc_op_desc &op = p.graph.ops[i];
                          if (op.kind == LLMC_OP_ALL_REDUCE)
                            return allReduce(op, step);
                          kRun[op.kind](op, step);
                        });
  }
};

int32_t deviceCount() { return 1; }

void deviceInfo(int32_t, llmc_device_info &info) {
  std::snprintf(info.name, sizeof info.name, "CPU (reference kernels)");
  info.usable = 1;
}

std::unique_ptr<common::Backend> create(const llmc_backend_options &options) {
  if (options.device != 0)
    throw InvalidArgument("there is only device 0, not " +
                          std::to_string(options.device));
  return std::make_unique<Backend>();
}

// No score: one build of ref is as good as another.
const common::PluginDesc kPlugin = {"ref",  deviceCount, deviceInfo, nullptr,
                                    create, true,        true};

} // namespace
} // namespace llmc::ref

LLMC_DEFINE_BACKEND_PLUGIN(llmc::ref::kPlugin)
