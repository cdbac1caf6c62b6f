//===- cuda_backend.cpp - The cuda plugin's C entries ---------------------===//
//
// Every entry catches whatever the C++ below it throws and turns it into a
// status and a last_error message: nothing unwinds across the C ABI. Without
// a GPU (or a driver) cudaGetDeviceCount fails; the plugin then reports one
// device that is not usable, with the CUDA message, and create fails with
// the same message. Any error from it counts as "no device".
//
//===----------------------------------------------------------------------===//
#include "cuda.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

struct llmc_backend {
  llmc::cuda::Backend b;
};

struct llmc_prepared {
  llmc::cuda::Prepared p;
};

struct llmc_kv_cache {
  llmc::cuda::KvPool pool;
};

namespace {

using namespace llmc::cuda;

thread_local std::string createError;

template <typename F> llmc_status guarded(std::string &error, F &&body) {
  try {
    body();
    return LLMC_OK;
  } catch (const InvalidArgument &e) {
    error = std::string("cuda: ") + e.what();
    return LLMC_INVALID_ARGUMENT;
  } catch (const OutOfMemory &e) {
    error = std::string("cuda: ") + e.what();
    return LLMC_OUT_OF_MEMORY;
  } catch (const std::bad_alloc &) {
    error = "cuda: out of host memory";
    return LLMC_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    error = std::string("cuda: ") + e.what();
    return LLMC_ERROR;
  } catch (...) {
    error = "cuda: unknown error";
    return LLMC_ERROR;
  }
}

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

int32_t deviceCount(void) {
  int n = probe(nullptr);
  return n > 0 ? n : 1; // an unusable device still reports itself
}

llmc_status deviceInfo(int32_t device, llmc_device_info *info) {
  if (!info)
    return LLMC_INVALID_ARGUMENT;
  std::memset(info, 0, sizeof *info);
  std::string reason;
  int n = probe(&reason);
  if (n < 0) {
    if (device != 0)
      return LLMC_INVALID_ARGUMENT;
    std::snprintf(info->name, sizeof info->name, "CUDA");
    std::snprintf(info->reason, sizeof info->reason, "%s", reason.c_str());
    return LLMC_OK;
  }
  if (device < 0 || device >= n)
    return LLMC_INVALID_ARGUMENT;
  cudaDeviceProp prop{};
  cudaError_t e = cudaGetDeviceProperties(&prop, device);
  if (e != cudaSuccess) {
    cudaGetLastError();
    std::snprintf(info->name, sizeof info->name, "CUDA device %d", device);
    std::snprintf(info->reason, sizeof info->reason, "no CUDA device (%s)",
                  cudaGetErrorString(e));
    return LLMC_OK;
  }
  std::string name = std::string(prop.name).substr(0, 100) + " (sm_" +
                     std::to_string(prop.major) + std::to_string(prop.minor) +
                     ")";
  std::snprintf(info->name, sizeof info->name, "%s", name.c_str());
  info->memory_bytes = prop.totalGlobalMem;
  if (prop.major < 8) {
    std::snprintf(info->reason, sizeof info->reason,
                  "compute capability %d.%d: the plugin is built for sm_80 "
                  "and sm_90",
                  prop.major, prop.minor);
    return LLMC_OK;
  }
  info->usable = 1;
  return LLMC_OK;
}

llmc_status create(const llmc_backend_options *options, llmc_backend **out) {
  if (!out) {
    createError = "cuda: create: out is NULL";
    return LLMC_INVALID_ARGUMENT;
  }
  *out = nullptr;
  std::string reason;
  int n = probe(&reason);
  if (n < 0) {
    createError = "cuda: " + reason;
    return LLMC_ERROR;
  }
  int device = options ? options->device : 0;
  if (device < 0 || device >= n) {
    createError = "cuda: there is no device " + std::to_string(device) +
                  " (found " + std::to_string(n) + ")";
    return LLMC_INVALID_ARGUMENT;
  }
  return guarded(createError, [&] {
    auto backend = std::make_unique<llmc_backend>();
    Backend &b = backend->b;
    b.device = device;
    check(cudaSetDevice(device), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    b.sms = prop.multiProcessorCount;
    b.budget = std::make_shared<MemoryBudget>();
    b.budget->total = prop.totalGlobalMem;
    float fraction = options ? options->memory_fraction : 0.0f;
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
    *out = backend.release();
  });
}

void destroy(llmc_backend *backend) {
  if (backend)
    cudaSetDevice(backend->b.device);
  delete backend;
}

const char *lastError(llmc_backend *backend) {
  return backend ? backend->b.error.c_str() : createError.c_str();
}

int32_t supports(llmc_backend *, const llmc_op_desc *op,
                 const llmc_graph_desc *graph) {
  const llmc::ref::OpKernel *kernel =
      op ? llmc::ref::findKernel(op->kind) : nullptr;
  if (!kernel || !graph || !supportsOp(*op))
    return 0;
  try {
    Graph g;
    g.buffers.assign(graph->buffers, graph->buffers + graph->num_buffers);
    g.weights.assign(graph->weights, graph->weights + graph->num_weights);
    for (const llmc_buffer_desc &b : g.buffers)
      if (b.dtype != LLMC_F32)
        return 0;
    kernel->check(*op, g);
    return 1;
  } catch (...) {
    return 0;
  }
}

llmc_status prepare(llmc_backend *backend, const llmc_graph_desc *graph,
                    llmc_prepared **out) {
  if (!backend || !graph || !out)
    return LLMC_INVALID_ARGUMENT;
  *out = nullptr;
  return guarded(backend->b.error, [&] {
    check(cudaSetDevice(backend->b.device), "cudaSetDevice");
    auto prepared = std::make_unique<llmc_prepared>();
    prepareGraph(backend->b, *graph, prepared->p);
    *out = prepared.release();
  });
}

void release(llmc_backend *backend, llmc_prepared *prepared) {
  if (backend)
    cudaSetDevice(backend->b.device);
  delete prepared;
}

llmc_status kvCreate(llmc_backend *backend, const llmc_kv_cache_desc *desc,
                     llmc_kv_cache **out) {
  if (!backend || !desc || !out)
    return LLMC_INVALID_ARGUMENT;
  *out = nullptr;
  return guarded(backend->b.error, [&] {
    check(cudaSetDevice(backend->b.device), "cudaSetDevice");
    auto cache = std::make_unique<llmc_kv_cache>();
    initKvPool(backend->b, cache->pool, *desc);
    *out = cache.release();
  });
}

void kvDestroy(llmc_backend *backend, llmc_kv_cache *cache) {
  if (backend)
    cudaSetDevice(backend->b.device);
  delete cache;
}

llmc_status kvCopyBlock(llmc_backend *backend, llmc_kv_cache *cache,
                        int32_t src, int32_t dst) {
  if (!backend || !cache)
    return LLMC_INVALID_ARGUMENT;
  return guarded(backend->b.error, [&] {
    check(cudaSetDevice(backend->b.device), "cudaSetDevice");
    copyKvBlock(backend->b, cache->pool, src, dst);
  });
}

llmc_status execute(llmc_backend *backend, llmc_prepared *prepared,
                    llmc_kv_cache *cache, const llmc_step_args *args) {
  if (!backend)
    return LLMC_INVALID_ARGUMENT;
  if (!prepared || !args) {
    backend->b.error = "cuda: execute: prepared and args must not be NULL";
    return LLMC_INVALID_ARGUMENT;
  }
  return guarded(backend->b.error, [&] {
    check(cudaSetDevice(backend->b.device), "cudaSetDevice");
    executeGraph(backend->b, prepared->p, cache ? &cache->pool : nullptr,
                 *args);
  });
}

// A usable GPU outranks nothing else of the same name; one build suffices.
int32_t score(void) { return probe(nullptr) > 0 ? 1 : 0; }

const llmc_backend_api kApi = {
    LLMC_BACKEND_ABI_MAJOR,
    LLMC_BACKEND_ABI_MINOR,
    sizeof(llmc_backend_api),
    "cuda",
    LLMC_BACKEND_BUILD_FLAVOR,
    deviceCount,
    deviceInfo,
    score,
    create,
    destroy,
    lastError,
    supports,
    prepare,
    release,
    kvCreate,
    kvDestroy,
    kvCopyBlock,
    execute,
};

} // namespace

extern "C" LLMC_BACKEND_EXPORT const llmc_backend_api *
llmc_backend_query(uint32_t max_abi_major, void *) {
  return max_abi_major >= LLMC_BACKEND_ABI_MAJOR ? &kApi : nullptr;
}
