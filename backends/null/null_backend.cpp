//===- null_backend.cpp - The skeleton a new backend starts from
//-----------===//
//
// Copy backends/null to backends/NAME, rename the target in CMakeLists.txt,
// set kName, and replace each "is not implemented" in turn. The runtime's
// errors tell you which entry it needs next, and test/conformance tells you
// when an op is right (it compares every op with the ref backend).
//
// Rules every entry follows (see backends/include/llmc/backend.h):
//  - Never let a C++ exception or a signal escape: catch, return a status and
//    keep a message for last_error.
//  - Memory is freed by the side that allocated it: the host never frees a
//    pointer of yours, and you never free one of the host's.
//  - One host thread uses a backend object at a time; your own threads inside
//    execute are fine.
//
//===----------------------------------------------------------------------===//
#include "llmc/backend.h"

#include <cstdio>
#include <cstring>
#include <new>
#include <string>

// Per-backend state. A real backend keeps its device handle, streams,
// thread pool and the message of its last failure here. (llmc_prepared and
// llmc_kv_cache are defined the same way.)
struct llmc_backend {
  std::string error;
};

namespace {

constexpr const char *kName = "null";

// The message of the last failed create, which has no backend to hold it.
thread_local std::string createError;

llmc_status unimplemented(std::string &error, const char *entry) {
  error = std::string(kName) + " backend: " + entry + " is not implemented";
  return LLMC_UNIMPLEMENTED;
}

std::string &errorOf(llmc_backend *backend) {
  return backend ? backend->error : createError;
}

// How many devices this build can see. Report devices that are present but
// unusable too (say, a GPU with too old a driver): the user is told why.
int32_t deviceCount(void) { return 1; }

// Fill in `info` for one device. usable = 0 with a reason keeps the runtime
// from choosing it while `llmc` can still explain the choice.
llmc_status deviceInfo(int32_t device, llmc_device_info *info) {
  if (device != 0 || !info)
    return LLMC_INVALID_ARGUMENT;
  std::memset(info, 0, sizeof *info);
  std::snprintf(info->name, sizeof info->name, "null device");
  info->usable = 0;
  std::snprintf(info->reason, sizeof info->reason,
                "the null backend is a template and runs nothing");
  return LLMC_OK;
}

// Optional: when several builds of one backend load (cpu-avx512, cpu-amx),
// the highest score that runs on this machine wins. Return a negative score
// when this build cannot run here at all.
int32_t score(void) { return 0; }

// Open options->device with options->threads worker threads (0 = one per
// core) and return a backend object. On failure leave *out NULL and a message
// for last_error(NULL).
llmc_status create(const llmc_backend_options *, llmc_backend **out) {
  if (out)
    *out = nullptr;
  return unimplemented(createError, "create");
}

// Free everything create allocated. Prepared graphs and caches are released
// by the host first.
void destroy(llmc_backend *backend) { delete backend; }

// The message of this backend's last failure (or of the last failed create
// when backend is NULL). The pointer stays valid until the next call.
const char *lastError(llmc_backend *backend) {
  return errorOf(backend).c_str();
}

// 1 if `op`, with the dtypes of its operands in `graph`, runs here. The
// runtime refuses a plan whose ops a backend does not support, before any
// weight is touched; be exact rather than optimistic.
int32_t supports(llmc_backend *, const llmc_op_desc *,
                 const llmc_graph_desc *) {
  return 0;
}

// Validate the graph and do every per-graph cost once: pack or upload
// weights (graph->weights[i].data is host memory that outlives the prepared
// object), choose kernels, size the workspace from workspace_{t,b,c}. Return
// LLMC_INVALID_ARGUMENT with a message naming the op for a graph you cannot
// run.
llmc_status prepare(llmc_backend *backend, const llmc_graph_desc *,
                    llmc_prepared **out) {
  if (out)
    *out = nullptr;
  return unimplemented(errorOf(backend), "prepare");
}

// Free what prepare made.
void release(llmc_backend *, llmc_prepared *) {}

// Allocate the paged KV pool: per layer, K and V each [num_blocks,
// block_size, kv_heads, head_dim] in desc->dtype (vLLM's layout).
llmc_status kvCreate(llmc_backend *backend, const llmc_kv_cache_desc *,
                     llmc_kv_cache **out) {
  if (out)
    *out = nullptr;
  return unimplemented(errorOf(backend), "kv_create");
}

void kvDestroy(llmc_backend *, llmc_kv_cache *) {}

// Copy block src to block dst in every layer, K and V (copy-on-write when
// sequences that shared a prefix diverge).
llmc_status kvCopyBlock(llmc_backend *backend, llmc_kv_cache *, int32_t,
                        int32_t) {
  return unimplemented(errorOf(backend), "kv_copy_block");
}

// Run one step: validate args (every slot, block index and id is checked
// before use: LLMC_INVALID_ARGUMENT, never an out-of-bounds read), evaluate
// each buffer's rows for T and B, run the ops in order, and copy
// args->num_logits rows of the logits buffer to args->logits.
llmc_status execute(llmc_backend *backend, llmc_prepared *, llmc_kv_cache *,
                    const llmc_step_args *) {
  return unimplemented(errorOf(backend), "execute");
}

// Entries appended in later ABI minors go at the end, in header order.
const llmc_backend_api kApi = {
    LLMC_BACKEND_ABI_MAJOR,
    LLMC_BACKEND_ABI_MINOR,
    sizeof(llmc_backend_api),
    kName,
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

// The one exported symbol. Return NULL when this plugin needs a newer host
// than one whose ABI major is max_abi_major.
extern "C" LLMC_BACKEND_EXPORT const llmc_backend_api *
llmc_backend_query(uint32_t max_abi_major, void *) {
  return max_abi_major >= LLMC_BACKEND_ABI_MAJOR ? &kApi : nullptr;
}
