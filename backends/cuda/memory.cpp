//===- memory.cpp - Device memory, weight uploads and the KV pool ---------===//
#include "cuda.h"

#include "llmc/support/half.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace llmc::cuda {

void check(cudaError_t e, const std::string &what) {
  if (e != cudaSuccess) {
    cudaGetLastError(); // clear a non-sticky error
    throw CudaError(what + ": " + cudaGetErrorString(e));
  }
}

void checkLt(cublasStatus_t s, const std::string &what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw CudaError(what + ": cuBLASLt status " + std::to_string(int(s)));
}

std::string mib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / (1 << 20));
  return text;
}

DeviceBuffer::DeviceBuffer(std::shared_ptr<MemoryBudget> budget, size_t bytes,
                           const std::string &what)
    : budget_(std::move(budget)) {
  bytes = std::max<size_t>(bytes, 256);
  if (budget_->used + bytes > budget_->limit) {
    char frac[16];
    std::snprintf(frac, sizeof frac, "%.2f", double(budget_->fraction));
    throw OutOfMemory(what + " needs " + mib(bytes) + " but only " +
                      mib(budget_->limit > budget_->used
                              ? budget_->limit - budget_->used
                              : 0) +
                      " are left: memory_fraction " + frac + " of " +
                      mib(budget_->total) + " allows " + mib(budget_->limit) +
                      " and " + mib(budget_->used) + " are in use");
  }
  cudaError_t e = cudaMalloc(&ptr_, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    ptr_ = nullptr;
    throw OutOfMemory(what + ": cudaMalloc of " + mib(bytes) +
                      " failed: " + cudaGetErrorString(e));
  }
  bytes_ = bytes;
  budget_->used += bytes;
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&o) noexcept {
  if (this != &o) {
    release();
    budget_ = std::move(o.budget_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::release() {
  if (ptr_) {
    cudaFree(ptr_);
    budget_->used -= bytes_;
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

Backend::~Backend() {
  scratch = DeviceBuffer();
  args = DeviceBuffer();
  ltWorkspace = DeviceBuffer();
  if (staging)
    cudaFreeHost(staging);
  if (lt)
    cublasLtDestroy(lt);
  if (stream)
    cudaStreamDestroy(stream);
}

Prepared::~Prepared() {
  for (auto &[bucket, c] : captured)
    if (c.exec)
      cudaGraphExecDestroy(c.exec);
}

std::shared_ptr<DeviceBuffer> uploadWeight(Backend &b,
                                           const llmc_weight_desc &w) {
  return b.weights.get(w.data, w.nbytes, 0, [&] {
    auto d = std::make_shared<DeviceBuffer>(b.budget, w.nbytes,
                                            std::string("weight '") +
                                                (w.name ? w.name : "?") + "'");
    check(cudaMemcpy(d->get(), w.data, w.nbytes, cudaMemcpyHostToDevice),
          std::string("uploading weight '") + (w.name ? w.name : "?") + "'");
    return d;
  });
}

std::shared_ptr<DeviceBuffer>
uploadWeightF32(Backend &b, const llmc_weight_desc &w, int64_t count) {
  return b.weights.get(w.data, w.nbytes, 1, [&] {
    std::vector<float> host(static_cast<size_t>(count));
    common::loadWeight(w, 0, count, host.data());
    auto d = std::make_shared<DeviceBuffer>(b.budget, host.size() * 4,
                                            std::string("weight '") +
                                                (w.name ? w.name : "?") + "'");
    check(cudaMemcpy(d->get(), host.data(), host.size() * 4,
                     cudaMemcpyHostToDevice),
          std::string("uploading weight '") + (w.name ? w.name : "?") + "'");
    return d;
  });
}

void initKvPool(Backend &b, KvPool &pool, const llmc_kv_cache_desc &desc) {
  common::checkKvCacheDesc(desc);
  pool.desc = desc;
  pool.sliding.clear();
  if (desc.sliding_layers)
    pool.sliding.assign(desc.sliding_layers, desc.sliding_layers + desc.layers);
  pool.desc.sliding_layers =
      pool.sliding.empty() ? nullptr : pool.sliding.data();
  pool.blockBytes = size_t(llmc_kv_block_bytes(desc.dtype, desc.block_size,
                                               desc.kv_heads, desc.head_dim));
  // Per layer K then V, each its pool's blocks; cleared below, so sliding
  // block 0 reads as zeros.
  size_t total = 0;
  pool.offsets.assign(desc.layers, 0);
  for (uint32_t l = 0; l < desc.layers; ++l) {
    pool.offsets[l] = total;
    total += 2 * pool.layerBytes(l);
  }
  try {
    pool.memory = DeviceBuffer(b.budget, total, "the KV pool");
  } catch (const OutOfMemory &e) {
    throw OutOfMemory(std::string(e.what()) + " (" +
                      std::to_string(desc.num_blocks) + " blocks of " +
                      std::to_string(desc.block_size) +
                      " tokens; use fewer blocks or a higher memory_fraction)");
  }
  check(cudaMemsetAsync(pool.memory.get(), 0, total, b.stream),
        "clearing the KV pool");
  check(cudaStreamSynchronize(b.stream), "clearing the KV pool");
  static uint64_t nextId = 1;
  pool.id = nextId++;
}

void copyKvBlock(Backend &b, KvPool &pool, int32_t src, int32_t dst,
                 bool sliding) {
  common::checkBlockCopy(pool.desc, src, dst, sliding);
  if (src == dst)
    return;
  const llmc_kv_cache_desc &d = pool.desc;
  const size_t blockBytes = pool.blockBytes;
  for (uint32_t l = 0; l < d.layers; ++l)
    for (void *base : {pool.k(l), pool.v(l)})
      if (pool.isSliding(l) == sliding)
        check(cudaMemcpyAsync(static_cast<char *>(base) + dst * blockBytes,
                              static_cast<char *>(base) + src * blockBytes,
                              blockBytes, cudaMemcpyDeviceToDevice, b.stream),
              "kv_copy_block");
  check(cudaStreamSynchronize(b.stream), "kv_copy_block");
}

} // namespace llmc::cuda
