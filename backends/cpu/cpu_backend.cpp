//===- cpu_backend.cpp - The cpu plugin -----------------------------------===//
//
// The C entries come from backends/common (plugin.h); this file says which
// CPUs the kernels run on and sets up the OpenMP pool they share.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"
#include "execute.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <optional>

namespace llmc::cpu {
namespace {

// The kernels are compiled for these; running them elsewhere would SIGILL.
const char *missingIsa() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2"))
    return "avx2";
  if (!__builtin_cpu_supports("fma"))
    return "fma";
  return nullptr; // F16C comes with every AVX2 part
}

int defaultThreads() { return omp_get_num_procs(); }

struct PreparedGraph : common::PreparedGraph {
  Prepared p;
};

class CpuBackend : public common::HostBackend {
public:
  CpuBackend(int threads, Isa isa) {
    state_.threads = threads;
    useLevel(state_, isa);
    state_.allReduce = [this](const llmc_op_desc &op, Step &step) {
      allReduce(op, step);
    };
  }

  std::unique_ptr<common::PreparedGraph>
  prepare(const llmc_graph_desc &desc) override {
    auto prepared = std::make_unique<PreparedGraph>();
    prepareGraph(state_, desc, prepared->p);
    return prepared;
  }

  void execute(common::PreparedGraph &graph, common::KvPool *pool,
               const llmc_step_args &args) override {
    // The calling thread may not be the one that created us, and the
    // thread count is per thread in OpenMP.
    omp_set_num_threads(state_.threads);
    executeGraph(static_cast<PreparedGraph &>(graph).p, hostCache(pool), args,
                 profile_ ? &*profile_ : nullptr);
  }

  ~CpuBackend() override {
    if (profile_)
      std::fputs(profile_->report().c_str(), stderr);
  }

private:
  cpu::Backend state_;
  std::optional<OpProfile> profile_ =
      OpProfile::enabled() ? std::optional<OpProfile>(OpProfile())
                           : std::nullopt;
};

int32_t deviceCount() { return 1; }

void deviceInfo(int32_t, llmc_device_info &info) {
  if (const char *missing = missingIsa()) {
    std::snprintf(info.name, sizeof info.name, "CPU (%s)",
                  describeCpu().c_str());
    std::snprintf(info.reason, sizeof info.reason,
                  "the cpu backend needs %s, which this CPU lacks", missing);
    return;
  }
  // What the CPU has, and the kernel level llmc runs on it.
  try {
    std::snprintf(info.name, sizeof info.name,
                  "CPU (%s; kernels %s; %d threads)", describeCpu().c_str(),
                  isaName(selectIsa()), defaultThreads());
  } catch (const Error &e) {
    std::snprintf(info.name, sizeof info.name, "CPU (%s)",
                  describeCpu().c_str());
    std::snprintf(info.reason, sizeof info.reason, "%s", e.what());
    return;
  }
  info.usable = 1;
}

// Above ref: when both load, the fast one serves.
int32_t score() { return missingIsa() ? 0 : 100; }

std::unique_ptr<common::Backend> create(const llmc_backend_options &options) {
  if (const char *missing = missingIsa())
    throw Error(std::string("this CPU lacks ") + missing +
                ", which the cpu backend's kernels need");
  if (options.device != 0)
    throw InvalidArgument("there is only device 0, not " +
                          std::to_string(options.device));
  if (options.threads < 0)
    throw InvalidArgument("threads must not be negative");
  // OpenMP cannot start an unbounded pool (100000 threads crash libgomp),
  // and more threads than a few per core only slow the kernels down.
  const int limit = std::max(256, 4 * defaultThreads());
  if (options.threads > limit)
    throw InvalidArgument(std::to_string(options.threads) +
                          " threads asked for, but this machine has " +
                          std::to_string(defaultThreads()) +
                          " cores (the cpu backend takes at most " +
                          std::to_string(limit) + ")");
  int threads = options.threads > 0 ? options.threads : defaultThreads();
  Isa isa = selectIsa();
  omp_set_num_threads(threads);
  return std::make_unique<CpuBackend>(threads, isa);
}

const common::PluginDesc kPlugin = {"cpu",  deviceCount, deviceInfo, score,
                                    create, true,        true};

} // namespace
} // namespace llmc::cpu

LLMC_DEFINE_BACKEND_PLUGIN(llmc::cpu::kPlugin)
