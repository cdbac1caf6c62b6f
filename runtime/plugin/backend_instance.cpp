//===- backend_instance.cpp - RAII over a plugin's handles
//-----------------===//
#include "llmc/runtime/backend_registry.h"

namespace llmc {
namespace {

[[noreturn]] void fail(const llmc_backend_api &api, llmc_backend *backend,
                       const std::string &name, llmc_status status,
                       const char *entry) {
  const char *text = api.last_error(backend);
  std::string message = "backend '" + name + "': " + entry + " failed";
  if (text && *text)
    message += ": " + std::string(text);
  else
    message += " with status " + std::to_string(int(status));
  throw BackendError(status, message);
}

} // namespace

BackendInstance::BackendInstance(const LoadedBackend &backend,
                                 const llmc_backend_options &options)
    : name_(backend.name), api_(backend.api) {
  llmc_status status = api_->create(&options, &backend_);
  if (status != LLMC_OK || !backend_)
    fail(*api_, nullptr, name_, status, "create");
}

BackendInstance::~BackendInstance() {
  if (backend_)
    api_->destroy(backend_);
}

BackendInstance::BackendInstance(BackendInstance &&other) noexcept {
  *this = std::move(other);
}

BackendInstance &BackendInstance::operator=(BackendInstance &&other) noexcept {
  if (this != &other) {
    if (backend_)
      api_->destroy(backend_);
    name_ = std::move(other.name_);
    api_ = other.api_;
    backend_ = std::exchange(other.backend_, nullptr);
  }
  return *this;
}

bool BackendInstance::supports(const llmc_op_desc &op,
                               const llmc_graph_desc &graph) const {
  return api_->supports(backend_, &op, &graph) != 0;
}

PreparedGraph BackendInstance::prepare(const llmc_graph_desc &graph) const {
  llmc_prepared *prepared = nullptr;
  llmc_status status = api_->prepare(backend_, &graph, &prepared);
  if (status != LLMC_OK)
    fail(*api_, backend_, name_, status, "prepare");
  return PreparedGraph(api_, backend_, prepared);
}

DeviceKvCache
BackendInstance::createKvCache(const llmc_kv_cache_desc &desc) const {
  llmc_kv_cache *cache = nullptr;
  llmc_status status = api_->kv_create(backend_, &desc, &cache);
  if (status != LLMC_OK)
    fail(*api_, backend_, name_, status, "kv_create");
  return DeviceKvCache(api_, backend_, name_, cache, desc);
}

void BackendInstance::execute(const PreparedGraph &graph, DeviceKvCache *cache,
                              const llmc_step_args &args) const {
  llmc_status status = api_->execute(backend_, graph.get(),
                                     cache ? cache->get() : nullptr, &args);
  if (status != LLMC_OK)
    fail(*api_, backend_, name_, status, "execute");
}

void PreparedGraph::reset() {
  if (prepared_)
    api_->release(backend_, prepared_);
  prepared_ = nullptr;
}

PreparedGraph &PreparedGraph::operator=(PreparedGraph &&other) noexcept {
  if (this != &other) {
    reset();
    api_ = other.api_;
    backend_ = other.backend_;
    prepared_ = std::exchange(other.prepared_, nullptr);
  }
  return *this;
}

void DeviceKvCache::reset() {
  if (cache_)
    api_->kv_destroy(backend_, cache_);
  cache_ = nullptr;
}

DeviceKvCache &DeviceKvCache::operator=(DeviceKvCache &&other) noexcept {
  if (this != &other) {
    reset();
    api_ = other.api_;
    backend_ = other.backend_;
    name_ = std::move(other.name_);
    cache_ = std::exchange(other.cache_, nullptr);
    desc_ = other.desc_;
  }
  return *this;
}

void DeviceKvCache::copyBlock(int32_t src, int32_t dst, bool sliding) {
  const char *fn = sliding ? "kv_copy_sliding_block" : "kv_copy_block";
  llmc_status status =
      sliding ? api_->kv_copy_sliding_block(backend_, cache_, src, dst)
              : api_->kv_copy_block(backend_, cache_, src, dst);
  if (status != LLMC_OK)
    fail(*api_, backend_, name_, status, fn);
}

} // namespace llmc
