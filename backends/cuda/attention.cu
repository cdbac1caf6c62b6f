//===- attention.cu - KV writes and paged flash attention -----------------===//
//
// One kernel serves prefill and decode. A CTA takes one sequence, one kv
// head (with up to 16 of its query heads: GQA reads each K/V tile once for
// the whole group) and a tile of query rows; it walks the sequence's keys in
// tiles of 32 through the block table, staging K and V in shared memory as
// f32 (i8 and fp8 times their row's scale), and keeps an online softmax per
// (row, head) item: a warp owns four items, a lane owns one key of the tile for
// QKᵀ and a slice of head_dim for PV.
//
// Decode (one row per sequence) splits the key range over gridDim.z CTAs
// (flash-decoding): each writes its partial (max, sum, acc) and a second
// kernel merges them. Causal masking, the sliding window and the cached
// prefix all come from the row's position len - count + r.
//
//===----------------------------------------------------------------------===//
#include "device.cuh"

#include <cfloat>
#include <type_traits>

namespace llmc::cuda {
namespace {

constexpr int kThreads = 128, kWarps = 4, kItems = 16, kItemsPerWarp = 4;
constexpr int kKeys = 32, kDimChunks = kAttentionMaxHeadDim / 32;
static_assert(kWarps * kItemsPerWarp == kItems && kWarps * 32 == kThreads);

// One warp per (token, kv head): the head's max |x| sets its scale for i8
// and fp8 (backend.h's rule, the same division as the host's).
template <typename C>
__global__ void kvWriteKernel(const float *k, const float *v,
                              const int32_t *slots, char *kc, char *vc,
                              KvGeometry g) {
  const int64_t t = blockIdx.x;
  const int64_t slot = slots[t];
  if (slot < 0) // padding row of a captured decode bucket
    return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t block = slot / g.blockSize, off = slot % g.blockSize;
  for (int h = warp; h < g.kvHeads; h += blockDim.x / 32) {
    const int64_t row = off * g.kvHeads + h;
    const int64_t src = (t * g.kvHeads + h) * g.headDim;
    for (int which = 0; which < 2; ++which) {
      const float *x = (which == 0 ? k : v) + src;
      char *base = (which == 0 ? kc : vc) + block * g.blockBytes;
      C *data = reinterpret_cast<C *>(base) + row * g.headDim;
      if constexpr (kScaledKv<C>) {
        float amax = 0.0f;
        for (int d = lane; d < g.headDim; d += 32)
          amax = fmaxf(amax, fabsf(x[d]));
        amax = warpMax(amax);
        const bool i8 = std::is_same_v<C, int8_t>;
        const float scale = amax / (i8 ? 127.0f : 448.0f);
        for (int d = lane; d < g.headDim; d += 32) {
          const float q = scale > 0.0f ? x[d] / scale : 0.0f;
          if constexpr (std::is_same_v<C, int8_t>)
            data[d] = int8_t(fminf(fmaxf(rintf(q), -127.0f), 127.0f));
          else
            data[d] = __nv_fp8_e4m3(q); // round to nearest even, saturating
        }
        if (lane == 0)
          reinterpret_cast<float *>(base + int64_t(g.blockSize) * g.kvHeads *
                                               g.headDim)[row] = scale;
      } else {
        for (int d = lane; d < g.headDim; d += 32)
          data[d] = fromFloat<C>(x[d]);
      }
    }
  }
}

/// Calls f with a value of the type a cache of `dtype` stores.
template <typename F> void withKvType(uint32_t dtype, F &&f) {
  switch (dtype) {
  case LLMC_BF16:
    return f(__nv_bfloat16{});
  case LLMC_F16:
    return f(__half{});
  case LLMC_I8:
    return f(int8_t{});
  case LLMC_FP8_E4M3:
    return f(__nv_fp8_e4m3{});
  default:
    return f(float{});
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

  const char *kc = static_cast<const char *>(a.kCache);
  const char *vc = static_cast<const char *>(a.vCache);
  const int64_t scalesAt = int64_t(a.blockSize) * a.kvHeads * hd;
  for (int t0 = keyLo; t0 < keyHi; t0 += kKeys) {
    __syncthreads(); // the previous tile (and qS on the first) is complete
    for (int e = threadIdx.x; e < kKeys * hd; e += kThreads) {
      int j = e / hd, d = e % hd, key = t0 + j;
      float kv = 0.0f, vv = 0.0f;
      if (key < keyHi) {
        int block = a.blockTables[int64_t(b) * maxBlocks + key / a.blockSize];
        int64_t row = int64_t(key % a.blockSize) * a.kvHeads + kvh;
        int64_t at = int64_t(block) * a.blockBytes;
        kv = toFloat(reinterpret_cast<const C *>(kc + at)[row * hd + d]);
        vv = toFloat(reinterpret_cast<const C *>(vc + at)[row * hd + d]);
        if constexpr (kScaledKv<C>) {
          kv *= reinterpret_cast<const float *>(kc + at + scalesAt)[row];
          vv *= reinterpret_cast<const float *>(vc + at + scalesAt)[row];
        }
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
      // gpt-oss's sink: one more logit in the denominator, no column.
      const float lk = a.sinks ? l[k] + expf(a.sinks[head] - m[k]) : l[k];
      float inv = lk > 0.0f ? 1.0f / lk : 0.0f;
      float *o = a.out + int64_t(rowBase + itemRow(i)) * qCols + head * hd;
#pragma unroll
      for (int c = 0; c < kDimChunks; ++c)
        if (lane + 32 * c < hd)
          o[lane + 32 * c] = acc[k][c] * inv;
    }
  }
}

// Merges the splits of one (sequence, head): grid (sequences, heads).
__global__ void mergeSplitsKernel(const float *partial, const float *sinks,
                                  float *out, int heads, int hd, int splits) {
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
  if (sinks)
    total += expf(sinks[h] - mMax);
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
                        s>>>(a.partial, a.sinks, a.out, a.heads, a.headDim,
                             a.splits);
}

} // namespace

void launchKvWrite(cudaStream_t s, const float *k, const float *v,
                   const int32_t *slots, void *kCache, void *vCache,
                   const KvGeometry &g, int64_t rows) {
  if (rows <= 0)
    return;
  const unsigned grid = unsigned(rows);
  char *kc = static_cast<char *>(kCache), *vc = static_cast<char *>(vCache);
  withKvType(g.dtype, [&](auto c) {
    kvWriteKernel<decltype(c)><<<grid, 128, 0, s>>>(k, v, slots, kc, vc, g);
  });
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
  const int bytes = int(attentionSmemBytes(kAttentionMaxHeadDim));
  const void *kernels[] = {
      reinterpret_cast<const void *>(attentionKernel<float>),
      reinterpret_cast<const void *>(attentionKernel<__nv_bfloat16>),
      reinterpret_cast<const void *>(attentionKernel<__half>),
      reinterpret_cast<const void *>(attentionKernel<int8_t>),
      reinterpret_cast<const void *>(attentionKernel<__nv_fp8_e4m3>)};
  for (const void *kernel : kernels) {
    cudaError_t e = cudaFuncSetAttribute(
        kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e != cudaSuccess)
      return e;
  }
  return cudaSuccess;
}

void launchAttention(cudaStream_t s, const AttentionArgs &a) {
  if (a.gridX <= 0)
    return;
  withKvType(a.cacheDtype, [&](auto c) { launchTyped<decltype(c)>(s, a); });
}

} // namespace llmc::cuda
