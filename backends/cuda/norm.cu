//===- norm.cu - RMSNorm, fused add + RMSNorm, LayerNorm ------------------===//
//
// One CTA per row; statistics in f32 with a block reduction. Every value is
// read and written by the same thread, so a result may be an operand.
//
//===----------------------------------------------------------------------===//
#include "device.cuh"

namespace llmc::cuda {
namespace {

constexpr int kThreads = 256;

__global__ void rmsNormKernel(const float *x, const float *r, const float *w,
                              float *sum, float *out, int64_t cols, float eps) {
  __shared__ float scratch[32];
  int64_t row = blockIdx.x;
  const float *xr = x + row * cols;
  const float *rr = r ? r + row * cols : nullptr;
  float *sr = sum ? sum + row * cols : nullptr;
  float ss = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    float v = xr[c];
    if (rr) {
      v += rr[c];
      sr[c] = v;
    }
    ss += v * v;
  }
  ss = blockSum(ss, scratch);
  float inv = 1.0f / sqrtf(ss / float(cols) + eps);
  const float *src = sr ? sr : xr;
  float *o = out + row * cols;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    o[c] = src[c] * inv * w[c];
}

__global__ void layerNormKernel(const float *x, const float *w, const float *b,
                                float *out, int64_t cols, float eps) {
  __shared__ float scratch[32];
  int64_t row = blockIdx.x;
  const float *xr = x + row * cols;
  float s = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    s += xr[c];
  float mean = blockSum(s, scratch) / float(cols);
  float v = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    v += (xr[c] - mean) * (xr[c] - mean);
  float var = blockSum(v, scratch) / float(cols);
  float inv = 1.0f / sqrtf(var + eps);
  float *o = out + row * cols;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    o[c] = (xr[c] - mean) * inv * w[c] + b[c];
}

} // namespace

void launchRmsNorm(cudaStream_t s, const float *x, const float *w, float *out,
                   int64_t rows, int64_t cols, float eps) {
  if (rows > 0)
    rmsNormKernel<<<unsigned(rows), kThreads, 0, s>>>(x, nullptr, w, nullptr,
                                                      out, cols, eps);
}

void launchAddRmsNorm(cudaStream_t s, const float *x, const float *r,
                      const float *w, float *sum, float *out, int64_t rows,
                      int64_t cols, float eps) {
  if (rows > 0)
    rmsNormKernel<<<unsigned(rows), kThreads, 0, s>>>(x, r, w, sum, out, cols,
                                                      eps);
}

void launchLayerNorm(cudaStream_t s, const float *x, const float *w,
                     const float *b, float *out, int64_t rows, int64_t cols,
                     float eps) {
  if (rows > 0)
    layerNormKernel<<<unsigned(rows), kThreads, 0, s>>>(x, w, b, out, cols,
                                                        eps);
}

} // namespace llmc::cuda
