//===- cuda_backend.cpp - The cuda plugin ---------------------------------===//
//
// The C entries come from backends/common (plugin.h). Without a GPU (or a
// driver) cudaGetDeviceCount fails; the plugin then reports one device that
// is not usable, with the CUDA message, and create fails with the same
// message. Any error from it counts as "no device".
//
//===----------------------------------------------------------------------===//
#include "cuda.h"

#include "common/plugin.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace llmc::cuda {
namespace {

/// The number of devices, or -1 with the reason (asked once: a missing
/// driver does not appear while the process runs).
int probe(std::string *reason) {
  static int count = -2;
  static std::string why;
  if (count == -2) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      why = std::string("no CUDA device (") + cudaGetErrorString(e) + ")";
      count = -1;
    } else if (n <= 0) {
      why = "no CUDA device (cudaGetDeviceCount found none)";
      count = -1;
    } else {
      count = n;
    }
  }
  if (reason)
    *reason = why;
  return count;
}

bool envFlag(const char *name, bool fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  return std::strcmp(v, "0") != 0;
}

int32_t deviceCount() {
  int n = probe(nullptr);
  return n > 0 ? n : 1; // an unusable device still reports itself
}

void deviceInfo(int32_t device, llmc_device_info &info) {
  std::string reason;
  int n = probe(&reason);
  if (n < 0) {
    std::snprintf(info.name, sizeof info.name, "CUDA");
    std::snprintf(info.reason, sizeof info.reason, "%s", reason.c_str());
    return;
  }
  cudaDeviceProp prop{};
  cudaError_t e = cudaGetDeviceProperties(&prop, device);
  if (e != cudaSuccess) {
    cudaGetLastError();
    std::snprintf(info.name, sizeof info.name, "CUDA device %d", device);
    std::snprintf(info.reason, sizeof info.reason, "no CUDA device (%s)",
                  cudaGetErrorString(e));
    return;
  }
  std::string name = std::string(prop.name).substr(0, 100) + " (sm_" +
                     std::to_string(prop.major) + std::to_string(prop.minor) +
                     ")";
  std::snprintf(info.name, sizeof info.name, "%s", name.c_str());
  info.memory_bytes = prop.totalGlobalMem;
  if (prop.major < 8) {
    std::snprintf(info.reason, sizeof info.reason,
                  "compute capability %d.%d: the plugin is built for sm_80 "
                  "and sm_90",
                  prop.major, prop.minor);
    return;
  }
  info.usable = 1;
}

struct PreparedGraph : common::PreparedGraph {
  Prepared p;
};

struct Pool : common::KvPool {
  cuda::KvPool pool;
};

class CudaBackend : public common::Backend {
public:
  // Every entry runs on the device this backend was created for.
  void enter() override { check(cudaSetDevice(b.device), "cudaSetDevice"); }

  bool supports(const llmc_op_desc &op, const llmc_graph_desc &graph) override {
    return supportsOp(op) && common::checksPass(op, graph);
  }

  std::unique_ptr<common::PreparedGraph>
  prepare(const llmc_graph_desc &desc) override {
    auto prepared = std::make_unique<PreparedGraph>();
    prepareGraph(b, desc, prepared->p);
    return prepared;
  }

  std::unique_ptr<common::KvPool>
  createKvCache(const llmc_kv_cache_desc &desc) override {
    auto pool = std::make_unique<Pool>();
    initKvPool(b, pool->pool, desc);
    return pool;
  }

  void copyKvBlock(common::KvPool &pool, int32_t src, int32_t dst,
                   bool sliding) override {
    cuda::copyKvBlock(b, static_cast<Pool &>(pool).pool, src, dst, sliding);
  }

  void execute(common::PreparedGraph &graph, common::KvPool *pool,
               const llmc_step_args &args) override {
    executeGraph(b, static_cast<PreparedGraph &>(graph).p,
                 pool ? &static_cast<Pool *>(pool)->pool : nullptr, args);
  }

  void setCommunicator(const llmc_communicator &comm) override {
    b.nccl = ncclOver(b, comm);
  }

  cuda::Backend b;
};

std::unique_ptr<common::Backend> create(const llmc_backend_options &options) {
  std::string reason;
  int n = probe(&reason);
  if (n < 0)
    throw Error(reason);
  int device = options.device;
  if (device < 0 || device >= n)
    throw InvalidArgument("there is no device " + std::to_string(device) +
                          " (found " + std::to_string(n) + ")");
  auto backend = std::make_unique<CudaBackend>();
  Backend &b = backend->b;
  b.device = device;
  check(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  b.sms = prop.multiProcessorCount;
  b.budget = std::make_shared<MemoryBudget>();
  b.budget->total = prop.totalGlobalMem;
  float fraction = options.memory_fraction;
  if (!(fraction > 0.0f && fraction <= 1.0f))
    fraction = 0.9f;
  b.budget->fraction = fraction;
  b.budget->limit = size_t(double(prop.totalGlobalMem) * fraction);
  b.tf32 = envFlag("LLMC_CUDA_TF32", false);
  b.graphs = envFlag("LLMC_CUDA_GRAPHS", true);
  b.syncEach = envFlag("LLMC_CUDA_SYNC", false);
  check(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking),
        "cudaStreamCreate");
  checkLt(cublasLtCreate(&b.lt), "cublasLtCreate");
  b.ltWorkspace = DeviceBuffer(b.budget, 32u << 20, "the cuBLASLt workspace");
  check(attentionConfigure(), "configuring the attention kernels");
  return backend;
}

// A usable GPU outranks nothing else of the same name; one build suffices.
int32_t score() { return probe(nullptr) > 0 ? 1 : 0; }

const common::PluginDesc kPlugin = {"cuda", deviceCount, deviceInfo, score,
                                    create, true,        true};

} // namespace
} // namespace llmc::cuda

LLMC_DEFINE_BACKEND_PLUGIN(llmc::cuda::kPlugin)
