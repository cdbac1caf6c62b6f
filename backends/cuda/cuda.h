//===- cuda.h - The CUDA backend's host-side internals ---------*- C++ -*-===//
//
// Graphs and steps are validated with backends/common's checks, as in
// every backend, so all refuse the same inputs with the same messages. Prepare
// uploads each weight once (shared between the graphs of a plan by host
// pointer) and compiles every op into a closure that enqueues its kernels on
// the backend's stream.
//
// Device memory: the weights, the KV pool, one workspace per prepared graph
// (the plan's affine size for the largest T and B seen, grown as needed),
// and per backend a scratch area (activations converted for cuBLASLt,
// dequantized weights, split-K partials), the cuBLASLt workspace and the
// step-argument buffer. All of it is counted against memory_fraction of the
// device's memory.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/graph.h"
#include "common/plugin.h"
#include "common/step.h"
#include "kernels.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace llmc::cuda {

using common::Graph;
using common::InvalidArgument;
using common::OutOfMemory;

/// A CUDA or cuBLASLt failure: LLMC_ERROR with the library's message.
struct CudaError : Error {
  using Error::Error;
};

/// Throws CudaError("<what>: <cudaGetErrorString>") unless e is success.
void check(cudaError_t e, const std::string &what);
void checkLt(cublasStatus_t s, const std::string &what);

std::string mib(size_t bytes);

struct MemoryBudget {
  size_t total = 0; // device memory
  size_t limit = 0; // memory_fraction * total
  size_t used = 0;  // by this backend
  float fraction = 0.9f;
};

/// cudaMalloc'ed bytes counted against the budget. Move-only.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(std::shared_ptr<MemoryBudget> budget, size_t bytes,
               const std::string &what);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&o) noexcept { *this = std::move(o); }
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void *get() const { return ptr_; }
  size_t size() const { return bytes_; }
  template <typename T> T *as() const { return static_cast<T *>(ptr_); }

private:
  void release();
  std::shared_ptr<MemoryBudget> budget_;
  void *ptr_ = nullptr;
  size_t bytes_ = 0;
};

/// Weights on the device, shared between the graphs of a plan: an entry
/// lives while some prepared graph holds it.
class WeightCache {
public:
  template <typename Make>
  std::shared_ptr<DeviceBuffer> get(const void *data, size_t nbytes, int kind,
                                    Make make) {
    Key key{data, nbytes, kind};
    auto it = entries_.find(key);
    if (it != entries_.end())
      if (auto p = it->second.lock())
        return p;
    std::shared_ptr<DeviceBuffer> made = make();
    entries_[key] = made;
    return made;
  }

private:
  using Key = std::tuple<const void *, size_t, int>;
  std::map<Key, std::weak_ptr<DeviceBuffer>> entries_;
};

/// A cuBLASLt algorithm chosen for one problem shape and alignment.
using LtKey = std::tuple<int64_t, int64_t, int64_t, int, int, int, int>;

struct Backend {
  int device = 0;
  std::shared_ptr<MemoryBudget> budget;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  DeviceBuffer ltWorkspace;
  std::map<LtKey, cublasLtMatmulAlgo_t> ltAlgos;
  int sms = 1;
  /// Tensor parallelism: NCCL over the ranks of the host's communicator
  /// (set_communicator, nccl.cpp); null when the plan runs alone.
  std::shared_ptr<struct NcclComm> nccl;
  bool tf32 = false;     // LLMC_CUDA_TF32=1
  bool graphs = true;    // LLMC_CUDA_GRAPHS=0 turns capture off
  bool syncEach = false; // LLMC_CUDA_SYNC=1: sync after every op (debug)
  WeightCache weights;

  // Shared by every prepared graph; any reallocation bumps `generation`,
  // which invalidates captured graphs (they hold the old pointers).
  DeviceBuffer scratch;
  DeviceBuffer args;          // DevStep + the step's arrays, fixed capacities
  int32_t *staging = nullptr; // pinned host copy of `args`
  int64_t capT = 0, capB = 0, capBlocks = 0;
  uint64_t generation = 1;

  ~Backend();
};

/// The paged KV pool: per layer K then V, each num_blocks blocks of
/// llmc_kv_block_bytes (backend.h's layout).
struct KvPool {
  llmc_kv_cache_desc desc{}; // sliding_layers points into `sliding`
  DeviceBuffer memory;
  size_t blockBytes = 0;
  std::vector<size_t> offsets;  // [layers]: K at offsets[l], V after it
  std::vector<uint8_t> sliding; // [layers] or empty: in the sliding pool
  uint64_t id = 0;
  bool isSliding(int64_t layer) const {
    return !sliding.empty() && sliding[size_t(layer)] != 0;
  }
  size_t layerBytes(int64_t layer) const {
    return size_t(isSliding(layer) ? desc.num_sliding_blocks
                                   : desc.num_blocks) *
           blockBytes;
  }
  void *k(int64_t layer) const {
    return memory.as<char>() + offsets[size_t(layer)];
  }
  void *v(int64_t layer) const {
    return memory.as<char>() + offsets[size_t(layer)] + layerBytes(layer);
  }
};

/// The device-side step arguments (pointers into Backend::args).
struct DevArgs {
  const DevStep *step = nullptr;
  int32_t *tokens = nullptr, *positions = nullptr, *slots = nullptr,
          *logitsRows = nullptr, *tiles = nullptr, *queryStart = nullptr,
          *contextLens = nullptr, *blockTables = nullptr;
  int32_t *ropeLong = nullptr; // [T] 1: LongRoPE's long table (ABI 1.5)
  /// The sliding pool's slots and tables (ABI 1.6; null without one).
  int32_t *slidingSlots = nullptr, *slidingBlockTables = nullptr;
  const int32_t *slotsOf(const KvPool &kv, int64_t layer) const {
    return kv.isSliding(layer) ? slidingSlots : slots;
  }
  const int32_t *blockTablesOf(const KvPool &kv, int64_t layer) const {
    return kv.isSliding(layer) ? slidingBlockTables : blockTables;
  }
};

/// What an op's closure sees while it enqueues its kernels.
struct StepCtx {
  Backend &be;
  cudaStream_t stream;
  int64_t T, B;              // as launched (a decode bucket pads them)
  std::vector<float *> buf;  // device address of every buffer
  std::vector<int64_t> rows; // rows of every buffer at (T, B)
  DevArgs args;
  KvPool *kv = nullptr;
  int32_t tiles = 0;        // prefill attention tiles
  int32_t splits = 1;       // decode attention splits
  char *scratch = nullptr;  // linear conversions
  float *partial = nullptr; // decode split-K partials
};

using Kernel = std::function<void(StepCtx &)>;

/// Host checks an op makes on a step before anything is enqueued (ref's
/// run-time checks: ids in range, rows, cache shape).
using Check = std::function<void(const llmc_step_args &, const KvPool *,
                                 const std::vector<int64_t> &rows)>;

struct Captured {
  cudaGraphExec_t exec = nullptr;
  uint64_t generation = 0, kvId = 0;
  bool failed = false;
};

struct Prepared {
  Graph graph;
  std::vector<Kernel> kernels;
  std::vector<Check> checks;
  std::vector<std::shared_ptr<DeviceBuffer>> weights; // held for the kernels
  DeviceBuffer workspace;
  bool decodeGraph = false; // DECODE_ATTENTION and no PREFILL_ATTENTION
  int32_t tileGroup = 0;    // prefill: query heads per kv head (0: none)
  // Scratch needs: per linear op taking the cuBLASLt path, and attention.
  struct LinearNeed {
    uint32_t x;
    int64_t K, N;
    bool half, quant;
  };
  std::vector<LinearNeed> linears;
  int64_t attnHeads = 0, attnHeadDim = 0, attnKvHeads = 0;
  std::map<int64_t, Captured> captured; // decode bucket -> graph
  ~Prepared();
};

void prepareGraph(Backend &b, const llmc_graph_desc &desc, Prepared &p);

/// NCCL over the host's ranks (nccl.cpp): the unique id travels through the
/// host's all-reduce. Throws Unimplemented in a build without NCCL.
std::shared_ptr<NcclComm> ncclOver(Backend &b, const llmc_communicator &comm);
/// out = the sum of in over every rank, on the step's stream.
void ncclAllReduce(NcclComm &comm, const float *in, float *out, size_t n,
                   cudaStream_t stream);
void executeGraph(Backend &b, Prepared &p, KvPool *kv,
                  const llmc_step_args &args);
void initKvPool(Backend &b, KvPool &pool, const llmc_kv_cache_desc &desc);
void copyKvBlock(Backend &b, KvPool &pool, int32_t src, int32_t dst,
                 bool sliding);
/// Whether this backend runs `op` (beyond ref's checks).
bool supportsOp(const llmc_op_desc &op);

//===-- Linear (linear.cpp) -----------------------------------------------===//

/// D[M, N] (f32) = B[M, K] · A[N, K]ᵀ, A and B of `type` (CUDA_R_32F,
/// CUDA_R_16BF or CUDA_R_16F), accumulated in f32 by cuBLASLt.
void ltMatmul(Backend &b, cudaStream_t s, cudaDataType type, const void *A,
              const void *B, float *D, int64_t M, int64_t N, int64_t K);

Kernel makeLinear(const llmc_op_desc &op, const Graph &g, Backend &b,
                  Prepared &p);

/// A weight uploaded as its raw bytes, or converted to f32 (kind 1).
std::shared_ptr<DeviceBuffer> uploadWeight(Backend &b,
                                           const llmc_weight_desc &w);
std::shared_ptr<DeviceBuffer>
uploadWeightF32(Backend &b, const llmc_weight_desc &w, int64_t count);

} // namespace llmc::cuda
