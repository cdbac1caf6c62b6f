//===- kv_cache.cpp - The paged KV pool in host memory
//---------------------===//
//
// vLLM's layout: a slot is block * block_size + offset, and a row of K (or V)
// at a slot is kv_heads * head_dim values in the cache dtype. Values are
// converted to and from f32 at the edges; attention always computes in f32.
//
//===----------------------------------------------------------------------===//
#include "ref.h"

#include "llmc/support/half.h"

#include <cstring>

namespace llmc::ref {

void initKvCache(KvCache &cache, const llmc_kv_cache_desc &desc) {
  if (desc.layers == 0 || desc.kv_heads == 0 || desc.head_dim == 0 ||
      desc.block_size == 0 || desc.num_blocks == 0)
    throw InvalidArgument("kv cache: layers, kv_heads, head_dim, block_size "
                          "and num_blocks must be positive");
  if (desc.dtype != LLMC_F32 && desc.dtype != LLMC_BF16 &&
      desc.dtype != LLMC_F16)
    throw InvalidArgument("kv cache: dtype must be f32, bf16 or f16");
  cache.desc = desc;
  size_t bytes = size_t(cache.slots()) * size_t(cache.rowElements()) *
                 dtypeSize(desc.dtype);
  cache.k.assign(desc.layers, std::vector<uint8_t>(bytes));
  cache.v.assign(desc.layers, std::vector<uint8_t>(bytes));
}

void copyKvBlock(KvCache &cache, int32_t src, int32_t dst) {
  int64_t blocks = cache.desc.num_blocks;
  if (src < 0 || src >= blocks || dst < 0 || dst >= blocks)
    throw InvalidArgument("kv_copy_block: block " +
                          std::to_string(src < 0 || src >= blocks ? src : dst) +
                          " is outside the pool of " + std::to_string(blocks) +
                          " blocks");
  size_t blockBytes = size_t(cache.desc.block_size) *
                      size_t(cache.rowElements()) * dtypeSize(cache.desc.dtype);
  for (uint32_t l = 0; l < cache.desc.layers; ++l) {
    for (auto *layer : {&cache.k[l], &cache.v[l]}) {
      uint8_t *base = layer->data();
      std::memmove(base + dst * blockBytes, base + src * blockBytes,
                   blockBytes);
    }
  }
}

void storeKvRow(const KvCache &cache, std::vector<uint8_t> &layer, int64_t slot,
                const float *row) {
  int64_t n = cache.rowElements();
  uint8_t *dst = layer.data() + slot * n * dtypeSize(cache.desc.dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (cache.desc.dtype == LLMC_F32) {
      std::memcpy(dst + i * 4, &row[i], 4);
    } else {
      uint16_t h = cache.desc.dtype == LLMC_BF16 ? floatToBf16(row[i])
                                                 : floatToF16(row[i]);
      std::memcpy(dst + i * 2, &h, 2);
    }
  }
}

void loadKvRow(const KvCache &cache, const std::vector<uint8_t> &layer,
               int64_t slot, float *row) {
  int64_t n = cache.rowElements();
  const uint8_t *src = layer.data() + slot * n * dtypeSize(cache.desc.dtype);
  for (int64_t i = 0; i < n; ++i) {
    if (cache.desc.dtype == LLMC_F32) {
      std::memcpy(&row[i], src + i * 4, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, src + i * 2, 2);
      row[i] = cache.desc.dtype == LLMC_BF16 ? bf16ToFloat(h) : f16ToFloat(h);
    }
  }
}

} // namespace llmc::ref
