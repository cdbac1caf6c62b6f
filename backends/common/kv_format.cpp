//===- kv_format.cpp - The KV cache's row formats -------------------------===//
#include "common/kv_format.h"

#include "llmc/support/half.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace llmc::common {

KvLayout::KvLayout(const llmc_kv_cache_desc &desc)
    : dtype(desc.dtype), blockSize(desc.block_size), kvHeads(desc.kv_heads),
      headDim(desc.head_dim),
      elementBytes(desc.dtype == LLMC_F32                              ? 4
                   : desc.dtype == LLMC_BF16 || desc.dtype == LLMC_F16 ? 2
                                                                       : 1),
      blockBytes(size_t(llmc_kv_block_bytes(desc.dtype, desc.block_size,
                                            desc.kv_heads, desc.head_dim))),
      scaled(desc.dtype == LLMC_I8 || desc.dtype == LLMC_FP8_E4M3) {}

void encodeKvHead(const float *x, int64_t n, uint32_t dtype, uint8_t *out,
                  float *scale) {
  switch (dtype) {
  case LLMC_F32:
    std::memcpy(out, x, size_t(n) * 4);
    return;
  case LLMC_BF16:
  case LLMC_F16:
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h = dtype == LLMC_BF16 ? floatToBf16(x[i]) : floatToF16(x[i]);
      std::memcpy(out + i * 2, &h, 2);
    }
    return;
  default:
    break;
  }
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i)
    amax = std::max(amax, std::fabs(x[i]));
  const float s = amax / (dtype == LLMC_I8 ? 127.0f : 448.0f);
  std::memcpy(scale, &s, 4);
  for (int64_t i = 0; i < n; ++i) {
    float v = s > 0 ? x[i] / s : 0.0f;
    if (std::isnan(v)) // a broken activation: 0, not an undefined cast
      v = 0.0f;
    out[i] = dtype == LLMC_I8
                 ? static_cast<uint8_t>(static_cast<int8_t>(
                       std::clamp(std::nearbyint(v), -127.0f, 127.0f)))
                 : floatToFp8E4M3(v);
  }
}

void decodeKvHead(const uint8_t *in, int64_t n, uint32_t dtype, float scale,
                  float *out) {
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
    case LLMC_F32:
      std::memcpy(&out[i], in + i * 4, 4);
      break;
    case LLMC_BF16:
    case LLMC_F16: {
      uint16_t h;
      std::memcpy(&h, in + i * 2, 2);
      out[i] = dtype == LLMC_BF16 ? bf16ToFloat(h) : f16ToFloat(h);
      break;
    }
    case LLMC_I8:
      out[i] = float(static_cast<int8_t>(in[i])) * scale;
      break;
    default:
      out[i] = fp8E4M3ToFloat(in[i]) * scale;
    }
  }
}

} // namespace llmc::common
