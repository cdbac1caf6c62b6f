//===- backend_registry.h - Finding, loading and using backend plugins -*- C++
//-*-===//
//
// BackendRegistry::discover() dlopens every libllmc-backend-*.so it finds:
//   1. next to the running executable,
//   2. in <executable>/../lib/llmc/backends (an installed tree),
//   3. in each directory of LLMC_BACKEND_PATH (colon-separated),
// and keeps those that speak this host's ABI major, were built with the same
// sanitizer flavour and fill in every required entry. A plugin it refuses is
// listed in problems() with the reason, so `llmc` can say why a backend is
// missing instead of silently running another one.
//
// When several plugins report the same backend name (cpu-avx512 and
// cpu-amx both say "cpu") the highest score() wins, the first found on a
// tie; the others are listed in problems().
//
// Plugins are never unloaded: their threads (OpenMP) and the objects a
// BackendInstance holds may outlive the registry.
//
// BackendInstance, PreparedGraph and DeviceKvCache wrap the C handles in RAII
// and turn a failed entry into llmc::BackendError carrying the plugin's
// last_error text. A PreparedGraph or DeviceKvCache must not outlive the
// BackendInstance that made it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/backend.h"
#include "llmc/support/error.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llmc {

/// A failed backend entry: the status and the plugin's message.
class BackendError : public Error {
public:
  BackendError(llmc_status status, const std::string &message)
      : Error(message), status_(status) {}
  llmc_status status() const { return status_; }

private:
  llmc_status status_;
};

struct LoadedBackend {
  std::string name; // the plugin's own name ("ref", "cpu", ...)
  std::string path; // the file it was loaded from
  const llmc_backend_api *api = nullptr;
  void *handle = nullptr; // dlopen handle

  /// The plugin's devices, asked on first use: a plugin may load its device
  /// libraries then (cuda does), so discovering it costs nothing. Call from
  /// one thread at a time.
  const std::vector<llmc_device_info> &devices() const;
  /// Whether any device is usable here (asks for the devices).
  bool usable() const;
  /// The plugin's score (higher wins between two builds of one backend).
  int score() const;

private:
  mutable std::optional<std::vector<llmc_device_info>> devices_;
  mutable std::optional<int> score_;
};

class BackendRegistry {
public:
  /// Searches the standard directories (see above).
  static BackendRegistry discover();
  /// Searches exactly these directories, in order.
  static BackendRegistry discover(const std::vector<std::string> &dirs);
  /// The standard directories, in search order.
  static std::vector<std::string> searchPath();

  /// Accepted plugins, one per name, in the order found.
  const std::vector<LoadedBackend> &backends() const { return backends_; }
  /// The backend called `name`, or nullptr.
  const LoadedBackend *find(const std::string &name) const;
  /// One line per plugin found but not used, naming the file and the reason.
  std::vector<std::string> problems() const { return problems_; }

private:
  void load(const std::string &path);
  void add(LoadedBackend backend);

  std::vector<LoadedBackend> backends_;
  std::vector<std::string> problems_;
  std::vector<std::string> seen_; // canonical paths already considered
};

class PreparedGraph;
class DeviceKvCache;

/// One backend object on one device.
class BackendInstance {
public:
  explicit BackendInstance(const LoadedBackend &backend,
                           const llmc_backend_options &options = {});
  ~BackendInstance();
  BackendInstance(BackendInstance &&other) noexcept;
  BackendInstance &operator=(BackendInstance &&other) noexcept;
  BackendInstance(const BackendInstance &) = delete;
  BackendInstance &operator=(const BackendInstance &) = delete;

  const std::string &name() const { return name_; }
  const llmc_backend_api &api() const { return *api_; }
  llmc_backend *get() const { return backend_; }

  bool supports(const llmc_op_desc &op, const llmc_graph_desc &graph) const;
  /// The graph and its weights must outlive the result.
  PreparedGraph prepare(const llmc_graph_desc &graph) const;
  DeviceKvCache createKvCache(const llmc_kv_cache_desc &desc) const;
  /// Runs one step; `cache` may be null for a graph without KV ops.
  void execute(const PreparedGraph &graph, DeviceKvCache *cache,
               const llmc_step_args &args) const;

private:
  std::string name_;
  const llmc_backend_api *api_ = nullptr;
  llmc_backend *backend_ = nullptr;
};

class PreparedGraph {
public:
  PreparedGraph(const llmc_backend_api *api, llmc_backend *backend,
                llmc_prepared *prepared)
      : api_(api), backend_(backend), prepared_(prepared) {}
  ~PreparedGraph() { reset(); }
  PreparedGraph(PreparedGraph &&other) noexcept { *this = std::move(other); }
  PreparedGraph &operator=(PreparedGraph &&other) noexcept;
  PreparedGraph(const PreparedGraph &) = delete;
  PreparedGraph &operator=(const PreparedGraph &) = delete;

  llmc_prepared *get() const { return prepared_; }

private:
  void reset();
  const llmc_backend_api *api_ = nullptr;
  llmc_backend *backend_ = nullptr;
  llmc_prepared *prepared_ = nullptr;
};

/// The device-side paged KV pool.
class DeviceKvCache {
public:
  DeviceKvCache(const llmc_backend_api *api, llmc_backend *backend,
                std::string name, llmc_kv_cache *cache,
                const llmc_kv_cache_desc &desc)
      : api_(api), backend_(backend), name_(std::move(name)), cache_(cache),
        desc_(desc) {}
  ~DeviceKvCache() { reset(); }
  DeviceKvCache(DeviceKvCache &&other) noexcept { *this = std::move(other); }
  DeviceKvCache &operator=(DeviceKvCache &&other) noexcept;
  DeviceKvCache(const DeviceKvCache &) = delete;
  DeviceKvCache &operator=(const DeviceKvCache &) = delete;

  llmc_kv_cache *get() const { return cache_; }
  const llmc_kv_cache_desc &desc() const { return desc_; }
  /// Copies block src to dst in every layer of its pool (copy-on-write).
  void copyBlock(int32_t src, int32_t dst, bool sliding = false);

private:
  void reset();
  const llmc_backend_api *api_ = nullptr;
  llmc_backend *backend_ = nullptr;
  std::string name_;
  llmc_kv_cache *cache_ = nullptr;
  llmc_kv_cache_desc desc_{};
};

} // namespace llmc
