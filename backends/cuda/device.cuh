//===- device.cuh - Helpers shared by the kernel files ---------*- CUDA -*-===//
#pragma once

#include "kernels.h"

#include "llmc/backend.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace llmc::cuda {

__device__ __forceinline__ float toFloat(float v) { return v; }
__device__ __forceinline__ float toFloat(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
__device__ __forceinline__ float toFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float toFloat(int8_t v) { return float(v); }
__device__ __forceinline__ float toFloat(__nv_fp8_e4m3 v) { return float(v); }

/// i8 and fp8 caches keep a scale per token per kv head (backend.h).
template <typename C> constexpr bool kScaledKv = false;
template <> constexpr bool kScaledKv<int8_t> = true;
template <> constexpr bool kScaledKv<__nv_fp8_e4m3> = true;

template <typename T> __device__ __forceinline__ T fromFloat(float v);
template <> __device__ __forceinline__ float fromFloat<float>(float v) {
  return v;
}
template <> __device__ __forceinline__ __nv_bfloat16 fromFloat(float v) {
  return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ __half fromFloat(float v) {
  return __float2half_rn(v);
}

/// Element i of an f32, bf16 or f16 array, as f32.
__device__ __forceinline__ float loadAny(const void *p, uint32_t dtype,
                                         int64_t i) {
  if (dtype == LLMC_BF16)
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
  if (dtype == LLMC_F16)
    return __half2float(static_cast<const __half *>(p)[i]);
  return static_cast<const float *>(p)[i];
}

__device__ __forceinline__ float warpSum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warpMax(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// The sum over the block (blockDim.x a multiple of 32, at most 1024),
/// returned to every thread. `scratch` holds 32 floats.
__device__ __forceinline__ float blockSum(float v, float *scratch) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warpSum(v);
  __syncthreads(); // scratch may still be read by a previous call
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  int warps = blockDim.x / 32;
  v = lane < warps ? scratch[lane] : 0.0f;
  return warpSum(v);
}

inline unsigned blocksFor(int64_t n, int threads) {
  int64_t b = (n + threads - 1) / threads;
  return unsigned(b < 65535 * 16 ? (b > 0 ? b : 1) : 65535 * 16);
}

/// Value k of row n of a K-quant weight (llmc/support/kquant.h, whose
/// host code the device cannot call): codes `w` [N][K/256 * code bytes],
/// headers `h` [N][K/256 * header bytes], computed as ggml computes it.
__device__ __forceinline__ float kquantHalf(const uint8_t *p) {
  return __half2float(__ushort_as_half(uint16_t(p[0] | (p[1] << 8))));
}
__device__ __forceinline__ float kquantAt(uint32_t dtype, const void *w,
                                          const uint8_t *h, int64_t n,
                                          int64_t K, int64_t k) {
  const int codeBytes = dtype == LLMC_Q4_K   ? 128
                        : dtype == LLMC_Q5_K ? 160
                                             : 192;
  const int headBytes = dtype == LLMC_Q6_K ? 18 : 16;
  const int64_t block = n * (K / 256) + k / 256;
  const uint8_t *c = static_cast<const uint8_t *>(w) + block * codeBytes;
  const uint8_t *hd = h + block * headBytes;
  const int i = int(k % 256);
  if (dtype == LLMC_Q6_K) {
    const int half = i / 128, r = i % 128;
    const uint8_t *ql = c + 64 * half, *qh = c + 128 + 32 * half;
    const int low = r < 64 ? (ql[r % 64] & 0xF) : (ql[r % 64] >> 4);
    const int q = (low | (((qh[r % 32] >> (2 * (r / 32))) & 3) << 4)) - 32;
    return kquantHalf(hd + 16) * float(int8_t(hd[i / 16])) * float(q);
  }
  const uint8_t *qs = c + (dtype == LLMC_Q5_K ? 32 : 0);
  const uint8_t b = qs[(i / 64) * 32 + i % 32];
  int q = (i % 64) < 32 ? (b & 0xF) : (b >> 4);
  if (dtype == LLMC_Q5_K)
    q |= ((c[i % 32] >> (i / 32)) & 1) << 4;
  const int j = i / 32;
  const uint8_t *p = hd + 4;
  const int sc =
      j < 4 ? (p[j] & 63) : ((p[j + 4] & 0xF) | ((p[j - 4] >> 6) << 4));
  const int m =
      j < 4 ? (p[j + 4] & 63) : ((p[j + 4] >> 4) | ((p[j] >> 6) << 4));
  return kquantHalf(hd) * float(sc) * float(q) - kquantHalf(hd + 2) * float(m);
}

} // namespace llmc::cuda
