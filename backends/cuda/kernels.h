//===- kernels.h - Host launchers of the CUDA kernels ----------*- C++ -*-===//
//
// Each kernel family lives in one .cu file and is reached through a plain
// C++ launcher declared here, so the host side (.cpp, built by g++ with the
// project's warnings) never sees device code. Launchers only enqueue on the
// given stream; the caller checks cudaGetLastError after each op.
//
// Activations are f32 and row-major. Weight and KV dtypes are llmc_dtype
// values.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace llmc::cuda {

/// The step's scalars in device memory, so that a captured decode graph
/// reads this step's values instead of the ones it was captured with.
struct DevStep {
  int32_t numTokens, numSeqs, maxBlocks, numLogits;
};

//===-- embedding.cu ------------------------------------------------------===//

/// out[t] = table[ids[t]] (table f32/bf16/f16 [V, dim], i8 with f32
/// `scales` [V, dim / group], or a K-quant with its `headers`; scales and
/// headers are null otherwise).
void launchEmbedding(cudaStream_t s, const void *table, uint32_t dtype,
                     const float *scales, const uint8_t *headers, int64_t group,
                     const int32_t *ids, float *out, int64_t rows, int64_t dim);

//===-- norm.cu -----------------------------------------------------------===//

void launchRmsNorm(cudaStream_t s, const float *x, const float *w, float *out,
                   int64_t rows, int64_t cols, float eps);
/// sum = x + r; out = rms_norm(sum) * w.
void launchAddRmsNorm(cudaStream_t s, const float *x, const float *r,
                      const float *w, float *sum, float *out, int64_t rows,
                      int64_t cols, float eps);
void launchLayerNorm(cudaStream_t s, const float *x, const float *w,
                     const float *b, float *out, int64_t rows, int64_t cols,
                     float eps);

//===-- rope.cu -----------------------------------------------------------===//

/// style 0: half (rotate_half), 1: interleaved. out may be x.
void launchRope(cudaStream_t s, const float *x, const int32_t *positions,
                const float *invFreq, const float *longInvFreq,
                const int32_t *useLong, float *out, int64_t rows, int64_t heads,
                int64_t headDim, int64_t rotaryDim, int64_t style,
                float scaling);

//===-- elementwise.cu ----------------------------------------------------===//

enum class Pointwise : int {
  Add,
  Mul,
  Silu,
  GeluErf,
  GeluTanh,
  Scale,   // a * alpha
  Softcap, // alpha * tanh(a / alpha)
};
/// out[i] = f(a[i], b[i]) over n values (b unused for unary functions).
void launchPointwise(cudaStream_t s, Pointwise f, const float *a,
                     const float *b, float *out, int64_t n, float alpha = 0.0f);
/// [rows, 2I] -> [rows, I]: act(x[:, :I]) * x[:, I:], act = silu, or the
/// tanh GELU with `geglu`.
/// act: 0 silu, 1 tanh GELU, 2 gpt-oss's clamped unit (limit, alpha);
/// interleaved: gate and up alternate in a run instead of halves.
void launchSwiglu(cudaStream_t s, const float *x, float *out, int64_t rows,
                  int64_t inner, int act, bool interleaved, float limit,
                  float alpha);
/// EXPERT_BIAS: out[t, run j] = y[t, run j] + bias[experts[t][j]], runs of
/// n; ids outside [0, E) add nothing (our own gating never writes one).
void launchExpertBias(cudaStream_t s, const float *y, const float *bias,
                      const int32_t *experts, float *out, int64_t rows,
                      int64_t k, int64_t n, int64_t E);
/// out = x[:, offset : offset + outCols].
void launchSlice(cudaStream_t s, const float *x, float *out, int64_t rows,
                 int64_t xCols, int64_t outCols, int64_t offset);
/// out[i] = x[rowIds[i]] for i < step->numLogits, 0 for the other rows.
void launchTakeRows(cudaStream_t s, const float *x, const int32_t *rowIds,
                    const DevStep *step, float *out, int64_t outRows,
                    int64_t cols);
/// f32 -> bf16 or f16 (dtype), n values.
void launchToHalf(cudaStream_t s, const float *x, void *out, int64_t n,
                  uint32_t dtype);
/// out[r][n] += bias[n].
void launchAddBias(cudaStream_t s, float *out, const float *bias, int64_t rows,
                   int64_t cols);

//===-- linear.cu ---------------------------------------------------------===//

/// out[r] = W · x[r] (+ bias) for rows <= kGemvMaxRows, W [N, K] of any
/// weight dtype (i8/i4 with f32 scales [N, K / group]).
constexpr int64_t kGemvMaxRows = 8;
struct GemvArgs {
  const float *x;
  int64_t rows, K, N;
  const void *w;
  uint32_t dtype;
  const float *scales; // i8/i4
  int64_t group;
  const float *bias; // may be null
  float *out;
  const uint8_t *e8m0; // MXFP4's scales [N, K / 32], a K-quant's headers
                       // [N, K / 256 * header bytes], else null
};
void launchGemv(cudaStream_t s, const GemvArgs &a);
/// EXPERT_LINEAR: a.w stacks E experts of [a.N, a.K] (a.scales likewise);
/// out [pairs, a.N] row p = x_p · W[experts[p]]ᵀ where x_p is row p / k of
/// x (xCols apart), run p % k of it when perRun. a.rows is unused.
struct ExpertArgs {
  const int32_t *experts; // [pairs]
  int64_t numExperts, k, xCols;
  bool perRun;
};
void launchExpertGemv(cudaStream_t s, const GemvArgs &a, const ExpertArgs &e,
                      int64_t pairs);
/// MOE_GATING over rows of E logits (mode and renormalise as backend.h).
void launchMoeGating(cudaStream_t s, const float *logits, float *weights,
                     int32_t *experts, int64_t rows, int64_t E, int64_t k,
                     bool renormalize, int64_t mode);
/// out[t] = sum_j weights[t][j] * y[t][j * N ..].
void launchMoeCombine(cudaStream_t s, const float *y, const float *weights,
                      float *out, int64_t rows, int64_t k, int64_t N);
/// i8/i4 [N, K] -> bf16 [N, K] (value * scale).
void launchDequantBf16(cudaStream_t s, const void *w, uint32_t dtype,
                       const float *scales, const uint8_t *e8m0, int64_t group,
                       int64_t N, int64_t K, void *out);

//===-- attention.cu ------------------------------------------------------===//

/// The cache geometry a kernel needs (backend.h's block layout).
struct KvGeometry {
  uint32_t dtype;
  int32_t blockSize, kvHeads, headDim;
  int64_t blockBytes; // llmc_kv_block_bytes
};

/// Writes rows [0, rows) of k and v at slots[t] (slots < 0 are padding and
/// skipped) into one layer of the cache, with their scales for i8 and fp8.
void launchKvWrite(cudaStream_t s, const float *k, const float *v,
                   const int32_t *slots, void *kCache, void *vCache,
                   const KvGeometry &kv, int64_t rows);

constexpr int kAttentionMaxHeadDim = 256;

struct AttentionArgs {
  const float *q; // [rows, heads * headDim]
  float *out;
  const void *kCache, *vCache; // this layer's blocks
  uint32_t cacheDtype;
  int64_t blockBytes; // bytes per block of one layer's K (or V)
  const int32_t *blockTables, *contextLens, *queryStart;
  const int32_t *tiles; // prefill: (seq, first new row) pairs
  const DevStep *step;  // maxBlocks
  int32_t heads, kvHeads, headDim, window, blockSize;
  float scale;
  float softcap;      // > 0: each score s becomes softcap * tanh(s / softcap)
  bool decode;        // one new token per sequence: grid.x = sequences
  int32_t gridX;      // prefill: tiles; decode: sequences
  int32_t splits;     // decode split-K (flash-decoding); 1 for prefill
  float *partial;     // decode with splits > 1: [seqs, heads, splits, hd + 2]
  const float *sinks; // [heads] or null: gpt-oss's sink logits
};
/// Query rows per CTA for a kv-head group of `group` query heads.
int32_t attentionRowsPerTile(int32_t group);
/// Number of CTAs along y for one kv head group (chunks of query heads).
int32_t attentionHeadChunks(int32_t group);
size_t attentionSmemBytes(int32_t headDim);
/// Opts the kernels in to the dynamic shared memory of head_dim 256.
cudaError_t attentionConfigure();
void launchAttention(cudaStream_t s, const AttentionArgs &a);

} // namespace llmc::cuda
