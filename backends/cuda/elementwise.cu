//===- elementwise.cu - Pointwise ops, slices, row picks, conversions -----===//
#include "device.cuh"

namespace llmc::cuda {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

__device__ __forceinline__ float geluTanh(float x) {
  return 0.5f * x *
         (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

__global__ void pointwiseKernel(int op, const float *a, const float *b,
                                float *out, int64_t n, float alpha) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    float x = a[i], y;
    switch (Pointwise(op)) {
    case Pointwise::Add:
      y = x + b[i];
      break;
    case Pointwise::Mul:
      y = x * b[i];
      break;
    case Pointwise::Silu:
      y = silu(x);
      break;
    case Pointwise::GeluErf:
      y = 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
      break;
    case Pointwise::GeluTanh: // GPT-2's gelu_new
      y = geluTanh(x);
      break;
    case Pointwise::Scale:
      y = x * alpha;
      break;
    default: // Softcap
      y = alpha * tanhf(x / alpha);
      break;
    }
    out[i] = y;
  }
}

__global__ void swigluKernel(const float *x, float *out, int64_t rows,
                             int64_t inner, int act, bool interleaved,
                             float limit, float alpha) {
  int64_t n = rows * inner;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = i / inner, c = i % inner;
    const float *xr = x + r * 2 * inner;
    const float gate = interleaved ? xr[2 * c] : xr[c];
    const float up = interleaved ? xr[2 * c + 1] : xr[inner + c];
    if (act == 2) { // gpt-oss: (clamp(up) + 1) * g * sigmoid(alpha * g)
      const float g = fminf(gate, limit);
      const float u = fmaxf(fminf(up, limit), -limit);
      out[i] = (u + 1.0f) * (g / (1.0f + expf(-(g * alpha))));
    } else {
      out[i] = (act == 1 ? geluTanh(gate) : silu(gate)) * up;
    }
  }
}

__global__ void sliceKernel(const float *x, float *out, int64_t rows,
                            int64_t xCols, int64_t outCols, int64_t offset) {
  int64_t n = rows * outCols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = i / outCols, c = i % outCols;
    out[i] = x[r * xCols + offset + c];
  }
}

__global__ void takeRowsKernel(const float *x, const int32_t *rowIds,
                               const DevStep *step, float *out, int64_t cols) {
  int64_t i = blockIdx.x;
  float *o = out + i * cols;
  if (i < step->numLogits) {
    const float *src = x + int64_t(rowIds[i]) * cols;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      o[c] = src[c];
  } else {
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
      o[c] = 0.0f;
  }
}

template <typename H>
__global__ void toHalfKernel(const float *x, H *out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = fromFloat<H>(x[i]);
}

__global__ void addBiasKernel(float *out, const float *bias, int64_t rows,
                              int64_t cols) {
  int64_t n = rows * cols;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] += bias[i % cols];
}

} // namespace

void launchPointwise(cudaStream_t s, Pointwise f, const float *a,
                     const float *b, float *out, int64_t n, float alpha) {
  if (n > 0)
    pointwiseKernel<<<blocksFor(n, kThreads), kThreads, 0, s>>>(int(f), a, b,
                                                                out, n, alpha);
}

void launchSwiglu(cudaStream_t s, const float *x, float *out, int64_t rows,
                  int64_t inner, int act, bool interleaved, float limit,
                  float alpha) {
  if (rows * inner > 0)
    swigluKernel<<<blocksFor(rows * inner, kThreads), kThreads, 0, s>>>(
        x, out, rows, inner, act, interleaved, limit, alpha);
}

void launchSlice(cudaStream_t s, const float *x, float *out, int64_t rows,
                 int64_t xCols, int64_t outCols, int64_t offset) {
  if (rows * outCols > 0)
    sliceKernel<<<blocksFor(rows * outCols, kThreads), kThreads, 0, s>>>(
        x, out, rows, xCols, outCols, offset);
}

void launchTakeRows(cudaStream_t s, const float *x, const int32_t *rowIds,
                    const DevStep *step, float *out, int64_t outRows,
                    int64_t cols) {
  if (outRows > 0)
    takeRowsKernel<<<unsigned(outRows), kThreads, 0, s>>>(x, rowIds, step, out,
                                                          cols);
}

void launchToHalf(cudaStream_t s, const float *x, void *out, int64_t n,
                  uint32_t dtype) {
  if (n <= 0)
    return;
  if (dtype == LLMC_BF16)
    toHalfKernel<<<blocksFor(n, kThreads), kThreads, 0, s>>>(
        x, static_cast<__nv_bfloat16 *>(out), n);
  else
    toHalfKernel<<<blocksFor(n, kThreads), kThreads, 0, s>>>(
        x, static_cast<__half *>(out), n);
}

void launchAddBias(cudaStream_t s, float *out, const float *bias, int64_t rows,
                   int64_t cols) {
  if (rows * cols > 0)
    addBiasKernel<<<blocksFor(rows * cols, kThreads), kThreads, 0, s>>>(
        out, bias, rows, cols);
}

} // namespace llmc::cuda
