//===- rope.cu - Rotary position embedding --------------------------------===//
//
// As ref: angle = float(pos) * inv_freq[i] in f32, cos and sin (accurate
// cosf/sinf, not the fast intrinsics) times the attention scaling. Each
// rotated pair is read and written by one thread, so out may be x.
//
//===----------------------------------------------------------------------===//
#include "device.cuh"

namespace llmc::cuda {
namespace {

__global__ void ropeKernel(const float *x, const int32_t *positions,
                           const float *shortFreq, const float *longFreq,
                           const int32_t *useLong, float *out, int64_t heads,
                           int64_t headDim, int64_t rot, int64_t style,
                           float scaling) {
  int64_t t = blockIdx.x;
  const float *invFreq = longFreq && useLong[t] ? longFreq : shortFreq;
  int64_t cols = heads * headDim;
  const float *xr = x + t * cols;
  float *o = out + t * cols;
  float pos = float(positions[t]);
  int64_t half = rot / 2;
  for (int64_t e = threadIdx.x; e < heads * half; e += blockDim.x) {
    int64_t h = e / half, i = e % half;
    float angle = pos * invFreq[i];
    float c = cosf(angle) * scaling, sn = sinf(angle) * scaling;
    int64_t a = h * headDim + (style == 0 ? i : 2 * i);
    int64_t b = h * headDim + (style == 0 ? i + half : 2 * i + 1);
    float x1 = xr[a], x2 = xr[b];
    o[a] = x1 * c - x2 * sn;
    o[b] = x2 * c + x1 * sn;
  }
  if (rot < headDim && o != xr) {
    int64_t pass = headDim - rot;
    for (int64_t e = threadIdx.x; e < heads * pass; e += blockDim.x) {
      int64_t c = (e / pass) * headDim + rot + e % pass;
      o[c] = xr[c];
    }
  }
}

} // namespace

void launchRope(cudaStream_t s, const float *x, const int32_t *positions,
                const float *invFreq, const float *longInvFreq,
                const int32_t *useLong, float *out, int64_t rows, int64_t heads,
                int64_t headDim, int64_t rotaryDim, int64_t style,
                float scaling) {
  if (rows > 0)
    ropeKernel<<<unsigned(rows), 128, 0, s>>>(
        x, positions, invFreq, longInvFreq, useLong, out, heads, headDim,
        rotaryDim, style, scaling);
}

} // namespace llmc::cuda
