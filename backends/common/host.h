//===- host.h - Steps in host memory (the ref and cpu backends) -*- C++ -*-===//
//
// The paged KV pool in host memory, the aligned workspace, and the step
// loop both host backends share: check the step's metadata, place the
// buffers, run each op (after its aliasing check) and copy the logits out.
// A backend supplies only how one op runs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/kv_format.h"
#include "common/op_checks.h"
#include "common/plugin.h"
#include "common/step.h"

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace llmc::common {

/// Zeroed host memory that costs no resident memory until it is touched
/// (an anonymous mapping): a KV pool sized for many sequences grows the
/// process only as blocks are used. Move-only.
class HostMemory {
public:
  HostMemory() = default;
  explicit HostMemory(size_t bytes);
  ~HostMemory();
  HostMemory(HostMemory &&o) noexcept { *this = std::move(o); }
  HostMemory &operator=(HostMemory &&o) noexcept;
  HostMemory(const HostMemory &) = delete;
  HostMemory &operator=(const HostMemory &) = delete;

  uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  uint8_t &operator[](size_t i) const { return data_[i]; }

private:
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

/// The paged KV pool: per layer, K and V each num_blocks blocks in the
/// layout of backend.h (with scales for i8 and fp8). A slot is block *
/// block_size + offset (vLLM's layout).
struct KvCache {
  llmc_kv_cache_desc desc{}; // sliding_layers points into `sliding`
  KvLayout layout;
  std::vector<HostMemory> k, v; // one per layer
  std::vector<uint8_t> sliding; // [layers]: 1 = in the sliding pool

  int64_t rowElements() const { return int64_t(desc.kv_heads) * desc.head_dim; }
  bool isSliding(int64_t layer) const {
    return !sliding.empty() && sliding[size_t(layer)] != 0;
  }
};

void initKvCache(KvCache &cache, const llmc_kv_cache_desc &desc);
/// Copies block src to dst in every layer of its pool (copy-on-write).
void copyKvBlock(KvCache &cache, int32_t src, int32_t dst, bool sliding);
/// One K or V row (kv_heads * head_dim values) at a slot of a layer,
/// converted from / to f32 head by head.
void storeKvRow(const KvCache &cache, HostMemory &layer, int64_t slot,
                const float *row);
void loadKvRow(const KvCache &cache, const HostMemory &layer, int64_t slot,
               float *row);

/// An f32 activation, rows x cols, row-major and contiguous (or, for an
/// I32 buffer, the same bytes as int32: `ids`).
struct Matrix {
  float *data = nullptr;
  int64_t rows = 0, cols = 0;
  float *row(int64_t r) const { return data + r * cols; }
  int32_t *ids() const { return reinterpret_cast<int32_t *>(data); }
};

/// Everything an op sees while one step runs.
struct Step {
  const Graph &graph;
  const llmc_step_args &args;
  KvCache *cache;
  std::vector<Matrix> buffers; // placed for this step's T and B

  Matrix operand(const llmc_op_desc &op, int slot) const {
    return buffers[op.operands[slot].index];
  }
  Matrix result(const llmc_op_desc &op, int slot) const {
    return buffers[op.results[slot]];
  }
  const llmc_weight_desc &weight(const llmc_op_desc &op, int slot) const {
    return graph.weights[op.operands[slot].index];
  }
  /// tokens (INPUT 0) or positions (INPUT 1), T values.
  const int32_t *input(const llmc_op_desc &op, int slot) const {
    return op.operands[slot].index == 0 ? args.tokens : args.positions;
  }
  /// The pool; throws InvalidArgument when the step was given none.
  KvCache &kv() const;
  /// Where `layer` writes the step's tokens ([T] slots) and reads its
  /// sequences' blocks ([B, max_blocks]): its pool's.
  const int32_t *slots(int64_t layer) const {
    return kv().isSliding(layer) ? args.sliding_slot_mapping
                                 : args.slot_mapping;
  }
  const int32_t *blockTables(int64_t layer) const {
    return kv().isSliding(layer) ? args.sliding_block_tables
                                 : args.block_tables;
  }
};

struct AlignedFree {
  void operator()(void *p) const { std::free(p); }
};

/// Cache-line aligned f32 storage that only grows.
struct AlignedBuffer {
  std::unique_ptr<float, AlignedFree> data;
  size_t floats = 0;
  float *reserve(size_t n);
};

/// A step-time check: `m` has `rows` rows in this step.
inline void expectRows(const Matrix &m, int64_t rows, const char *what) {
  expectRows(m.rows, rows, what);
}

/// The step-time checks of PREFILL_ATTENTION / DECODE_ATTENTION (the pool
/// fits the op; q and the result have T, or B, rows); returns the shape.
AttentionShape expectAttentionStep(const llmc_op_desc &op, const Step &step,
                                   bool decode);

/// Runs one step of `g` in `workspace`: `runOp(i, step)` runs op i. Errors
/// from an op are prefixed with where it is ("graph 'x' op 3 (rope): ").
void runHostStep(const Graph &g, AlignedBuffer &workspace, KvCache *cache,
                 const llmc_step_args &args,
                 const std::function<void(size_t, Step &)> &runOp);

/// A backend whose KV pool lives in host memory (ref, cpu): the pool and
/// copy-on-write are this class's; `hostCache` reads the pool a step got.
class HostBackend : public Backend {
public:
  std::unique_ptr<KvPool>
  createKvCache(const llmc_kv_cache_desc &desc) override;
  void copyKvBlock(KvPool &pool, int32_t src, int32_t dst,
                   bool sliding) override;
  void setCommunicator(const llmc_communicator &comm) override { comm_ = comm; }

protected:
  static KvCache *hostCache(KvPool *pool);
  /// ALL_REDUCE: the result (which may be the operand) becomes the sum of
  /// the operand over every rank; throws without a communicator.
  void allReduce(const llmc_op_desc &op, Step &step) const;

private:
  std::optional<llmc_communicator> comm_;
};

} // namespace llmc::common
