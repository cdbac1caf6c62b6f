//===- cpu_backend.cpp - The cpu plugin's C entries -----------------------===//
//
// Every entry catches whatever the C++ below it throws and turns it into a
// status and a last_error message: nothing unwinds across the C ABI.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"
#include "execute.h"

#include <omp.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>

struct llmc_backend {
  llmc::cpu::Backend b;
};

struct llmc_prepared {
  llmc::cpu::Prepared p;
};

struct llmc_kv_cache {
  llmc::ref::KvCache cache;
};

namespace {

using namespace llmc::cpu;

thread_local std::string createError;

template <typename F> llmc_status guarded(std::string &error, F &&body) {
  try {
    body();
    return LLMC_OK;
  } catch (const InvalidArgument &e) {
    error = std::string("cpu: ") + e.what();
    return LLMC_INVALID_ARGUMENT;
  } catch (const std::bad_alloc &) {
    error = "cpu: out of memory";
    return LLMC_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    error = std::string("cpu: ") + e.what();
    return LLMC_ERROR;
  } catch (...) {
    error = "cpu: unknown error";
    return LLMC_ERROR;
  }
}

// The kernels are compiled for these; running them elsewhere would SIGILL.
const char *missingIsa() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2"))
    return "avx2";
  if (!__builtin_cpu_supports("fma"))
    return "fma";
  return nullptr; // F16C comes with every AVX2 part
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos)
        return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown CPU";
}

int defaultThreads() { return omp_get_num_procs(); }

int32_t deviceCount(void) { return 1; }

llmc_status deviceInfo(int32_t device, llmc_device_info *info) {
  if (device != 0 || !info)
    return LLMC_INVALID_ARGUMENT;
  std::memset(info, 0, sizeof *info);
  __builtin_cpu_init();
  std::string isa = __builtin_cpu_supports("avx512f") ? "AVX-512" : "AVX2";
  if (__builtin_cpu_supports("avx512bf16"))
    isa += ", AMX-capable";
  std::snprintf(info->name, sizeof info->name, "CPU (%s, %s, %d threads)",
                cpuModel().c_str(), isa.c_str(), defaultThreads());
  if (const char *missing = missingIsa()) {
    std::snprintf(info->reason, sizeof info->reason,
                  "the cpu backend needs %s, which this CPU lacks", missing);
    return LLMC_OK;
  }
  info->usable = 1;
  return LLMC_OK;
}

// Above ref: when both load, the fast one serves.
int32_t score(void) { return missingIsa() ? 0 : 100; }

llmc_status create(const llmc_backend_options *options, llmc_backend **out) {
  if (!out) {
    createError = "cpu: create: out is NULL";
    return LLMC_INVALID_ARGUMENT;
  }
  *out = nullptr;
  if (const char *missing = missingIsa()) {
    createError = std::string("cpu: this CPU lacks ") + missing +
                  ", which the cpu backend's kernels need";
    return LLMC_ERROR;
  }
  if (options && options->device != 0) {
    createError =
        "cpu: there is only device 0, not " + std::to_string(options->device);
    return LLMC_INVALID_ARGUMENT;
  }
  if (options && options->threads < 0) {
    createError = "cpu: threads must not be negative";
    return LLMC_INVALID_ARGUMENT;
  }
  return guarded(createError, [&] {
    auto backend = std::make_unique<llmc_backend>();
    int threads =
        options && options->threads > 0 ? options->threads : defaultThreads();
    backend->b.threads = threads;
    // One pool for oneDNN and our kernels: both read this.
    omp_set_num_threads(threads);
    *out = backend.release();
  });
}

void destroy(llmc_backend *backend) { delete backend; }

const char *lastError(llmc_backend *backend) {
  return backend ? backend->b.error.c_str() : createError.c_str();
}

int32_t supports(llmc_backend *, const llmc_op_desc *op,
                 const llmc_graph_desc *graph) {
  const llmc::ref::OpKernel *kernel =
      op ? llmc::ref::findKernel(op->kind) : nullptr;
  if (!kernel || !graph)
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
    auto prepared = std::make_unique<llmc_prepared>();
    prepareGraph(backend->b, *graph, prepared->p);
    *out = prepared.release();
  });
}

void release(llmc_backend *, llmc_prepared *prepared) { delete prepared; }

llmc_status kvCreate(llmc_backend *backend, const llmc_kv_cache_desc *desc,
                     llmc_kv_cache **out) {
  if (!backend || !desc || !out)
    return LLMC_INVALID_ARGUMENT;
  *out = nullptr;
  return guarded(backend->b.error, [&] {
    auto cache = std::make_unique<llmc_kv_cache>();
    llmc::ref::initKvCache(cache->cache, *desc);
    *out = cache.release();
  });
}

void kvDestroy(llmc_backend *, llmc_kv_cache *cache) { delete cache; }

llmc_status kvCopyBlock(llmc_backend *backend, llmc_kv_cache *cache,
                        int32_t src, int32_t dst) {
  if (!backend || !cache)
    return LLMC_INVALID_ARGUMENT;
  return guarded(backend->b.error,
                 [&] { llmc::ref::copyKvBlock(cache->cache, src, dst); });
}

llmc_status execute(llmc_backend *backend, llmc_prepared *prepared,
                    llmc_kv_cache *cache, const llmc_step_args *args) {
  if (!backend)
    return LLMC_INVALID_ARGUMENT;
  if (!prepared || !args) {
    backend->b.error = "cpu: execute: prepared and args must not be NULL";
    return LLMC_INVALID_ARGUMENT;
  }
  return guarded(backend->b.error, [&] {
    // The calling thread may not be the one that created us, and the
    // thread count is per thread in OpenMP.
    omp_set_num_threads(backend->b.threads);
    executeGraph(prepared->p, cache ? &cache->cache : nullptr, *args);
  });
}

const llmc_backend_api kApi = {
    LLMC_BACKEND_ABI_MAJOR,
    LLMC_BACKEND_ABI_MINOR,
    sizeof(llmc_backend_api),
    "cpu",
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
