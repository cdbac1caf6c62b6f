/*===- backend.h - The llmc backend plugin ABI -------------------*- C -*-===//
 *
 * A backend is a shared library `libllmc-backend-NAME.so` exporting one
 * symbol, `llmc_backend_query`. The runtime finds plugins next to the `llmc`
 * binary, in `<prefix>/lib/llmc/backends` and on `LLMC_BACKEND_PATH`.
 *
 * The ABI is C only: no C++ types, exceptions or allocators cross it. Memory
 * is freed by the side that allocated it. Every entry that can fail returns
 * an llmc_status and leaves a message for `last_error`.
 *
 * Versioning: the struct returned by `llmc_backend_query` starts with
 * {abi_major, abi_minor, struct_size, name} and is append-only. The host
 * refuses a plugin whose abi_major differs from its own, and checks
 * struct_size before calling an entry added in a later minor version.
 * Optional entries may be NULL.
 *
 * Threading: a backend object is used by one host thread at a time; a
 * backend may use its own threads inside `execute` (the cpu backend uses
 * OpenMP, the runtime's one pool).
 *
 *===----------------------------------------------------------------------===*/
#ifndef LLMC_BACKEND_H
#define LLMC_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LLMC_BACKEND_ABI_MAJOR 1
#define LLMC_BACKEND_ABI_MINOR 9

#if defined(__SANITIZE_ADDRESS__)
#define LLMC_BACKEND_BUILD_FLAVOR "asan"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LLMC_BACKEND_BUILD_FLAVOR "asan"
#endif
#endif
#ifndef LLMC_BACKEND_BUILD_FLAVOR
#define LLMC_BACKEND_BUILD_FLAVOR "plain"
#endif

typedef enum llmc_status {
  LLMC_OK = 0,
  LLMC_ERROR = 1,         /* see last_error */
  LLMC_UNIMPLEMENTED = 2, /* the backend does not do this (yet) */
  LLMC_OUT_OF_MEMORY = 3,
  LLMC_INVALID_ARGUMENT = 4,
} llmc_status;

typedef enum llmc_dtype {
  LLMC_F32 = 0,
  LLMC_F16 = 1,
  LLMC_BF16 = 2,
  LLMC_I8 = 3, /* int8 weights, one f32 scale per output row */
  LLMC_I4 = 4, /* int4 weights, two per byte (low nibble first), one f32
                  scale per group of input columns */
  LLMC_I32 = 5,
  /* fp8 e4m3 ("fn": no infinities, largest finite 448; ABI 1.3). Only as
     a KV-cache dtype. */
  LLMC_FP8_E4M3 = 6,
  /* MXFP4 (OCP microscaling FP4; ABI 1.7): a weight [.., N, K/2] of FP4
     E2M1 codes, two per byte, low nibble first (as i4), whose value is
     code * 2^(s - 127) with s the LLMC_E8M0 byte of its group of 32 inputs
     (scales [.., N, K/32]). Codes: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their
     negatives (bit 3 the sign). s = 255 (NaN) never occurs in a plan. */
  LLMC_MXFP4 = 7,
  LLMC_E8M0 = 8, /* MXFP4's scale bytes (ABI 1.7) */
  /* ggml's K-quants (ABI 1.8), super-blocks of 256 weights kept as ggml
     wrote them, in two halves (llmc/support/kquant.h): W [.., N, K] (K a
     multiple of 256) holds each super-block's codes (Q4_K 128 bytes, Q5_K
     160, Q6_K 192), its scales operand (LLMC_KQ_HEADER bytes [.., N,
     K/256 * header bytes]) each one's header (Q4_K, Q5_K: d, dmin, 12
     bytes of 6-bit scales and mins; Q6_K: 16 int8 scales, d). A weight's
     value is ggml's dequantize_row_* of the joined block. */
  LLMC_Q4_K = 9,
  LLMC_Q5_K = 10,
  LLMC_Q6_K = 11,
  LLMC_KQ_HEADER = 12,
} llmc_dtype;

/*===----------------------------------------------------------------------===
 * Graphs: a flat list of kernel calls over numbered buffers
 *===----------------------------------------------------------------------===*/

/* Every op of the executable form. Shapes are [rows, cols] row-major; rows
 * is T (new tokens in the step), B (sequences in the step) or 1. Attribute
 * meanings are listed per op; unlisted attribute slots are 0. */
typedef enum llmc_op_kind {
  /* out[t] = table[ids[t]]. in: table (weight [V, D]), ids (input). */
  LLMC_OP_EMBEDDING = 0,
  /* out = x / sqrt(mean(x^2) + eps) * w. in: x, w. f0 = eps. i0 = the
   * width normalized (0: the whole row): each run of i0 columns is
   * normalized on its own with w [i0] (per head; ABI 1.1). */
  LLMC_OP_RMS_NORM = 1,
  /* sum = x + r; out = rms_norm(sum) * w. in: x, r, w. out: sum, normed. */
  LLMC_OP_ADD_RMS_NORM = 2,
  /* in: x, w, b. f0 = eps. */
  LLMC_OP_LAYER_NORM = 3,
  /* out = x · Wᵀ (+ bias). Operands in fixed slots: [0] x, [1] W [N, K]
   * (f32/bf16/f16, or i8 [N, K] / i4 [N, K/2] bytes), [2] scales (f32
   * [N, K/group_size] for i8/i4, else NONE), [3] bias (f32 [N] or NONE).
   * i0 = group_size (i8: K, i4: 32 or 128). An MXFP4 W takes E8M0 scales
   * [N, K/32] and i0 = 32 (ABI 1.7); with i2 = 1 the backend may round x
   * to int8 blocks of 32 (llama.cpp's q8_0) for the product, with i2 = 0
   * it must not (an f32 plan: the product is exact). A K-quant W (ABI 1.8)
   * takes its KQ_HEADER scales and i0 = 256; i2 as MXFP4's (1: x may
   * round to int8 blocks, llama.cpp's q8_K). i2 is 0 for other dtypes (an
   * i8/i4 W may always round x). */
  LLMC_OP_LINEAR = 4,
  /* Rotary embedding of x [T, heads*head_dim] at positions, into out (which
   * may be x itself). in: x, positions (input), inv_freq (weight
   * [rotary_dim/2], f32, scaling already folded in by the compiler).
   * i0 = heads, i1 = head_dim, i2 = rotary_dim, i3 = style (0 half,
   * 1 interleaved). f0 = attention scaling (yarn mscale; 1 otherwise).
   * i4 > 0 (LongRoPE, ABI 1.5): a 4th operand holds the long table, used
   * for the tokens of every sequence b with rope_long[b] set (see
   * llmc_step_args); i4 is the length past which the host sets it. */
  LLMC_OP_ROPE = 5,
  LLMC_OP_ADD = 6, /* out = a + b */
  LLMC_OP_MUL = 7, /* out = a * b */
  LLMC_OP_SILU = 8,
  /* i0 = 1 for the tanh approximation (gelu_new), 0 for erf. */
  LLMC_OP_GELU = 9,
  /* [rows, 2I] -> [rows, I]: act(x[:, :I]) * x[:, I:]; i0 = the
   * activation: 0 silu (SwiGLU), 1 tanh GELU (GeGLU, Gemma; ABI 1.2).
   * i1 = g > 1: each row is g runs of [2I] (gate then up), the result g
   * runs of [I]: one per chosen expert (ABI 1.4); 0 or 1: one run.
   * i0 = 2 (gpt-oss; ABI 1.7): g = min(gate, f0), u = clamp(up, -f0, f0),
   * out = (u + 1) * g * sigmoid(f1 * g). i2 = 1 (ABI 1.7; with i0 = 2): a
   * run's gate and up are interleaved (gate at even columns), not halves. */
  LLMC_OP_SWIGLU = 10,
  /* out = x[:, i0 : i0 + out.cols]. */
  LLMC_OP_SLICE = 11,
  /* Stores K, V [T, kv_heads*head_dim] of layer i0 at slot_mapping[t].
   * in: k, v. No results. The cache layout is llmc_kv_cache_desc's. */
  LLMC_OP_KV_WRITE = 12,
  /* Causal attention of the step's new tokens over their sequences' cached
   * K/V (prefix and new tokens; KV_WRITE of this layer comes first).
   * in: q [T, heads*head_dim]. i0 = layer, i1 = heads, i2 = kv_heads,
   * i3 = head_dim, i4 = window (0 = none). f0 = scale. f1 = logit
   * soft-cap c (0 = none): each score s = f0 * q.k becomes c * tanh(s / c)
   * before the mask (Gemma 2; ABI 1.2). A second operand (ABI 1.7), sinks
   * (weight [heads] f32), joins each head's softmax denominator as one more
   * logit whose column is dropped: weights exp(s_j - m) / (sum_j exp(s_j -
   * m) + exp(sink - m)) (gpt-oss). */
  LLMC_OP_PREFILL_ATTENTION = 13,
  /* The same with exactly one new token per sequence (rows = B). */
  LLMC_OP_DECODE_ATTENTION = 14,
  /* out[i] = x[logits_rows[i]]: the rows whose logits are wanted. */
  LLMC_OP_TAKE_ROWS = 15,
  /* out = x * f0 (Gemma's embedding scale; ABI 1.2). */
  LLMC_OP_SCALE = 16,
  /* out = f0 * tanh(x / f0), f0 > 0 (final-logit soft-capping; ABI 1.2). */
  LLMC_OP_SOFTCAP = 17,
  /* Mixture of experts (ABI 1.4). Top-k routing of router logits
   * [rows, E]: out0 = weights [rows, k] (f32), out1 = experts [rows, k]
   * (an I32 buffer), in descending order, ties to the lower expert index.
   * i0 = k (1..E). i2 = 0: softmax over all E, then the k largest
   * probabilities, divided by their sum when i1 = 1; i2 = 1 (gpt-oss): the
   * k largest logits, then a softmax over those k (i1 must be 0). Computed
   * in f32. */
  LLMC_OP_MOE_GATING = 18,
  /* out [rows, k*N]: run j of row t = x_j · W[e]ᵀ, e = experts[t][j].
   * Operand slots: [0] x [rows, K] (every run reads the row) or [rows, k*K]
   * (run j reads run j), [1] W [E, N, K] stacked experts (f32/bf16/f16, or
   * i8 [E, N, K] / i4 [E, N, K/2] bytes), [2] scales (f32 [E, N, K/group]
   * for i8/i4, else NONE), [3] experts (I32 buffer [rows, k]).
   * i0 = group (as LINEAR's), i1 = k, i2 as LINEAR's (MXFP4 W: may x be
   * rounded to int8). An expert id outside [0, E) fails the
   * step (LLMC_INVALID_ARGUMENT). Only the chosen experts' rows are read. */
  LLMC_OP_EXPERT_LINEAR = 19,
  /* out [rows, N] = sum_j weights[t][j] * y[t, run j], y [rows, k*N],
   * weights [rows, k]. in: y, weights. i0 = k. */
  LLMC_OP_MOE_COMBINE = 20,
  /* out [rows, k*N] = y + bias[experts[t][j]] on run j of row t (ABI 1.7;
   * gpt-oss's expert biases). in: y [rows, k*N], bias (weight [E, N] f32),
   * experts (I32 [rows, k]). i0 = k. out may be y itself. */
  LLMC_OP_EXPERT_BIAS = 21,
  /* out = the elementwise sum of x over every tensor-parallel rank (ABI 1.9;
   * llmc-shard's row-parallel linears). in: x (f32). Runs the communicator
   * given by set_communicator; out may be x itself. */
  LLMC_OP_ALL_REDUCE = 22,
  LLMC_OP_COUNT = 23
} llmc_op_kind;

/* Clarifications (as the ref backend implements them; every backend agrees):
 * - A row-wise op (RMS_NORM, ADD_RMS_NORM, LAYER_NORM, ROPE, ADD, MUL, SILU,
 *   GELU, SCALE, SOFTCAP, EXPERT_BIAS) may write a result over an operand of
 * the same shape; no other result may overlap an operand or another result in
 * the workspace.
 * - LINEAR takes K from x's columns and N from the result's; an i4 W may be
 *   described as [N, K/2] bytes, and only its first dimension and byte count
 *   are checked. i8 is the i4 scheme with 8-bit values (group = K: one scale
 *   per row).
 * - ROPE's f0 is used as given: a graph without yarn sets it to 1.
 * - TAKE_ROWS (and the final copy) may serve fewer rows than the logits
 *   buffer has: num_logits rows are written, the rest are unspecified.
 * - DECODE_ATTENTION reads row b as sequence b; query_start may be NULL in a
 *   graph without PREFILL_ATTENTION.
 * - slot_mapping has no padding value: every slot must be in the pool.
 * - Activations are f32 buffers; the one exception is MOE_GATING's
 *   experts result, an I32 buffer read by EXPERT_LINEAR and EXPERT_BIAS
 *   (ABI 1.4). */

typedef enum llmc_operand_kind {
  LLMC_OPERAND_BUFFER = 0, /* index into graph buffers */
  LLMC_OPERAND_WEIGHT = 1, /* index into the plan's weights */
  LLMC_OPERAND_INPUT = 2,  /* 0 = tokens, 1 = positions (int32 [T]) */
  LLMC_OPERAND_NONE = 3,
} llmc_operand_kind;

typedef struct llmc_operand {
  uint32_t kind; /* llmc_operand_kind */
  uint32_t index;
} llmc_operand;

/* rows = t_coef * T + b_coef * B + constant. */
typedef struct llmc_rows {
  int32_t t_coef, b_coef, constant;
} llmc_rows;

typedef struct llmc_buffer_desc {
  llmc_rows rows;
  int64_t cols;
  uint32_t dtype; /* llmc_dtype */
  uint32_t reserved;
  /* Byte offset in the workspace as affine terms in T and B, assigned by
   * llmc-plan-memory; buffers whose lifetimes do not overlap share bytes. */
  int64_t offset_t, offset_b, offset_const;
} llmc_buffer_desc;

#define LLMC_MAX_OPERANDS 4
#define LLMC_MAX_RESULTS 2
#define LLMC_MAX_INT_ATTRS 6
#define LLMC_MAX_FLOAT_ATTRS 2

typedef struct llmc_op_desc {
  uint32_t kind; /* llmc_op_kind */
  uint32_t num_operands, num_results;
  llmc_operand operands[LLMC_MAX_OPERANDS];
  uint32_t results[LLMC_MAX_RESULTS]; /* buffer indices */
  int64_t i[LLMC_MAX_INT_ATTRS];
  double f[LLMC_MAX_FLOAT_ATTRS];
} llmc_op_desc;

typedef struct llmc_weight_desc {
  const char *name;
  uint32_t dtype; /* llmc_dtype */
  uint32_t rank;
  int64_t shape[4];
  const void *data; /* host memory (the plan's mapping), valid until
                       release_graph */
  size_t nbytes;
} llmc_weight_desc;

/* The weights are pages of a read-only file mapping: a plugin that keeps its
 * own copy of a weight may drop the weight's pages from the process
 * (madvise MADV_DONTNEED); a later read brings them back from the file.
 * Without it (a plan image in the caller's memory) dropping would zero the
 * caller's bytes. */
#define LLMC_GRAPH_WEIGHTS_FILE_MAPPED 1u

typedef struct llmc_graph_desc {
  const char *name; /* "prefill", "decode", "verify" */
  uint32_t num_ops, num_buffers, num_weights;
  const llmc_op_desc *ops;
  const llmc_buffer_desc *buffers;
  const llmc_weight_desc *weights;
  uint32_t logits_buffer; /* [rows, vocab] f32 */
  uint32_t flags;         /* LLMC_GRAPH_* (ABI 1.8; 0 before) */
  /* Workspace bytes = t * T + b * B + c, for any T and B. */
  int64_t workspace_t, workspace_b, workspace_c;
} llmc_graph_desc;

/*===----------------------------------------------------------------------===
 * The paged KV cache and a step's metadata (vLLM's layout)
 *===----------------------------------------------------------------------===*/

/* Per layer, K and V are each num_blocks blocks of llmc_kv_block_bytes.
 * A block of f32, bf16 or f16 holds [block_size, kv_heads, head_dim]
 * values. A block of i8 or fp8 e4m3 (ABI 1.3) holds [block_size, kv_heads,
 * head_dim] bytes, then [block_size, kv_heads] f32 scales: one per token
 * per kv head, value = stored * scale. KV_WRITE sets scale = max|x| / 127
 * (i8: stored = round-half-even(x / scale)) or max|x| / 448 (fp8: x / scale
 * rounded to nearest even, finite), scale 0 for a row of zeros. Keeping the
 * scales in the block makes copy-on-write one copy per block. */
typedef struct llmc_kv_cache_desc {
  uint32_t layers, kv_heads, head_dim;
  uint32_t dtype; /* f32, bf16, f16; i8, fp8_e4m3 (ABI 1.3) */
  uint32_t block_size, num_blocks;
  /* Sliding-window layers (ABI 1.6; only where the backend has
   * kv_copy_sliding_block): a layer with sliding_layers[l] = 1 holds
   * num_sliding_blocks blocks, addressed through the step's
   * sliding_slot_mapping and sliding_block_tables, instead of num_blocks.
   * The host frees a sequence's blocks that left every window, and points
   * their table entries at sliding block 0, which it never hands out: the
   * backend zeroes it so reading it (masked) stays finite. NULL: none. */
  uint32_t num_sliding_blocks;
  const uint8_t *sliding_layers; /* [layers] or NULL */
} llmc_kv_cache_desc;

/* Bytes of one block of one layer's K (or V); 0 for a dtype the cache
 * cannot hold. */
static inline uint64_t llmc_kv_block_bytes(uint32_t dtype, uint32_t block_size,
                                           uint32_t kv_heads,
                                           uint32_t head_dim) {
  uint64_t row = (uint64_t)block_size * kv_heads;
  switch (dtype) {
  case LLMC_F32:
    return row * head_dim * 4;
  case LLMC_BF16:
  case LLMC_F16:
    return row * head_dim * 2;
  case LLMC_I8:
  case LLMC_FP8_E4M3:
    return row * (head_dim + 4);
  default:
    return 0;
  }
}

/* A weight or buffer dtype's name as plans and `llmc inspect` print it. */
static inline const char *llmc_dtype_name(uint32_t dtype) {
  switch (dtype) {
  case LLMC_F32:
    return "f32";
  case LLMC_F16:
    return "f16";
  case LLMC_BF16:
    return "bf16";
  case LLMC_I8:
    return "i8";
  case LLMC_I4:
    return "i4";
  case LLMC_I32:
    return "i32";
  case LLMC_FP8_E4M3:
    return "fp8";
  case LLMC_MXFP4:
    return "mxfp4";
  case LLMC_E8M0:
    return "e8m0";
  case LLMC_Q4_K:
    return "q4_k";
  case LLMC_Q5_K:
    return "q5_k";
  case LLMC_Q6_K:
    return "q6_k";
  case LLMC_KQ_HEADER:
    return "kq_header";
  }
  return "unknown";
}

/* The KV dtype as llmc's flags spell it ("f32", "bf16", "f16", "int8",
 * "fp8"); NULL for a dtype the cache cannot hold. */
static inline const char *llmc_kv_dtype_name(uint32_t dtype) {
  switch (dtype) {
  case LLMC_F32:
    return "f32";
  case LLMC_BF16:
    return "bf16";
  case LLMC_F16:
    return "f16";
  case LLMC_I8:
    return "int8";
  case LLMC_FP8_E4M3:
    return "fp8";
  default:
    return NULL;
  }
}

typedef struct llmc_step_args {
  int32_t num_tokens;          /* T */
  int32_t num_seqs;            /* B */
  const int32_t *tokens;       /* [T] */
  const int32_t *positions;    /* [T] */
  const int32_t *slot_mapping; /* [T] block * block_size + offset */
  const int32_t *query_start;  /* [B + 1] new tokens of seq b are rows
                                  query_start[b] .. query_start[b+1]-1 */
  const int32_t *context_lens; /* [B] cached tokens incl. this step's */
  const int32_t *block_tables; /* [B, max_blocks] */
  int32_t max_blocks;
  int32_t num_logits;         /* rows of logits wanted */
  const int32_t *logits_rows; /* [num_logits] indices into [0, T) */
  float *logits;              /* [num_logits, vocab] host output */
  /* [B] (ABI 1.5): 1 where sequence b rotates with LongRoPE's long table
   * (it holds more than ROPE's i4 tokens: the host recomputes a sequence
   * whose cache was written with the short one); NULL = all short. */
  const uint8_t *rope_long;
  /* (ABI 1.6) The same two for the layers of the sliding pool (see
   * llmc_kv_cache_desc); NULL when the pool has none. */
  const int32_t *sliding_slot_mapping; /* [T] */
  const int32_t *sliding_block_tables; /* [B, max_blocks] */
} llmc_step_args;

/*===----------------------------------------------------------------------===
 * The plugin
 *===----------------------------------------------------------------------===*/

typedef struct llmc_backend llmc_backend;   /* a backend on one device */
typedef struct llmc_prepared llmc_prepared; /* a graph ready to run */
typedef struct llmc_kv_cache llmc_kv_cache; /* device-side KV pool */

typedef struct llmc_device_info {
  char name[128];        /* e.g. "CPU (AVX-512, AMX)", "NVIDIA H200" */
  int32_t usable;        /* 0: present but unusable here (see reason) */
  char reason[256];      /* why not usable, e.g. "no CUDA device" */
  uint64_t memory_bytes; /* device memory, 0 if shared with the host */
} llmc_device_info;

typedef struct llmc_backend_options {
  int32_t threads; /* 0 = the backend's default (cores) */
  int32_t device;  /* device index */
  float memory_fraction;
} llmc_backend_options;

/* The host's collectives for a tensor-parallel plan (ABI 1.9): every rank
 * runs the same steps, and each ALL_REDUCE meets the same one on every other
 * rank. Owned by the host; valid while the backend lives. Called from the
 * thread that runs `execute`. */
typedef struct llmc_communicator {
  int32_t rank, size;
  void *context;
  /* data[n] f32 in host memory becomes the sum over every rank's data. */
  llmc_status (*all_reduce_sum_f32)(void *context, float *data, size_t n);
} llmc_communicator;

typedef struct llmc_backend_api {
  uint32_t abi_major, abi_minor;
  uint32_t struct_size; /* sizeof(llmc_backend_api) as the plugin built it */
  const char *name;     /* "ref", "cpu", "cuda", ... */
  const char *build_flavor; /* LLMC_BACKEND_BUILD_FLAVOR */

  /* Devices this backend sees; a device that is present but unusable still
   * reports itself with usable = 0 and a reason. */
  int32_t (*device_count)(void);
  llmc_status (*device_info)(int32_t device, llmc_device_info *info);
  /* Higher wins when several builds of one backend load (optional). */
  int32_t (*score)(void);

  llmc_status (*create)(const llmc_backend_options *options,
                        llmc_backend **out);
  void (*destroy)(llmc_backend *backend);
  /* Message of the last failure on this backend (or of the last failed
   * create when backend is NULL). Valid until the next call. */
  const char *(*last_error)(llmc_backend *backend);

  /* Whether `op` with these operand dtypes runs here. */
  int32_t (*supports)(llmc_backend *backend, const llmc_op_desc *op,
                      const llmc_graph_desc *graph);

  /* Packs weights and chooses kernels once; the graph and its weight memory
   * must outlive the prepared object. */
  llmc_status (*prepare)(llmc_backend *backend, const llmc_graph_desc *graph,
                         llmc_prepared **out);
  void (*release)(llmc_backend *backend, llmc_prepared *prepared);

  llmc_status (*kv_create)(llmc_backend *backend,
                           const llmc_kv_cache_desc *desc, llmc_kv_cache **out);
  void (*kv_destroy)(llmc_backend *backend, llmc_kv_cache *cache);
  /* Copies block src to block dst in every layer (copy-on-write). */
  llmc_status (*kv_copy_block)(llmc_backend *backend, llmc_kv_cache *cache,
                               int32_t src, int32_t dst);

  /* Runs one step: writes args->num_logits rows of logits. */
  llmc_status (*execute)(llmc_backend *backend, llmc_prepared *prepared,
                         llmc_kv_cache *cache, const llmc_step_args *args);

  /* (ABI 1.6, optional) Copies sliding block src to dst in every sliding
   * layer. NULL: the backend takes no sliding pool (every layer keeps
   * num_blocks blocks). */
  llmc_status (*kv_copy_sliding_block)(llmc_backend *backend,
                                       llmc_kv_cache *cache, int32_t src,
                                       int32_t dst);

  /* (ABI 1.9, optional) The communicator ALL_REDUCE runs, before any
   * prepare. NULL: the backend runs no tensor-parallel plan. */
  llmc_status (*set_communicator)(llmc_backend *backend,
                                  const llmc_communicator *comm);
} llmc_backend_api;

/* The one exported symbol. Returns NULL if the plugin cannot serve a host
 * whose ABI major is at most `max_abi_major`. */
typedef const llmc_backend_api *(*llmc_backend_query_fn)(uint32_t max_abi_major,
                                                         void *reserved);

#if defined(_WIN32)
#define LLMC_BACKEND_EXPORT __declspec(dllexport)
#else
#define LLMC_BACKEND_EXPORT __attribute__((visibility("default")))
#endif

LLMC_BACKEND_EXPORT const llmc_backend_api *
llmc_backend_query(uint32_t max_abi_major, void *reserved);

#ifdef __cplusplus
}
#endif

#endif /* LLMC_BACKEND_H */
