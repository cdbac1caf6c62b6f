//===- attention.cu - KV writes and paged flash attention -----------------===//
//
// One kernel serves prefill and decode. A CTA takes one sequence, one kv
// head (with up to 16 of its query heads: GQA reads each K/V tile once for
// the whole group) and a tile of query rows; it walks the sequence's keys in
// tiles of 32 through the block table, staging K and V in shared memory as
// f32, and keeps an online softmax per (row, head) item: a warp owns four
// items, a lane owns one key of the tile for QKᵀ and a slice of head_dim
// for PV.
//
// Decode (one row per sequence) splits the key range over gridDim.z CTAs
// (flash-decoding): each writes its partial (max, sum, acc) and a second
// kernel merges them. Causal masking, the sliding window and the cached
// prefix all come from the row's position len - count + r.
//
//===----------------------------------------------------------------------===//
#include "device.cuh"

#include <cfloat>

namespace llmc::cuda {
namespace {

constexpr int kThreads = 128, kWarps = 4, kItems = 16, kItemsPerWarp = 4;
constexpr int kKeys = 32, kDimChunks = kAttentionMaxHeadDim / 32;
static_assert(kWarps * kItemsPerWarp == kItems && kWarps * 32 == kThreads);

template <typename C>
__global__ void kvWriteKernel(const float *k, const float *v,
                              const int32_t *slots, C *kc, C *vc,
                              int64_t rowElements) {
  int64_t t = blockIdx.x;
  int64_t slot = slots[t];
  if (slot < 0) // padding row of a captured decode bucket
    return;
  for (int64_t e = threadIdx.x; e < rowElements; e += blockDim.x) {
    kc[slot * rowElements + e] = fromFloat<C>(k[t * rowElements + e]);
    vc[slot * rowElements + e] = fromFloat<C>(v[t * rowElements + e]);
  }
}

__host__ __device__ inline int headChunk(int group) {
  return group < kItems ? group : kItems;
}

template <typename C>
__global__ void __launch_bounds__(kThreads) attentionKernel(AttentionArgs a) {
  extern __shared__ float smem[];
  const int hd = a.headDim, group = a.heads / a.kvHeads;
  const int chunk = headChunk(group);
  const int rowsPerTile = kItems / chunk > 0 ? kItems / chunk : 1;
  const int chunks = (group + chunk - 1) / chunk;
  const int kvh = blockIdx.y / chunks, c0 = (blockIdx.y % chunks) * chunk;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;

  int b, r0, count, rowBase;
  if (a.decode) {
    b = blockIdx.x, r0 = 0, count = 1, rowBase = b;
  } else {
    b = a.tiles[2 * blockIdx.x], r0 = a.tiles[2 * blockIdx.x + 1];
    rowBase = a.queryStart[b];
    count = a.queryStart[b + 1] - rowBase;
  }
  const int len = a.contextLens[b];
  const int maxBlocks = a.step->maxBlocks;
  const int qCols = a.heads * hd;

  float *qS = smem;                  // [kItems][hd]
  float *kS = qS + kItems * hd;      // [kKeys][hd + 1] (padded: no conflicts)
  float *vS = kS + kKeys * (hd + 1); // [kKeys][hd]

  // Item i: row r0 + i / chunk, query head kvh * group + c0 + i % chunk.
  auto itemRow = [&](int i) { return r0 + i / chunk; };
  auto itemHead = [&](int i) { return kvh * group + c0 + i % chunk; };
  auto itemValid = [&](int i) {
    return i / chunk < rowsPerTile && itemRow(i) < count &&
           c0 + i % chunk < group;
  };

  for (int e = threadIdx.x; e < kItems * hd; e += kThreads) {
    int i = e / hd, d = e % hd;
    qS[e] =
        itemValid(i)
            ? a.q[int64_t(rowBase + itemRow(i)) * qCols + itemHead(i) * hd + d]
            : 0.0f;
  }

  // The keys of the tile: rows r0 .. last attend to positions up to
  // len - count + last, and from the first row's window start.
  int last = min(count, r0 + rowsPerTile) - 1;
  int first = len - count + r0;
  int keyHi = len - count + last + 1;
  int keyLo = a.window > 0 ? max(0, first - a.window + 1) : 0;
  if (len <= 0 || count <= 0)
    keyHi = keyLo = 0;
  if (a.splits > 1) {
    int n = keyHi - keyLo;
    int per = ((n + a.splits - 1) / a.splits + kKeys - 1) / kKeys * kKeys;
    int lo = keyLo + int(blockIdx.z) * per;
    keyHi = min(keyHi, lo + per);
    keyLo = lo;
  }

  float m[kItemsPerWarp], l[kItemsPerWarp], acc[kItemsPerWarp][kDimChunks];
  int pos[kItemsPerWarp], lo[kItemsPerWarp];
  bool valid[kItemsPerWarp];
#pragma unroll
  for (int k = 0; k < kItemsPerWarp; ++k) {
    int i = warp * kItemsPerWarp + k;
    valid[k] = itemValid(i);
    pos[k] = len - count + itemRow(i);
    lo[k] = a.window > 0 ? max(0, pos[k] - a.window + 1) : 0;
    m[k] = -FLT_MAX;
    l[k] = 0.0f;
#pragma unroll
    for (int c = 0; c < kDimChunks; ++c)
      acc[k][c] = 0.0f;
  }

  const C *kc = static_cast<const C *>(a.kCache);
  const C *vc = static_cast<const C *>(a.vCache);
  for (int t0 = keyLo; t0 < keyHi; t0 += kKeys) {
    __syncthreads(); // the previous tile (and qS on the first) is complete
    for (int e = threadIdx.x; e < kKeys * hd; e += kThreads) {
      int j = e / hd, d = e % hd, key = t0 + j;
      float kv = 0.0f, vv = 0.0f;
      if (key < keyHi) {
        int block = a.blockTables[int64_t(b) * maxBlocks + key / a.blockSize];
        int64_t slot = int64_t(block) * a.blockSize + key % a.blockSize;
        int64_t off = (slot * a.kvHeads + kvh) * hd + d;
        kv = toFloat(kc[off]);
        vv = toFloat(vc[off]);
      }
      kS[j * (hd + 1) + d] = kv;
      vS[j * hd + d] = vv;
    }
    __syncthreads();
    int key = t0 + lane;
#pragma unroll
    for (int k = 0; k < kItemsPerWarp; ++k) {
      if (!valid[k])
        continue;
      const float *qi = qS + (warp * kItemsPerWarp + k) * hd;
      float score = -FLT_MAX;
      bool live = key < keyHi && key >= lo[k] && key <= pos[k];
      if (live) {
        const float *kj = kS + lane * (hd + 1);
        float dot = 0.0f;
        for (int d = 0; d < hd; ++d)
          dot += qi[d] * kj[d];
        score = dot * a.scale;
        if (a.softcap > 0.0f)
          score = a.softcap * tanhf(score / a.softcap);
      }
      float tileMax = warpMax(live ? score : -FLT_MAX);
      if (__all_sync(0xffffffffu, !live))
        continue;
      float mNew = fmaxf(m[k], tileMax);
      float p = live ? expf(score - mNew) : 0.0f;
      float alpha = l[k] > 0.0f ? expf(m[k] - mNew) : 0.0f;
      l[k] = l[k] * alpha + warpSum(p);
#pragma unroll
      for (int c = 0; c < kDimChunks; ++c)
        acc[k][c] *= alpha;
      for (int j = 0; j < kKeys; ++j) {
        float pj = __shfl_sync(0xffffffffu, p, j);
        if (pj == 0.0f)
          continue;
        const float *vj = vS + j * hd;
#pragma unroll
        for (int c = 0; c < kDimChunks; ++c) {
          int d = lane + 32 * c;
          if (d < hd)
            acc[k][c] += pj * vj[d];
        }
      }
      m[k] = mNew;
    }
  }

#pragma unroll
  for (int k = 0; k < kItemsPerWarp; ++k) {
    if (!valid[k])
      continue;
    int i = warp * kItemsPerWarp + k;
    int head = itemHead(i);
    if (a.splits > 1) {
      float *part =
          a.partial +
          ((int64_t(b) * a.heads + head) * a.splits + blockIdx.z) * (hd + 2);
      if (lane == 0)
        part[0] = m[k], part[1] = l[k];
#pragma unroll
      for (int c = 0; c < kDimChunks; ++c)
        if (lane + 32 * c < hd)
          part[2 + lane + 32 * c] = acc[k][c];
    } else {
      float inv = l[k] > 0.0f ? 1.0f / l[k] : 0.0f;
      float *o = a.out + int64_t(rowBase + itemRow(i)) * qCols + head * hd;
#pragma unroll
      for (int c = 0; c < kDimChunks; ++c)
        if (lane + 32 * c < hd)
          o[lane + 32 * c] = acc[k][c] * inv;
    }
  }
}

// Merges the splits of one (sequence, head): grid (sequences, heads).
__global__ void mergeSplitsKernel(const float *partial, float *out, int heads,
                                  int hd, int splits) {
  int b = blockIdx.x, h = blockIdx.y;
  const float *p = partial + (int64_t(b) * heads + h) * splits * (hd + 2);
  float mMax = -FLT_MAX;
  for (int s = 0; s < splits; ++s)
    if (p[s * (hd + 2) + 1] > 0.0f)
      mMax = fmaxf(mMax, p[s * (hd + 2)]);
  float total = 0.0f;
  for (int s = 0; s < splits; ++s) {
    float ls = p[s * (hd + 2) + 1];
    if (ls > 0.0f)
      total += ls * expf(p[s * (hd + 2)] - mMax);
  }
  float inv = total > 0.0f ? 1.0f / total : 0.0f;
  float *o = out + int64_t(b) * heads * hd + int64_t(h) * hd;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float v = 0.0f;
    for (int s = 0; s < splits; ++s) {
      const float *ps = p + s * (hd + 2);
      if (ps[1] > 0.0f)
        v += ps[2 + d] * expf(ps[0] - mMax);
    }
    o[d] = v * inv;
  }
}

template <typename C> void launchTyped(cudaStream_t s, const AttentionArgs &a) {
  int group = a.heads / a.kvHeads;
  dim3 grid(unsigned(a.gridX), unsigned(a.kvHeads * attentionHeadChunks(group)),
            unsigned(a.decode ? a.splits : 1));
  attentionKernel<C><<<grid, kThreads, attentionSmemBytes(a.headDim), s>>>(a);
  if (a.decode && a.splits > 1)
    mergeSplitsKernel<<<dim3(unsigned(a.gridX), unsigned(a.heads)), 128, 0,
                        s>>>(a.partial, a.out, a.heads, a.headDim, a.splits);
}

} // namespace

void launchKvWrite(cudaStream_t s, const float *k, const float *v,
                   const int32_t *slots, void *kCache, void *vCache,
                   uint32_t cacheDtype, int64_t rows, int64_t rowElements) {
  if (rows <= 0)
    return;
  unsigned grid = unsigned(rows);
  if (cacheDtype == LLMC_BF16)
    kvWriteKernel<<<grid, 128, 0, s>>>(
        k, v, slots, static_cast<__nv_bfloat16 *>(kCache),
        static_cast<__nv_bfloat16 *>(vCache), rowElements);
  else if (cacheDtype == LLMC_F16)
    kvWriteKernel<<<grid, 128, 0, s>>>(
        k, v, slots, static_cast<__half *>(kCache),
        static_cast<__half *>(vCache), rowElements);
  else
    kvWriteKernel<<<grid, 128, 0, s>>>(
        k, v, slots, static_cast<float *>(kCache), static_cast<float *>(vCache),
        rowElements);
}

int32_t attentionRowsPerTile(int32_t group) {
  int c = headChunk(group);
  return kItems / c > 0 ? kItems / c : 1;
}

int32_t attentionHeadChunks(int32_t group) {
  int c = headChunk(group);
  return (group + c - 1) / c;
}

size_t attentionSmemBytes(int32_t headDim) {
  return size_t(kItems * headDim + kKeys * (headDim + 1) + kKeys * headDim) *
         sizeof(float);
}

cudaError_t attentionConfigure() {
  int bytes = int(attentionSmemBytes(kAttentionMaxHeadDim));
  cudaError_t e =
      cudaFuncSetAttribute(attentionKernel<float>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(attentionKernel<__nv_bfloat16>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             bytes);
  if (e == cudaSuccess)
    e = cudaFuncSetAttribute(attentionKernel<__half>,
                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                             bytes);
  return e;
}

void launchAttention(cudaStream_t s, const AttentionArgs &a) {
  if (a.gridX <= 0)
    return;
  if (a.cacheDtype == LLMC_BF16)
    launchTyped<__nv_bfloat16>(s, a);
  else if (a.cacheDtype == LLMC_F16)
    launchTyped<__half>(s, a);
  else
    launchTyped<float>(s, a);
}

} // namespace llmc::cuda
