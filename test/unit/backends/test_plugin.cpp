//===- test_plugin.cpp - Plugins the registry must refuse
//------------------===//
//
// Built three times (see CMakeLists.txt) into a directory of its own:
//   badabi: claims ABI 99.0;
//   small:  an entry table shorter than ABI 1.0's;
//   shadow: a valid plugin that also calls itself "ref", with a lower score
//           than the real one, so the real one must win.
//
//===----------------------------------------------------------------------===//
#include "llmc/backend.h"

#include <cstring>

namespace {

int32_t deviceCount(void) { return 1; }
llmc_status deviceInfo(int32_t, llmc_device_info *info) {
  std::memset(info, 0, sizeof *info);
  return LLMC_OK;
}
int32_t score(void) { return -5; }
llmc_status create(const llmc_backend_options *, llmc_backend **out) {
  *out = nullptr;
  return LLMC_UNIMPLEMENTED;
}
void destroy(llmc_backend *) {}
const char *lastError(llmc_backend *) { return "test plugin"; }
int32_t supports(llmc_backend *, const llmc_op_desc *,
                 const llmc_graph_desc *) {
  return 0;
}
llmc_status prepare(llmc_backend *, const llmc_graph_desc *, llmc_prepared **) {
  return LLMC_UNIMPLEMENTED;
}
void release(llmc_backend *, llmc_prepared *) {}
llmc_status kvCreate(llmc_backend *, const llmc_kv_cache_desc *,
                     llmc_kv_cache **) {
  return LLMC_UNIMPLEMENTED;
}
void kvDestroy(llmc_backend *, llmc_kv_cache *) {}
llmc_status kvCopyBlock(llmc_backend *, llmc_kv_cache *, int32_t, int32_t) {
  return LLMC_UNIMPLEMENTED;
}
llmc_status execute(llmc_backend *, llmc_prepared *, llmc_kv_cache *,
                    const llmc_step_args *) {
  return LLMC_UNIMPLEMENTED;
}

#if defined(TEST_PLUGIN_BADABI)
constexpr uint32_t kMajor = 99;
constexpr uint32_t kSize = sizeof(llmc_backend_api);
constexpr const char *kName = "badabi";
#elif defined(TEST_PLUGIN_SMALL)
constexpr uint32_t kMajor = LLMC_BACKEND_ABI_MAJOR;
constexpr uint32_t kSize = 16;
constexpr const char *kName = "small";
#else
constexpr uint32_t kMajor = LLMC_BACKEND_ABI_MAJOR;
constexpr uint32_t kSize = sizeof(llmc_backend_api);
constexpr const char *kName = "ref";
#endif

const llmc_backend_api kApi = {
    kMajor,      0,           kSize,   kName,   LLMC_BACKEND_BUILD_FLAVOR,
    deviceCount, deviceInfo,  score,   create,  destroy,
    lastError,   supports,    prepare, release, kvCreate,
    kvDestroy,   kvCopyBlock, execute, nullptr, nullptr,
};

} // namespace

// A real plugin returns NULL for a host it cannot serve; these answer
// anyway, so the host's own checks are what is tested.
extern "C" LLMC_BACKEND_EXPORT const llmc_backend_api *
llmc_backend_query(uint32_t, void *) {
  return &kApi;
}
