//===- host.cpp - Steps in host memory ------------------------------------===//
#include "common/host.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace llmc::common {

HostMemory::HostMemory(size_t bytes) : size_(bytes) {
  if (bytes == 0)
    return;
  void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw std::bad_alloc();
  data_ = static_cast<uint8_t *>(p);
}

HostMemory::~HostMemory() {
  if (data_)
    munmap(data_, size_);
}

HostMemory &HostMemory::operator=(HostMemory &&o) noexcept {
  if (this != &o) {
    if (data_)
      munmap(data_, size_);
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void initKvCache(KvCache &cache, const llmc_kv_cache_desc &desc) {
  checkKvCacheDesc(desc);
  cache.desc = desc;
  cache.layout = KvLayout(desc);
  cache.sliding.clear();
  if (desc.sliding_layers)
    cache.sliding.assign(desc.sliding_layers,
                         desc.sliding_layers + desc.layers);
  cache.desc.sliding_layers =
      cache.sliding.empty() ? nullptr : cache.sliding.data();
  cache.k.clear();
  cache.v.clear();
  // Anonymous mappings start zeroed: sliding block 0 reads as zeros.
  for (uint32_t l = 0; l < desc.layers; ++l) {
    size_t bytes =
        size_t(cache.isSliding(l) ? desc.num_sliding_blocks : desc.num_blocks) *
        cache.layout.blockBytes;
    cache.k.emplace_back(bytes);
    cache.v.emplace_back(bytes);
  }
}

void copyKvBlock(KvCache &cache, int32_t src, int32_t dst, bool sliding) {
  checkBlockCopy(cache.desc, src, dst, sliding);
  const size_t blockBytes = cache.layout.blockBytes;
  for (uint32_t l = 0; l < cache.desc.layers; ++l) {
    if (cache.isSliding(l) != sliding)
      continue;
    for (auto *layer : {&cache.k[l], &cache.v[l]}) {
      uint8_t *base = layer->data();
      std::memmove(base + dst * blockBytes, base + src * blockBytes,
                   blockBytes);
    }
  }
}

void storeKvRow(const KvCache &cache, HostMemory &layer, int64_t slot,
                const float *row) {
  const KvLayout &kv = cache.layout;
  for (int64_t h = 0; h < kv.kvHeads; ++h)
    encodeKvHead(
        row + h * kv.headDim, kv.headDim, kv.dtype,
        layer.data() + kv.data(slot, h),
        kv.scaled ? reinterpret_cast<float *>(layer.data() + kv.scale(slot, h))
                  : nullptr);
}

void loadKvRow(const KvCache &cache, const HostMemory &layer, int64_t slot,
               float *row) {
  const KvLayout &kv = cache.layout;
  for (int64_t h = 0; h < kv.kvHeads; ++h) {
    float scale = 1.0f;
    if (kv.scaled)
      std::memcpy(&scale, layer.data() + kv.scale(slot, h), 4);
    decodeKvHead(layer.data() + kv.data(slot, h), kv.headDim, kv.dtype, scale,
                 row + h * kv.headDim);
  }
}

KvCache &Step::kv() const {
  if (!cache)
    throw InvalidArgument("this graph uses the KV cache but none was given");
  return *cache;
}

float *AlignedBuffer::reserve(size_t n) {
  if (n > floats || !data) {
    size_t bytes = (std::max<size_t>(n, 1) * 4 + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, bytes);
    if (!p)
      throw std::bad_alloc();
    data.reset(static_cast<float *>(p));
    floats = n;
  }
  return data.get();
}

AttentionShape expectAttentionStep(const llmc_op_desc &op, const Step &step,
                                   bool decode) {
  AttentionShape s = attentionShape(op);
  expectCacheFits(step.kv().desc, s);
  Matrix q = step.operand(op, 0), out = step.result(op, 0);
  expectRows(q, decode ? step.args.num_seqs : step.args.num_tokens, "q");
  expectRows(out, q.rows, "the result");
  return s;
}

namespace {
struct HostPool : KvPool {
  KvCache cache;
};
} // namespace

std::unique_ptr<KvPool>
HostBackend::createKvCache(const llmc_kv_cache_desc &desc) {
  auto pool = std::make_unique<HostPool>();
  initKvCache(pool->cache, desc);
  return pool;
}

void HostBackend::copyKvBlock(KvPool &pool, int32_t src, int32_t dst,
                              bool sliding) {
  common::copyKvBlock(static_cast<HostPool &>(pool).cache, src, dst, sliding);
}

KvCache *HostBackend::hostCache(KvPool *pool) {
  return pool ? &static_cast<HostPool *>(pool)->cache : nullptr;
}

void HostBackend::allReduce(const llmc_op_desc &op, Step &step) const {
  if (!comm_)
    throw InvalidArgument("all_reduce needs a communicator (a tensor-parallel "
                          "plan runs under mpirun)");
  const Matrix in = step.operand(op, 0), out = step.result(op, 0);
  expectRows(out, in.rows, "the result");
  expectCols(out.cols, in.cols, "the result");
  const size_t n = size_t(in.rows * in.cols);
  if (out.data != in.data)
    std::copy(in.data, in.data + n, out.data);
  if (comm_->all_reduce_sum_f32(comm_->context, out.data, n) != LLMC_OK)
    throw Error("all_reduce over " + std::to_string(comm_->size) +
                " ranks failed (a rank lost?)");
}

void runHostStep(const Graph &g, AlignedBuffer &workspace, KvCache *cache,
                 const llmc_step_args &args,
                 const std::function<void(size_t, Step &)> &runOp) {
  checkStepArgs(g, cache ? &cache->desc : nullptr, args);
  int64_t bytes = 0;
  std::vector<Span> spans =
      placeBuffers(g, args.num_tokens, args.num_seqs, 64, bytes);
  checkLogitRows(g, spans, args);
  float *base = workspace.reserve(size_t(bytes + 3) / 4);
  Step step{g, args, cache, {}};
  step.buffers.resize(spans.size());
  for (size_t i = 0; i < spans.size(); ++i)
    step.buffers[i] = {base + spans[i].offset / 4, spans[i].rows,
                       spans[i].cols};

  for (size_t i = 0; i < g.ops.size(); ++i) {
    try {
      checkAliasing(g.ops[i], spans);
      runOp(i, step);
    } catch (const InvalidArgument &e) {
      throw InvalidArgument(opWhere(g, i) + ": " + e.what());
    }
  }

  const Matrix &logits = step.buffers[g.logitsBuffer];
  if (args.num_logits > 0)
    std::memcpy(args.logits, logits.data,
                size_t(args.num_logits * logits.cols) * sizeof(float));
}

} // namespace llmc::common
