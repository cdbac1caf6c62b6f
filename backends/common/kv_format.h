//===- kv_format.h - Where a K/V row lives in a block, and its codec -*- C++
//-*-===//
//
// The one reading of backend.h's cache layout on the host: the ref and cpu
// backends store and load through it, the cuda backend sizes its pool with
// it, and its kernels repeat the same arithmetic (device.cuh). i8 and fp8
// rows carry one f32 scale per token per kv head.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/backend.h"

#include <cstddef>
#include <cstdint>

namespace llmc::common {

/// Byte offsets of one head's row in one layer's K (or V) memory.
struct KvLayout {
  uint32_t dtype = LLMC_F32;
  int64_t blockSize = 0, kvHeads = 0, headDim = 0;
  size_t elementBytes = 4; // 4, 2 or 1
  size_t blockBytes = 0;
  bool scaled = false; // i8 and fp8: a scale per token per kv head

  explicit KvLayout(const llmc_kv_cache_desc &desc);
  KvLayout() = default;

  /// The head_dim values of (slot, head).
  size_t data(int64_t slot, int64_t head) const {
    return size_t(slot / blockSize) * blockBytes +
           size_t(((slot % blockSize) * kvHeads + head) * headDim) *
               elementBytes;
  }
  /// The f32 scale of (slot, head); only when scaled.
  size_t scale(int64_t slot, int64_t head) const {
    return size_t(slot / blockSize) * blockBytes +
           size_t(blockSize * kvHeads * headDim) +
           size_t((slot % blockSize) * kvHeads + head) * 4;
  }
};

/// Encodes n values of one head in `dtype`: for i8 and fp8 also writes the
/// row's scale (backend.h's rule).
void encodeKvHead(const float *x, int64_t n, uint32_t dtype, uint8_t *out,
                  float *scale);
/// Decodes n values of one head (`scale` is read for i8 and fp8 only).
void decodeKvHead(const uint8_t *in, int64_t n, uint32_t dtype, float scale,
                  float *out);

} // namespace llmc::common
