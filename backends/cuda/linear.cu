//===- linear.cu - Small-row GEMV and weight dequantization ---------------===//
//
// Decode steps (rows <= 8) are bound by reading W once: one warp per output
// column n streams row n of W in 8-value chunks (16-byte loads for bf16/f16,
// 8 for i8, 4 for i4) and multiplies it with every row of x, accumulating in
// f32. One instantiation per weight dtype. Longer steps go to cuBLASLt; for
// i8/i4/MXFP4/K-quants the weight is first expanded to bf16 here. A
// K-quant's values are decoded one by one (kquantAt): correct, not yet fast.
//
//===----------------------------------------------------------------------===//
#include "device.cuh"

namespace llmc::cuda {
namespace {

constexpr int kWarps = 8;

// MXFP4: E2M1 code q's value and an E8M0 byte's scale, 2^(s - 127).
__device__ __forceinline__ float e2m1(uint32_t q) {
  const uint32_t m = q & 7; // 0, 0.5, 1, 1.5, 2, 3, 4, 6
  const float v = m < 4 ? float(m) * 0.5f : m == 7 ? 6.0f : float(m - 2);
  return (q & 8) ? -v : v;
}
__device__ __forceinline__ float e8m0(uint8_t s) {
  return s == 0 ? 5.877471754111438e-39f : __int_as_float(int(s) << 23);
}

template <uint32_t DT>
__device__ __forceinline__ float load1(const GemvArgs &a, int64_t n, int64_t k);

// Eight consecutive values of row n from column k0 (k0 % 8 == 0, aligned).
template <uint32_t DT>
__device__ __forceinline__ void load8(const GemvArgs &a, int64_t n, int64_t k0,
                                      float w[8]) {
  if constexpr (DT == LLMC_Q4_K || DT == LLMC_Q5_K || DT == LLMC_Q6_K) {
#pragma unroll
    for (int i = 0; i < 8; ++i)
      w[i] = load1<DT>(a, n, k0 + i);
  } else if constexpr (DT == LLMC_F32) {
    const float4 *p = reinterpret_cast<const float4 *>(
        static_cast<const float *>(a.w) + n * a.K + k0);
    float4 u = p[0], v = p[1];
    w[0] = u.x, w[1] = u.y, w[2] = u.z, w[3] = u.w;
    w[4] = v.x, w[5] = v.y, w[6] = v.z, w[7] = v.w;
  } else if constexpr (DT == LLMC_BF16 || DT == LLMC_F16) {
    uint4 u = *reinterpret_cast<const uint4 *>(
        static_cast<const uint16_t *>(a.w) + n * a.K + k0);
    const uint32_t words[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (DT == LLMC_BF16) {
        w[2 * i] = __uint_as_float(words[i] << 16);
        w[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
      } else {
        __half2 h = *reinterpret_cast<const __half2 *>(&words[i]);
        float2 f = __half22float2(h);
        w[2 * i] = f.x, w[2 * i + 1] = f.y;
      }
    }
  } else if constexpr (DT == LLMC_I8) {
    uint2 u = *reinterpret_cast<const uint2 *>(
        static_cast<const int8_t *>(a.w) + n * a.K + k0);
    float sc = a.scales[n * (a.K / a.group) + k0 / a.group];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      w[i] = float(int8_t(u.x >> (8 * i))) * sc;
      w[4 + i] = float(int8_t(u.y >> (8 * i))) * sc;
    }
  } else if constexpr (DT == LLMC_MXFP4) { // E2M1 codes, low nibble first
    uint32_t u = *reinterpret_cast<const uint32_t *>(
        static_cast<const uint8_t *>(a.w) + n * (a.K / 2) + k0 / 2);
    float sc = e8m0(a.e8m0[n * (a.K / 32) + k0 / 32]);
#pragma unroll
    for (int i = 0; i < 8; ++i)
      w[i] = e2m1((u >> (4 * i)) & 0xf) * sc;
  } else { // I4: two's-complement nibbles, the even column in the low one
    uint32_t u = *reinterpret_cast<const uint32_t *>(
        static_cast<const uint8_t *>(a.w) + n * (a.K / 2) + k0 / 2);
    float sc = a.scales[n * (a.K / a.group) + k0 / a.group];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      int q = int(u >> (4 * i)) & 0xf;
      w[i] = float(q >= 8 ? q - 16 : q) * sc;
    }
  }
}

template <uint32_t DT>
__device__ __forceinline__ float load1(const GemvArgs &a, int64_t n,
                                       int64_t k) {
  if constexpr (DT == LLMC_Q4_K || DT == LLMC_Q5_K || DT == LLMC_Q6_K) {
    return kquantAt(DT, a.w, a.e8m0, n, a.K, k);
  } else if constexpr (DT == LLMC_F32 || DT == LLMC_BF16 || DT == LLMC_F16) {
    return loadAny(a.w, DT, n * a.K + k);
  } else if constexpr (DT == LLMC_I8) {
    return float(static_cast<const int8_t *>(a.w)[n * a.K + k]) *
           a.scales[n * (a.K / a.group) + k / a.group];
  } else if constexpr (DT == LLMC_MXFP4) {
    uint8_t byte = static_cast<const uint8_t *>(a.w)[n * (a.K / 2) + k / 2];
    return e2m1(k % 2 == 0 ? byte & 0xf : byte >> 4) *
           e8m0(a.e8m0[n * (a.K / 32) + k / 32]);
  } else {
    uint8_t byte = static_cast<const uint8_t *>(a.w)[n * (a.K / 2) + k / 2];
    int q = k % 2 == 0 ? byte & 0xf : byte >> 4;
    return float(q >= 8 ? q - 16 : q) *
           a.scales[n * (a.K / a.group) + k / a.group];
  }
}

template <uint32_t DT>
__global__ void __launch_bounds__(kWarps * 32)
    gemvKernel(GemvArgs a, bool vectorized) {
  int64_t n = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (n >= a.N)
    return;
  float acc[kGemvMaxRows] = {};
  if (vectorized) {
    for (int64_t k0 = lane * 8; k0 < a.K; k0 += 32 * 8) {
      float w[8];
      load8<DT>(a, n, k0, w);
#pragma unroll
      for (int r = 0; r < kGemvMaxRows; ++r) {
        if (r < a.rows) {
          const float4 *xp =
              reinterpret_cast<const float4 *>(a.x + r * a.K + k0);
          float4 u = xp[0], v = xp[1];
          acc[r] += w[0] * u.x + w[1] * u.y + w[2] * u.z + w[3] * u.w +
                    w[4] * v.x + w[5] * v.y + w[6] * v.z + w[7] * v.w;
        }
      }
    }
  } else {
    for (int64_t k = lane; k < a.K; k += 32) {
      float w = load1<DT>(a, n, k);
#pragma unroll
      for (int r = 0; r < kGemvMaxRows; ++r)
        if (r < a.rows)
          acc[r] += w * a.x[r * a.K + k];
    }
  }
  float bias = a.bias ? a.bias[n] : 0.0f;
#pragma unroll
  for (int r = 0; r < kGemvMaxRows; ++r) {
    if (r < a.rows) {
      float v = warpSum(acc[r]);
      if (lane == 0)
        a.out[r * a.N + n] = v + bias;
    }
  }
}

// EXPERT_LINEAR: block (n-block, pair) computes row `pair` of the result,
// out[pair][n] = x_pair · W[e * N + n] with e = experts[pair]; W stacks
// the experts as one [E * N, K] weight, so load8/load1 read expert rows
// unchanged. One pair per block row: an expert shared by several pairs is
// read once per pair (a grouped kernel is future work).
template <uint32_t DT>
__global__ void __launch_bounds__(kWarps * 32)
    expertGemvKernel(GemvArgs a, ExpertArgs e, bool vectorized) {
  const int64_t n = int64_t(blockIdx.x) * kWarps + threadIdx.x / 32;
  const int64_t pair = blockIdx.y;
  const int lane = threadIdx.x % 32;
  if (n >= a.N)
    return;
  const int32_t expert = e.experts[pair];
  float *out = a.out + pair * a.N + n;
  if (expert < 0 || expert >= e.numExperts) { // our own gating wrote it
    if (lane == 0)
      *out = 0.0f;
    return;
  }
  const int64_t t = pair / e.k, j = pair % e.k;
  const float *x = a.x + t * e.xCols + (e.perRun ? j * a.K : 0);
  const int64_t row = int64_t(expert) * a.N + n;
  float acc = 0.0f;
  if (vectorized) {
    for (int64_t k0 = lane * 8; k0 < a.K; k0 += 32 * 8) {
      float w[8];
      load8<DT>(a, row, k0, w);
      const float4 *xp = reinterpret_cast<const float4 *>(x + k0);
      float4 u = xp[0], v = xp[1];
      acc += w[0] * u.x + w[1] * u.y + w[2] * u.z + w[3] * u.w + w[4] * v.x +
             w[5] * v.y + w[6] * v.z + w[7] * v.w;
    }
  } else {
    for (int64_t k = lane; k < a.K; k += 32)
      acc += load1<DT>(a, row, k) * x[k];
  }
  acc = warpSum(acc);
  if (lane == 0)
    *out = acc;
}

template <uint32_t DT>
__global__ void dequantKernel(const void *w, const float *scales,
                              const uint8_t *e8m0s, int64_t group, int64_t N,
                              int64_t K, __nv_bfloat16 *out) {
  GemvArgs a{};
  a.w = w, a.scales = scales, a.group = group, a.N = N, a.K = K;
  a.e8m0 = e8m0s;
  int64_t total = N * K;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(load1<DT>(a, i / K, i % K));
}

} // namespace

void launchGemv(cudaStream_t s, const GemvArgs &a) {
  if (a.rows <= 0 || a.N <= 0)
    return;
  bool quant =
      a.dtype == LLMC_I8 || a.dtype == LLMC_I4 || a.dtype == LLMC_MXFP4;
  bool vectorized = a.K % 8 == 0 && (!quant || a.group % 8 == 0) &&
                    reinterpret_cast<uintptr_t>(a.x) % 16 == 0 &&
                    reinterpret_cast<uintptr_t>(a.w) % 16 == 0;
  unsigned blocks = unsigned((a.N + kWarps - 1) / kWarps);
  switch (a.dtype) {
  case LLMC_F32:
    gemvKernel<LLMC_F32><<<blocks, kWarps * 32, 0, s>>>(a, vectorized);
    break;
  case LLMC_BF16:
    gemvKernel<LLMC_BF16><<<blocks, kWarps * 32, 0, s>>>(a, vectorized);
    break;
  case LLMC_F16:
    gemvKernel<LLMC_F16><<<blocks, kWarps * 32, 0, s>>>(a, vectorized);
    break;
  case LLMC_I8:
    gemvKernel<LLMC_I8><<<blocks, kWarps * 32, 0, s>>>(a, vectorized);
    break;
  case LLMC_MXFP4:
    gemvKernel<LLMC_MXFP4><<<blocks, kWarps * 32, 0, s>>>(a, vectorized);
    break;
  case LLMC_Q4_K:
    gemvKernel<LLMC_Q4_K><<<blocks, kWarps * 32, 0, s>>>(a, vectorized);
    break;
  case LLMC_Q5_K:
    gemvKernel<LLMC_Q5_K><<<blocks, kWarps * 32, 0, s>>>(a, vectorized);
    break;
  case LLMC_Q6_K:
    gemvKernel<LLMC_Q6_K><<<blocks, kWarps * 32, 0, s>>>(a, vectorized);
    break;
  default:
    gemvKernel<LLMC_I4><<<blocks, kWarps * 32, 0, s>>>(a, vectorized);
    break;
  }
}

void launchExpertGemv(cudaStream_t s, const GemvArgs &a, const ExpertArgs &e,
                      int64_t pairs) {
  if (pairs <= 0 || a.N <= 0)
    return;
  bool quant =
      a.dtype == LLMC_I8 || a.dtype == LLMC_I4 || a.dtype == LLMC_MXFP4;
  bool vectorized = a.K % 8 == 0 && e.xCols % 4 == 0 &&
                    (!quant || a.group % 8 == 0) &&
                    reinterpret_cast<uintptr_t>(a.x) % 16 == 0 &&
                    reinterpret_cast<uintptr_t>(a.w) % 16 == 0;
  dim3 grid(unsigned((a.N + kWarps - 1) / kWarps), unsigned(pairs));
  switch (a.dtype) {
  case LLMC_F32:
    expertGemvKernel<LLMC_F32><<<grid, kWarps * 32, 0, s>>>(a, e, vectorized);
    break;
  case LLMC_BF16:
    expertGemvKernel<LLMC_BF16><<<grid, kWarps * 32, 0, s>>>(a, e, vectorized);
    break;
  case LLMC_F16:
    expertGemvKernel<LLMC_F16><<<grid, kWarps * 32, 0, s>>>(a, e, vectorized);
    break;
  case LLMC_I8:
    expertGemvKernel<LLMC_I8><<<grid, kWarps * 32, 0, s>>>(a, e, vectorized);
    break;
  case LLMC_MXFP4:
    expertGemvKernel<LLMC_MXFP4><<<grid, kWarps * 32, 0, s>>>(a, e, vectorized);
    break;
  case LLMC_Q4_K:
    expertGemvKernel<LLMC_Q4_K><<<grid, kWarps * 32, 0, s>>>(a, e, vectorized);
    break;
  case LLMC_Q5_K:
    expertGemvKernel<LLMC_Q5_K><<<grid, kWarps * 32, 0, s>>>(a, e, vectorized);
    break;
  case LLMC_Q6_K:
    expertGemvKernel<LLMC_Q6_K><<<grid, kWarps * 32, 0, s>>>(a, e, vectorized);
    break;
  default:
    expertGemvKernel<LLMC_I4><<<grid, kWarps * 32, 0, s>>>(a, e, vectorized);
    break;
  }
}

void launchDequantBf16(cudaStream_t s, const void *w, uint32_t dtype,
                       const float *scales, const uint8_t *e8m0s, int64_t group,
                       int64_t N, int64_t K, void *out) {
  if (N * K <= 0)
    return;
  auto *o = static_cast<__nv_bfloat16 *>(out);
  unsigned blocks = blocksFor(N * K, 256);
  if (dtype == LLMC_I8)
    dequantKernel<LLMC_I8>
        <<<blocks, 256, 0, s>>>(w, scales, e8m0s, group, N, K, o);
  else if (dtype == LLMC_MXFP4)
    dequantKernel<LLMC_MXFP4>
        <<<blocks, 256, 0, s>>>(w, scales, e8m0s, group, N, K, o);
  else if (dtype == LLMC_Q4_K)
    dequantKernel<LLMC_Q4_K>
        <<<blocks, 256, 0, s>>>(w, scales, e8m0s, group, N, K, o);
  else if (dtype == LLMC_Q5_K)
    dequantKernel<LLMC_Q5_K>
        <<<blocks, 256, 0, s>>>(w, scales, e8m0s, group, N, K, o);
  else if (dtype == LLMC_Q6_K)
    dequantKernel<LLMC_Q6_K>
        <<<blocks, 256, 0, s>>>(w, scales, e8m0s, group, N, K, o);
  else
    dequantKernel<LLMC_I4>
        <<<blocks, 256, 0, s>>>(w, scales, e8m0s, group, N, K, o);
}

} // namespace llmc::cuda
