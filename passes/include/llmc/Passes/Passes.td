//===- Passes.td - llmc passes ----------------------------*- tablegen -*-===//
//
// One def per pass; each is implemented in passes/lib/<Name>.cpp and tested
// by test/lit/passes/<flag-without-llmc->.mlir. `llmc compile` and
// `llmc-opt --llmc-pipeline` run them in the order listed here.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_PASSES_TD
#define LLMC_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseAttention : Pass<"llmc-fuse-attention", "::mlir::ModuleOp"> {
  let summary = "Fuse scores/mask/softmax/weighted-sum into llmc.attention";
  let description = [{
    Recognises the decomposed attention the importer emits,

      transpose(matmul(softmax(causal_mask(scale(matmul(transpose(q),
          transpose(repeat_kv(k)), transpose_b)))), transpose(repeat_kv(v))))

    and replaces it with `llmc.attention %q, %k, %v {causal, scale, window}`
    over the un-repeated K and V (grouped-query attention reads kv head
    h / group). The mask and scale are optional; everything else must match
    exactly and every intermediate must have no other user, or the graph is
    left alone.
  }];
  let dependentDialects = ["::mlir::llmc::LLMCDialect"];
  let statistics = [Statistic<"numFused", "fused", "Attention blocks fused">];
}

def InsertKVCache : Pass<"llmc-insert-kv-cache", "::mlir::ModuleOp"> {
  let summary = "Route every layer's K/V through the paged KV cache";
  let description = [{
    For each causal `llmc.attention` (layer = its order in the function):
    the new K/V are stored with `llmc.kv_write` at the step's slots, and
    attention reads the whole history of each sequence back through
    `llmc.kv_read`, as a ragged batch (`query_start`, `context_lens`). The
    function gains the `!llmc.kv_cache` argument and the step metadata
    (slots, block tables, context lengths, query starts) and returns the
    updated cache.

    `kv-dtype` is the cache's storage type, independent of the activations:
    f32, bf16, f16, int8 (a scale per token and kv head) or fp8 (e4m3, the
    same scales); empty keeps the keys' element type.
  }];
  let options = [
    Option<"kvDtype", "kv-dtype", "std::string", /*default=*/"\"\"",
           "The cache's dtype: f32, bf16, f16, int8 or fp8">
  ];
  let dependentDialects = ["::mlir::llmc::LLMCDialect"];
}

def Shard : Pass<"llmc-shard", "::mlir::ModuleOp"> {
  let summary = "Tensor parallelism: attention heads and MLPs split over tp ranks";
  let description = [{
    Megatron's split of each layer, for `tp` ranks that all run the same
    graph on their own weight slices (SPMD). Runs on @forward after
    `llmc-insert-kv-cache`:

    - attention: Q, K and V projections are column-parallel (rank r keeps
      its heads' rows: query heads [r H/tp, (r+1) H/tp)), and so is
      everything between them and `llmc.attention` (reshape, rope, per-head
      norm, the cache: each rank caches its own kv heads). With fewer kv
      heads than ranks (tp a multiple of them) each rank keeps the one kv
      head its query heads read, as vLLM and TensorRT-LLM replicate them.
      The output projection is row-parallel: its columns of rank r's heads,
      then `llmc.all_reduce` of the partial sums.
    - MLP: the linears feeding the activation (silu/gelu, times up) are
      column-parallel over the intermediate size, the one after it
      row-parallel, then `llmc.all_reduce`; a MoE layer splits every
      expert's intermediate width so, one all_reduce after moe_combine.
    - a packed projection sliced by `llmc.slice` (qkv_proj, gate_up_proj,
      c_attn) becomes one linear per part over its rows of the same tensor;
      a row-parallel linear's bias is rank 0's (zeros elsewhere: -1).
    - embedding, norms, residual adds and the LM head stay replicated: every
      rank has the whole logits, so sampling needs no gather (the cost:
      each rank holds the vocabulary's two tables).

    Each split weight's `llmc.param` gets the rank's slice as its type and
    `shard_dim` / `shard_starts` for the plan writer; the module gets
    `llmc.tp`. gpt-oss: attention sinks split by heads, the interleaved
    gate/up and its expert bias by contiguous columns, the down bias rank
    0's. Refused with an error naming the op: heads or widths that do not
    divide, a gate-first clamped swiglu, packed (`sources`) or shared
    weights, and any op between a split linear and its consumer this pass
    does not know.
    tp = 1 leaves the module as it is.
  }];
  let options = [
    Option<"tp", "tp", "int64_t", /*default=*/"1", "Tensor-parallel ranks">
  ];
  let dependentDialects = ["::mlir::llmc::LLMCDialect"];
}

def SpecializePhases : Pass<"llmc-specialize-phases", "::mlir::ModuleOp"> {
  let summary = "Split @forward into @prefill, @decode and @verify";
  let description = [{
    @prefill: a ragged batch of new tokens over one or more sequences,
    attention over cached prefix + new tokens; the LM head is moved after
    `llmc.take_last`, so logits are computed only for the rows in
    `logits_rows` (the last new token of each sequence).
    @decode: one new token per sequence; attention becomes
    `llmc.paged_attention` over block tables.
    @verify: k new tokens per sequence with logits for each (speculative
    decoding).
  }];
  let dependentDialects = ["::mlir::llmc::LLMCDialect"];
}

def Fuse : Pass<"llmc-fuse", "::mlir::ModuleOp"> {
  let summary = "Fuse residual+norm, gate/up+SwiGLU and Q/K/V projections";
  let description = [{
    - `add` feeding `rms_norm` becomes `llmc.add_rms_norm` (both results).
    - `mul(silu(linear(x, Wg)), linear(x, Wu))` becomes one linear over a
      packed [Wg; Wu] param and `llmc.swiglu`.
    - Three projections of one input (Q, K, V) become one linear over a
      packed param (biases packed too) and three `llmc.slice`s.
  }];
  let dependentDialects = ["::mlir::llmc::LLMCDialect"];
}

def Quantize : Pass<"llmc-quantize", "::mlir::ModuleOp"> {
  let summary = "Weight-only conversion of linear weights to bf16/f16/int8/int4";
  let description = [{
    `mode=bf16|f16` changes the element type of linear weights.
    `mode=int8` (symmetric, one scale per output row) and `mode=int4`
    (symmetric, one scale per `group` inputs) turn `llmc.linear` into
    `llmc.quantized_linear` over new packed weight + scale params. The
    embedding and the LM head stay in f32 unless asked. `mode=ggml` converts
    each weight that carries a `ggml_type` to int8 or int4 in groups of 32
    (its GGUF block format's nearest llmc format) and the others as
    `otherwise` says.
  }];
  let options = [
    Option<"mode", "mode", "std::string", "\"f32\"",
           "f32, bf16, f16, int8, int4 or ggml">,
    Option<"otherwise", "otherwise", "std::string", "\"f32\"",
           "mode=ggml: the mode of weights not in a GGUF block format">,
    Option<"group", "group", "int64_t", "32", "int4 group size (32 or 128)">,
    Option<"quantizeEmbedding", "quantize-embedding", "bool", "false",
           "Also convert embedding tables (bf16, or f16 in f16 mode), and "
           "linears that share them">,
    Option<"quantizeHead", "quantize-head", "bool", "false",
           "Also convert the LM head">
  ];
  let dependentDialects = ["::mlir::llmc::LLMCDialect"];
}

def PlanMemory : Pass<"llmc-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Assign activation buffers to workspace offsets by liveness";
  let description = [{
    Every activation is [rows, ...] with rows the step's token count, so a
    buffer's bytes are a multiple of T. Buffers whose live ranges do not
    overlap share bytes (first fit in order of definition; reshapes are
    views of their input). Each op gets `llmc.offsets` (bytes per token of
    each result's offset) and each function `llmc.workspace = {per_token,
    constant}`, so the workspace of any step is per_token * T + constant.
  }];
}

def Serialize : Pass<"llmc-serialize", "::mlir::ModuleOp"> {
  let summary = "Lower each graph to kernel calls over numbered buffers";
  let description = [{
    Checks that every op of @prefill, @decode and @verify has a kernel and
    records the executable form the plan stores as `llmc.kernels` on each
    function, one line per kernel call (for tests and `--print-ir-after`).
    `llmc compile` builds the plan from the same lowering.
  }];
}

#endif // LLMC_PASSES_TD
