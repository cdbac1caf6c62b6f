//===- moe.cu - Routing tokens to experts and summing their outputs -------===//
//
// MOE_GATING: one thread per row, E logits in registers-then-local memory
// (E is at most a few hundred); the arithmetic and tie rule are
// backends/common/moe.cpp's. MOE_COMBINE: one thread per output value.
// The expert GEMV itself lives in linear.cu beside LINEAR's.
//
//===----------------------------------------------------------------------===//
#include "device.cuh"

namespace llmc::cuda {
namespace {

constexpr int kMaxExperts = 512;

__global__ void gatingKernel(const float *logits, float *weights,
                             int32_t *experts, int64_t rows, int64_t E,
                             int64_t k, bool renormalize, int64_t mode) {
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= rows)
    return;
  const float *l = logits + t * E;
  float *w = weights + t * k;
  int32_t *ids = experts + t * k;
  float max = l[0];
  for (int64_t e = 1; e < E; ++e)
    max = fmaxf(max, l[e]);
  float sum = 0.0f;
  if (mode == 0)
    for (int64_t e = 0; e < E; ++e)
      sum += expf(l[e] - max);
  // Selection without marks: the j-th pick is the best score below the
  // previous pick (or equal to it at a higher index).
  float prevScore = 0.0f;
  int64_t prev = -1;
  for (int64_t j = 0; j < k; ++j) {
    int64_t best = -1;
    float bestScore = 0.0f;
    for (int64_t e = 0; e < E; ++e) {
      const float s = mode == 0 ? expf(l[e] - max) / sum : l[e];
      const bool after =
          prev < 0 || s < prevScore || (s == prevScore && e > prev);
      if (after && (best < 0 || s > bestScore)) {
        best = e;
        bestScore = s;
      }
    }
    ids[j] = int32_t(best);
    w[j] = bestScore;
    prev = best;
    prevScore = bestScore;
  }
  if (mode == 1) {
    float m = w[0], total = 0.0f;
    for (int64_t j = 0; j < k; ++j)
      total += w[j] = expf(w[j] - m);
    for (int64_t j = 0; j < k; ++j)
      w[j] /= total;
  } else if (renormalize) {
    float total = 0.0f;
    for (int64_t j = 0; j < k; ++j)
      total += w[j];
    for (int64_t j = 0; j < k; ++j)
      w[j] /= total;
  }
}

__global__ void combineKernel(const float *y, const float *weights, float *out,
                              int64_t rows, int64_t k, int64_t N) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * N)
    return;
  const int64_t t = i / N, n = i % N;
  float acc = 0.0f;
  for (int64_t j = 0; j < k; ++j)
    acc = fmaf(weights[t * k + j], y[(t * k + j) * N + n], acc);
  out[i] = acc;
}

// EXPERT_BIAS: pair p = t * k + j adds bias row experts[p].
__global__ void expertBiasKernel(const float *y, const float *bias,
                                 const int32_t *experts, float *out,
                                 int64_t pairs, int64_t n, int64_t E) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       i < pairs * n; i += int64_t(gridDim.x) * blockDim.x) {
    const int32_t e = experts[i / n];
    out[i] = y[i] + (e >= 0 && e < E ? bias[int64_t(e) * n + i % n] : 0.0f);
  }
}

} // namespace

void launchMoeGating(cudaStream_t s, const float *logits, float *weights,
                     int32_t *experts, int64_t rows, int64_t E, int64_t k,
                     bool renormalize, int64_t mode) {
  if (rows <= 0 || E > kMaxExperts)
    return;
  gatingKernel<<<blocksFor(rows, 128), 128, 0, s>>>(
      logits, weights, experts, rows, E, k, renormalize, mode);
}

void launchExpertBias(cudaStream_t s, const float *y, const float *bias,
                      const int32_t *experts, float *out, int64_t rows,
                      int64_t k, int64_t n, int64_t E) {
  if (rows * k * n <= 0)
    return;
  expertBiasKernel<<<blocksFor(rows * k * n, 256), 256, 0, s>>>(
      y, bias, experts, out, rows * k, n, E);
}

void launchMoeCombine(cudaStream_t s, const float *y, const float *weights,
                      float *out, int64_t rows, int64_t k, int64_t N) {
  if (rows * N <= 0)
    return;
  combineKernel<<<blocksFor(rows * N, 256), 256, 0, s>>>(y, weights, out, rows,
                                                         k, N);
}

} // namespace llmc::cuda
