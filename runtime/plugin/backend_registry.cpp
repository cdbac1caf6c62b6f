//===- backend_registry.cpp - Discovering and loading backend plugins
//------===//
#include "llmc/runtime/backend_registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;

namespace llmc {
namespace {

// The table as ABI 1.0 defined it: a plugin may be newer (larger), never
// smaller. Entries appended later are checked against struct_size at the
// call site.
constexpr size_t kAbi1_0Size =
    offsetof(llmc_backend_api, execute) + sizeof(llmc_backend_api::execute);

const char *kPrefix = "libllmc-backend-";
const char *kSuffix = ".so";

bool isPluginName(const std::string &file) {
  size_t p = std::strlen(kPrefix), s = std::strlen(kSuffix);
  return file.size() > p + s && file.compare(0, p, kPrefix) == 0 &&
         file.compare(file.size() - s, s, kSuffix) == 0;
}

// The first required entry that is NULL, or nullptr.
const char *missingEntry(const llmc_backend_api &api) {
  struct Entry {
    const char *name;
    bool present;
  } entries[] = {
      {"device_count", api.device_count != nullptr},
      {"device_info", api.device_info != nullptr},
      {"create", api.create != nullptr},
      {"destroy", api.destroy != nullptr},
      {"last_error", api.last_error != nullptr},
      {"supports", api.supports != nullptr},
      {"prepare", api.prepare != nullptr},
      {"release", api.release != nullptr},
      {"kv_create", api.kv_create != nullptr},
      {"kv_destroy", api.kv_destroy != nullptr},
      {"kv_copy_block", api.kv_copy_block != nullptr},
      {"execute", api.execute != nullptr},
  };
  for (const Entry &e : entries)
    if (!e.present)
      return e.name;
  return nullptr;
}

// Why the host cannot use this table, or "" if it can.
std::string refusal(const llmc_backend_api &api) {
  if (api.abi_major != LLMC_BACKEND_ABI_MAJOR)
    return "ABI " + std::to_string(api.abi_major) + "." +
           std::to_string(api.abi_minor) + " is not supported by this llmc (" +
           std::to_string(LLMC_BACKEND_ABI_MAJOR) + ".x)";
  if (api.struct_size < kAbi1_0Size)
    return "its entry table is " + std::to_string(api.struct_size) +
           " bytes, smaller than ABI 1.0's " + std::to_string(kAbi1_0Size);
  if (!api.name || !*api.name)
    return "it has no name";
  // An ASan host can load a plain plugin, but its allocations and the
  // plugin's would not be checked alike; a plain host cannot load an ASan
  // plugin at all. Refuse both with a message.
  const char *flavor = api.build_flavor ? api.build_flavor : "(none)";
  if (std::strcmp(flavor, LLMC_BACKEND_BUILD_FLAVOR) != 0)
    return std::string("it is a '") + flavor + "' build and this llmc is '" +
           LLMC_BACKEND_BUILD_FLAVOR + "'";
  if (const char *entry = missingEntry(api))
    return std::string("required entry '") + entry + "' is NULL";
  return "";
}

std::vector<llmc_device_info> queryDevices(const llmc_backend_api &api) {
  std::vector<llmc_device_info> devices;
  int32_t count = api.device_count();
  for (int32_t i = 0; i < count; ++i) {
    llmc_device_info info;
    std::memset(&info, 0, sizeof info);
    if (api.device_info(i, &info) != LLMC_OK) {
      info.usable = 0;
      std::snprintf(info.reason, sizeof info.reason, "device_info(%d) failed",
                    int(i));
    }
    info.name[sizeof info.name - 1] = '\0';
    info.reason[sizeof info.reason - 1] = '\0';
    devices.push_back(info);
  }
  return devices;
}

std::string executableDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "" : exe.parent_path().string();
}

} // namespace

const std::vector<llmc_device_info> &LoadedBackend::devices() const {
  if (!devices_)
    devices_ = queryDevices(*api);
  return *devices_;
}

bool LoadedBackend::usable() const {
  const auto &ds = devices();
  return std::any_of(ds.begin(), ds.end(),
                     [](const llmc_device_info &d) { return d.usable != 0; });
}

int LoadedBackend::score() const {
  if (!score_)
    score_ = api->score ? api->score() : 0;
  return *score_;
}

std::vector<std::string> BackendRegistry::searchPath() {
  std::vector<std::string> dirs;
  std::string exeDir = executableDir();
  if (!exeDir.empty()) {
    dirs.push_back(exeDir);
    dirs.push_back((fs::path(exeDir) / ".." / "lib" / "llmc" / "backends")
                       .lexically_normal());
  }
  if (const char *env = std::getenv("LLMC_BACKEND_PATH")) {
    std::string path = env;
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = path.find(':', start);
      if (end == std::string::npos)
        end = path.size();
      if (end > start)
        dirs.push_back(path.substr(start, end - start));
      start = end + 1;
    }
  }
  return dirs;
}

BackendRegistry BackendRegistry::discover() { return discover(searchPath()); }

BackendRegistry
BackendRegistry::discover(const std::vector<std::string> &dirs) {
  BackendRegistry registry;
  for (const std::string &dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      continue;
    std::vector<std::string> files;
    for (const fs::directory_entry &entry : fs::directory_iterator(dir, ec))
      if (isPluginName(entry.path().filename().string()))
        files.push_back(entry.path().string());
    std::sort(files.begin(), files.end()); // the same order on every run
    for (const std::string &file : files)
      registry.load(file);
  }
  return registry;
}

const LoadedBackend *BackendRegistry::find(const std::string &name) const {
  for (const LoadedBackend &b : backends_)
    if (b.name == name)
      return &b;
  return nullptr;
}

void BackendRegistry::load(const std::string &path) {
  // One file reached through two search directories is one plugin.
  std::error_code ec;
  std::string canonical = fs::canonical(path, ec).string();
  if (ec)
    canonical = path;
  if (std::find(seen_.begin(), seen_.end(), canonical) != seen_.end())
    return;
  seen_.push_back(canonical);

  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *err = dlerror();
    problems_.push_back(path + ": " + (err ? err : "dlopen failed"));
    return;
  }
  auto query = reinterpret_cast<llmc_backend_query_fn>(
      dlsym(handle, "llmc_backend_query"));
  const llmc_backend_api *api =
      query ? query(LLMC_BACKEND_ABI_MAJOR, nullptr) : nullptr;
  std::string why;
  if (!query)
    why = "it does not export llmc_backend_query";
  else if (!api)
    why = "it cannot serve a host of ABI " +
          std::to_string(LLMC_BACKEND_ABI_MAJOR) + ".x";
  else
    why = refusal(*api);
  if (!why.empty()) {
    problems_.push_back(path + ": " + why);
    // Nothing of the plugin but its query ran, so it can go.
    dlclose(handle);
    return;
  }

  LoadedBackend backend;
  backend.name = api->name;
  backend.path = path;
  backend.api = api;
  backend.handle = handle;
  add(std::move(backend));
}

void BackendRegistry::add(LoadedBackend backend) {
  for (LoadedBackend &existing : backends_) {
    if (existing.name != backend.name)
      continue;
    bool better = backend.score() > existing.score();
    LoadedBackend &loser = better ? existing : backend;
    const LoadedBackend &winner = better ? backend : existing;
    problems_.push_back(loser.path + ": backend '" + loser.name + "' (score " +
                        std::to_string(loser.score()) +
                        ") is also provided by " + winner.path + " (score " +
                        std::to_string(winner.score()) + "), which is used");
    if (better)
      existing = std::move(backend);
    return;
  }
  backends_.push_back(std::move(backend));
}

} // namespace llmc
