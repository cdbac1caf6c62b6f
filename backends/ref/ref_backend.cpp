//===- ref_backend.cpp - The ref plugin's C entries
//------------------------===//
//
// Every entry catches whatever the C++ below it throws and turns it into a
// status and a last_error message: nothing unwinds across the C ABI.
//
//===----------------------------------------------------------------------===//
#include "ref.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>

struct llmc_backend {
  std::string error;
};

struct llmc_prepared {
  llmc::ref::Prepared p;
};

struct llmc_kv_cache {
  llmc::ref::KvCache cache;
};

namespace {

using namespace llmc::ref;

// The message of the last failed create (last_error(NULL)).
thread_local std::string createError;

// Runs `body`, mapping exceptions to statuses and recording the message.
template <typename F> llmc_status guarded(std::string &error, F &&body) {
  try {
    body();
    return LLMC_OK;
  } catch (const InvalidArgument &e) {
    error = std::string("ref: ") + e.what();
    return LLMC_INVALID_ARGUMENT;
  } catch (const std::bad_alloc &) {
    error = "ref: out of memory";
    return LLMC_OUT_OF_MEMORY;
  } catch (const std::exception &e) {
    error = std::string("ref: ") + e.what();
    return LLMC_ERROR;
  } catch (...) {
    error = "ref: unknown error";
    return LLMC_ERROR;
  }
}

int32_t deviceCount(void) { return 1; }

llmc_status deviceInfo(int32_t device, llmc_device_info *info) {
  if (device != 0 || !info)
    return LLMC_INVALID_ARGUMENT;
  std::memset(info, 0, sizeof *info);
  std::snprintf(info->name, sizeof info->name, "CPU (reference kernels)");
  info->usable = 1;
  return LLMC_OK;
}

llmc_status create(const llmc_backend_options *options, llmc_backend **out) {
  if (!out) {
    createError = "ref: create: out is NULL";
    return LLMC_INVALID_ARGUMENT;
  }
  *out = nullptr;
  // The ref backend runs on one thread whatever `threads` says.
  if (options && options->device != 0) {
    createError =
        "ref: there is only device 0, not " + std::to_string(options->device);
    return LLMC_INVALID_ARGUMENT;
  }
  return guarded(createError, [&] { *out = new llmc_backend(); });
}

void destroy(llmc_backend *backend) { delete backend; }

const char *lastError(llmc_backend *backend) {
  return backend ? backend->error.c_str() : createError.c_str();
}

int32_t supports(llmc_backend *, const llmc_op_desc *op,
                 const llmc_graph_desc *graph) {
  const OpKernel *kernel = op ? findKernel(op->kind) : nullptr;
  if (!kernel || !graph)
    return 0;
  try {
    // Only the descriptors matter to the checks; weights are not copied.
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
  return guarded(backend->error, [&] {
    auto prepared = std::make_unique<llmc_prepared>();
    prepared->p.graph = loadGraph(*graph);
    *out = prepared.release();
  });
}

void release(llmc_backend *, llmc_prepared *prepared) { delete prepared; }

llmc_status kvCreate(llmc_backend *backend, const llmc_kv_cache_desc *desc,
                     llmc_kv_cache **out) {
  if (!backend || !desc || !out)
    return LLMC_INVALID_ARGUMENT;
  *out = nullptr;
  return guarded(backend->error, [&] {
    auto cache = std::make_unique<llmc_kv_cache>();
    initKvCache(cache->cache, *desc);
    *out = cache.release();
  });
}

void kvDestroy(llmc_backend *, llmc_kv_cache *cache) { delete cache; }

llmc_status kvCopyBlock(llmc_backend *backend, llmc_kv_cache *cache,
                        int32_t src, int32_t dst) {
  if (!backend || !cache)
    return LLMC_INVALID_ARGUMENT;
  return guarded(backend->error, [&] { copyKvBlock(cache->cache, src, dst); });
}

llmc_status execute(llmc_backend *backend, llmc_prepared *prepared,
                    llmc_kv_cache *cache, const llmc_step_args *args) {
  if (!backend)
    return LLMC_INVALID_ARGUMENT;
  if (!prepared || !args) {
    backend->error = "ref: execute: prepared and args must not be NULL";
    return LLMC_INVALID_ARGUMENT;
  }
  return guarded(backend->error, [&] {
    llmc::ref::execute(prepared->p, cache ? &cache->cache : nullptr, *args);
  });
}

const llmc_backend_api kApi = {
    LLMC_BACKEND_ABI_MAJOR,
    LLMC_BACKEND_ABI_MINOR,
    sizeof(llmc_backend_api),
    "ref",
    LLMC_BACKEND_BUILD_FLAVOR,
    deviceCount,
    deviceInfo,
    nullptr, // score: one build of ref is as good as another
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
