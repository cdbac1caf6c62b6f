//===- lazy_plugin.cpp - The cuda plugin, loading CUDA only when used -----===//
//
// libllmc-backend-cuda.so is this file alone: it links nothing of CUDA, so
// discovering backends, listing them or running a plan on another backend
// maps no CUDA library (cuBLASLt alone costs ~150 MB of resident memory).
// The backend itself is libllmc-cuda-device.so, next to this file, loaded
// the first time the registry asks for the devices (and a driver exists) or
// creates a backend; every entry then forwards to it.
//
//===----------------------------------------------------------------------===//
#include "llmc/backend.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

namespace {

const char *kDeviceLibrary = "libllmc-cuda-device.so";

/// Whether an NVIDIA driver is there at all (Linux, or WSL's /dev/dxg):
/// without one the device library could only fail, so it is not loaded.
bool driverPresent() {
  for (const char *p :
       {"/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/dxg"})
    if (access(p, F_OK) == 0)
      return true;
  return false;
}

struct Device {
  const llmc_backend_api *api = nullptr;
  std::string error;
};

/// The device library's API, loaded once; null with the reason in error.
const Device &device() {
  static Device d;
  static std::once_flag once;
  std::call_once(once, [] {
    if (!driverPresent()) {
      d.error = "no CUDA device (no NVIDIA driver: none of "
                "/proc/driver/nvidia/version, /dev/nvidiactl, /dev/dxg "
                "exists)";
      return;
    }
    Dl_info self{};
    std::string dir;
    if (dladdr(reinterpret_cast<const void *>(&driverPresent), &self) &&
        self.dli_fname) {
      dir = self.dli_fname;
      dir = dir.substr(0, dir.find_last_of('/') + 1);
    }
    std::string path = dir + kDeviceLibrary;
    void *h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      d.error = "cannot load " + path + ": " + (e ? e : "unknown error");
      return;
    }
    auto query =
        reinterpret_cast<llmc_backend_query_fn>(dlsym(h, "llmc_backend_query"));
    d.api = query ? query(LLMC_BACKEND_ABI_MAJOR, nullptr) : nullptr;
    if (!d.api || d.api->struct_size < sizeof(llmc_backend_api)) {
      d.api = nullptr;
      d.error = path + " is not a matching llmc cuda device library";
    }
  });
  return d;
}

const llmc_backend_api *api() { return device().api; }

int32_t deviceCount() { return api() ? api()->device_count() : 1; }

llmc_status deviceInfo(int32_t index, llmc_device_info *info) {
  if (api())
    return api()->device_info(index, info);
  std::memset(info, 0, sizeof *info);
  std::snprintf(info->name, sizeof info->name, "CUDA");
  std::snprintf(info->reason, sizeof info->reason, "%s",
                device().error.c_str());
  return LLMC_OK;
}

// Asked when two builds of "cuda" load: no driver, no contest.
int32_t score() { return driverPresent() ? 1 : 0; }

llmc_status create(const llmc_backend_options *options, llmc_backend **out) {
  if (api())
    return api()->create(options, out);
  return LLMC_ERROR;
}

const char *lastError(llmc_backend *backend) {
  if (api())
    return api()->last_error(backend);
  return device().error.c_str();
}

// Below here a backend exists, so the device library is loaded.
void destroy(llmc_backend *b) { api()->destroy(b); }
int32_t supports(llmc_backend *b, const llmc_op_desc *op,
                 const llmc_graph_desc *g) {
  return api()->supports(b, op, g);
}
llmc_status prepare(llmc_backend *b, const llmc_graph_desc *g,
                    llmc_prepared **out) {
  return api()->prepare(b, g, out);
}
void release(llmc_backend *b, llmc_prepared *p) { api()->release(b, p); }
llmc_status kvCreate(llmc_backend *b, const llmc_kv_cache_desc *d,
                     llmc_kv_cache **out) {
  return api()->kv_create(b, d, out);
}
void kvDestroy(llmc_backend *b, llmc_kv_cache *c) { api()->kv_destroy(b, c); }
llmc_status kvCopyBlock(llmc_backend *b, llmc_kv_cache *c, int32_t src,
                        int32_t dst) {
  return api()->kv_copy_block(b, c, src, dst);
}
llmc_status kvCopySlidingBlock(llmc_backend *b, llmc_kv_cache *c, int32_t src,
                               int32_t dst) {
  return api()->kv_copy_sliding_block(b, c, src, dst);
}
llmc_status setCommunicator(llmc_backend *b, const llmc_communicator *comm) {
  return api()->set_communicator ? api()->set_communicator(b, comm)
                                 : LLMC_UNIMPLEMENTED;
}
llmc_status execute(llmc_backend *b, llmc_prepared *p, llmc_kv_cache *c,
                    const llmc_step_args *args) {
  return api()->execute(b, p, c, args);
}

const llmc_backend_api kApi = {LLMC_BACKEND_ABI_MAJOR,
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
                               kvCopySlidingBlock,
                               setCommunicator};

} // namespace

extern "C" LLMC_BACKEND_EXPORT const llmc_backend_api *
llmc_backend_query(uint32_t max_abi_major, void *) {
  return max_abi_major >= LLMC_BACKEND_ABI_MAJOR ? &kApi : nullptr;
}
