//===- plugin.cpp - The C entries of a backend, written once --------------===//
#include "common/plugin.h"

#include <cstring>
#include <new>
#include <string>

struct llmc_backend {
  std::unique_ptr<llmc::common::Backend> impl;
  std::string error;
};

struct llmc_prepared {
  std::unique_ptr<llmc::common::PreparedGraph> impl;
};

struct llmc_kv_cache {
  std::unique_ptr<llmc::common::KvPool> impl;
};

namespace llmc::common {

bool Backend::supports(const llmc_op_desc &op, const llmc_graph_desc &graph) {
  return checksPass(op, graph);
}

namespace {

const PluginDesc *gDesc = nullptr;

// The message of the last failed create (last_error(NULL)).
thread_local std::string createError;

template <typename F> llmc_status guarded(std::string &error, F &&body) {
  std::string prefix = std::string(gDesc->name) + ": ";
  try {
    body();
    return LLMC_OK;
  } catch (const InvalidArgument &e) {
    error = prefix + e.what();
    return LLMC_INVALID_ARGUMENT;
  } catch (const OutOfMemory &e) {
    error = prefix + e.what();
    return LLMC_OUT_OF_MEMORY;
  } catch (const std::bad_alloc &) {
    error = prefix + "out of host memory";
    return LLMC_OUT_OF_MEMORY;
  } catch (const Unimplemented &e) {
    error = prefix + e.what();
    return LLMC_UNIMPLEMENTED;
  } catch (const std::exception &e) {
    error = prefix + e.what();
    return LLMC_ERROR;
  } catch (...) {
    error = prefix + "unknown error";
    return LLMC_ERROR;
  }
}

int32_t deviceCount(void) {
  try {
    return gDesc->deviceCount();
  } catch (...) {
    return 0;
  }
}

llmc_status deviceInfo(int32_t device, llmc_device_info *info) {
  if (!info)
    return LLMC_INVALID_ARGUMENT;
  std::memset(info, 0, sizeof *info);
  std::string ignored;
  return guarded(ignored, [&] {
    if (device < 0 || device >= deviceCount())
      throw InvalidArgument("there is no device " + std::to_string(device));
    gDesc->deviceInfo(device, *info);
  });
}

int32_t score(void) {
  try {
    return gDesc->score();
  } catch (...) {
    return 0;
  }
}

llmc_status create(const llmc_backend_options *options, llmc_backend **out) {
  if (!out) {
    createError = std::string(gDesc->name) + ": create: out is NULL";
    return LLMC_INVALID_ARGUMENT;
  }
  *out = nullptr;
  llmc_backend_options o{};
  if (options)
    o = *options;
  return guarded(createError, [&] {
    auto backend = std::make_unique<llmc_backend>();
    backend->impl = gDesc->create(o);
    *out = backend.release();
  });
}

void destroy(llmc_backend *backend) {
  if (!backend)
    return;
  try {
    backend->impl->enter();
  } catch (...) {
  }
  delete backend;
}

const char *lastError(llmc_backend *backend) {
  return backend ? backend->error.c_str() : createError.c_str();
}

int32_t supports(llmc_backend *backend, const llmc_op_desc *op,
                 const llmc_graph_desc *graph) {
  if (!backend || !op || !graph)
    return 0;
  try {
    return backend->impl->supports(*op, *graph) ? 1 : 0;
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
    backend->impl->enter();
    auto prepared = std::make_unique<llmc_prepared>();
    prepared->impl = backend->impl->prepare(*graph);
    *out = prepared.release();
  });
}

void release(llmc_backend *backend, llmc_prepared *prepared) {
  if (backend && prepared) {
    try {
      backend->impl->enter();
    } catch (...) {
    }
  }
  delete prepared;
}

llmc_status kvCreate(llmc_backend *backend, const llmc_kv_cache_desc *desc,
                     llmc_kv_cache **out) {
  if (!backend || !desc || !out)
    return LLMC_INVALID_ARGUMENT;
  *out = nullptr;
  return guarded(backend->error, [&] {
    backend->impl->enter();
    auto cache = std::make_unique<llmc_kv_cache>();
    cache->impl = backend->impl->createKvCache(*desc);
    *out = cache.release();
  });
}

void kvDestroy(llmc_backend *backend, llmc_kv_cache *cache) {
  if (backend && cache) {
    try {
      backend->impl->enter();
    } catch (...) {
    }
  }
  delete cache;
}

llmc_status kvCopyBlock(llmc_backend *backend, llmc_kv_cache *cache,
                        int32_t src, int32_t dst) {
  if (!backend || !cache)
    return LLMC_INVALID_ARGUMENT;
  return guarded(backend->error, [&] {
    backend->impl->enter();
    backend->impl->copyKvBlock(*cache->impl, src, dst, false);
  });
}

llmc_status kvCopySlidingBlock(llmc_backend *backend, llmc_kv_cache *cache,
                               int32_t src, int32_t dst) {
  if (!backend || !cache)
    return LLMC_INVALID_ARGUMENT;
  return guarded(backend->error, [&] {
    backend->impl->enter();
    backend->impl->copyKvBlock(*cache->impl, src, dst, true);
  });
}

llmc_status execute(llmc_backend *backend, llmc_prepared *prepared,
                    llmc_kv_cache *cache, const llmc_step_args *args) {
  if (!backend)
    return LLMC_INVALID_ARGUMENT;
  if (!prepared || !args) {
    backend->error = std::string(gDesc->name) +
                     ": execute: prepared and args must not be NULL";
    return LLMC_INVALID_ARGUMENT;
  }
  return guarded(backend->error, [&] {
    backend->impl->enter();
    backend->impl->execute(*prepared->impl, cache ? cache->impl.get() : nullptr,
                           *args);
  });
}

llmc_status setCommunicator(llmc_backend *backend,
                            const llmc_communicator *comm) {
  if (!backend)
    return LLMC_INVALID_ARGUMENT;
  if (!comm || !comm->all_reduce_sum_f32 || comm->size < 1 || comm->rank < 0 ||
      comm->rank >= comm->size) {
    backend->error = std::string(gDesc->name) +
                     ": set_communicator: a communicator with a rank below "
                     "its size and an all_reduce_sum_f32";
    return LLMC_INVALID_ARGUMENT;
  }
  return guarded(backend->error, [&] {
    backend->impl->enter();
    backend->impl->setCommunicator(*comm);
  });
}

} // namespace

void Backend::setCommunicator(const llmc_communicator &) {
  throw Unimplemented("no tensor parallelism (ALL_REDUCE) in this backend");
}

const llmc_backend_api *pluginApi(const PluginDesc &desc) {
  gDesc = &desc;
  static const llmc_backend_api api = {
      LLMC_BACKEND_ABI_MAJOR,
      LLMC_BACKEND_ABI_MINOR,
      sizeof(llmc_backend_api),
      desc.name,
      LLMC_BACKEND_BUILD_FLAVOR,
      deviceCount,
      deviceInfo,
      desc.score ? score : nullptr,
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
      desc.slidingPool ? kvCopySlidingBlock : nullptr,
      desc.communicator ? setCommunicator : nullptr,
  };
  return &api;
}

} // namespace llmc::common
