//===- LLMCOps.td - llmc dialect operations ---------------*- tablegen -*-===//
//
// Two families: the decomposed ops the importer emits (they mirror the
// reference PyTorch math one to one) and the fused, cached and quantized ops
// that passes produce. Every op verifies its shapes; dynamic dimensions are
// accepted wherever a static one would be.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_OPS_TD
#define LLMC_OPS_TD

include "llmc/IR/LLMCDialect.td"
include "llmc/IR/LLMCTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def LLMC_FloatTensor : RankedTensorOf<[AnyFloat]>;
def LLMC_IndexTensor : RankedTensorOf<[I32, I64]>;
def LLMC_AnyTensor : RankedTensorOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

def LLMC_ParamOp : LLMC_Op<"param", [Pure]> {
  let summary = "A weight of the model, by its name in the weight table";
  let description = [{
    The value of the named checkpoint tensor, in the logical layout the
    graph uses. `transposed` says the checkpoint stores it transposed (GPT-2's
    Conv1D `[in, out]`; stacked experts: each expert, as gpt-oss's
    unquantized `gate_up_proj` [E, in, out]); `rope_unpermute_heads = N` says its rows carry GGUF's
    rotary permutation over N heads. `sources` packs several checkpoint
    tensors row-wise (a fused Q/K/V or gate/up weight), each converted as
    described by the other attributes. `quant` ("int8" | "int4") with
    `quant_part` ("weight" | "scales") and `group_size` names one half of a
    weight-only quantized tensor. `ggml_type` ("Q4_K", "Q8_0", ...) says the
    checkpoint stores the tensor in that GGUF block format: its f32 value is
    the exact dequantization, and `llmc-quantize` in mode "ggml" maps it onto
    the nearest llmc format. `offset` is added to every value: Gemma's
    RMSNorm scales by `1 + w`, so its norms are stored as `w` and used as
    `w + 1`. A rank-3 weight [E, N, K] stacks the experts of an MoE layer:
    a name (or source) holding `{e}` names one tensor per expert (Hugging
    Face's `experts.{e}.w1.weight`), any other names a tensor that already
    stacks them (GGUF's `ffn_gate_exps.weight`); with several `sources`,
    expert e's rows are each source's rows of expert e, in order. The plan
    writer applies all of this once, at compile time, so no graph ever pays
    for it.

    Under tensor parallelism (`llmc-shard`) the type is one rank's slice:
    `shard_dim` names the sliced dimension of the whole tensor and
    `shard_starts` holds S run starts per rank, rank after rank (S = its
    length / the module's `llmc.tp`): rank r's slice along that dimension is
    the S runs starting at `shard_starts[r * S + i]`, each of length (the
    type's size there) / S, concatenated. A replicated kv head gives several
    ranks the same start; -1 gives a rank zeros there (a row-parallel
    linear's bias, added once in the sum: rank 0 holds it).

    ```mlir
    %q = llmc.param "model.layers.0.self_attn.q_proj.weight" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 64>} : tensor<64x128xf32>
    ```

    ```mlir
    %w = llmc.param "model.layers.0.self_attn.q_proj.weight" : tensor<64x64xf32>
    %qkv = llmc.param "model.layers.0.self_attn.qkv_proj.weight" {sources = ["q", "k", "v"]} : tensor<128x64xf32>
    %o = llmc.param "blk.0.attn_output.weight" {ggml_type = "Q4_K"} : tensor<256x256xf32>
    %n = llmc.param "model.layers.0.input_layernorm.weight" {offset = 1.0 : f64} : tensor<64xf32>
    %e = llmc.param "model.layers.0.mlp.experts.{e}.gate_proj.weight" : tensor<8x48x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, UnitAttr:$transposed,
                       OptionalAttr<I64Attr>:$rope_unpermute_heads,
                       OptionalAttr<StrArrayAttr>:$sources,
                       OptionalAttr<StrAttr>:$quant,
                       OptionalAttr<StrAttr>:$quant_part,
                       OptionalAttr<I64Attr>:$group_size,
                       OptionalAttr<StrAttr>:$ggml_type,
                       OptionalAttr<F64Attr>:$offset,
                       OptionalAttr<I64Attr>:$shard_dim,
                       OptionalAttr<DenseI64ArrayAttr>:$shard_starts);
  let results = (outs LLMC_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Decomposed ops (importer output)
//===----------------------------------------------------------------------===//

def LLMC_EmbeddingOp : LLMC_Op<"embedding", [Pure]> {
  let summary = "Row lookup: result[i] = table[ids[i]]";
  let description = [{
    ```mlir
    %h = llmc.embedding %table, %ids : (tensor<2048x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
    ```
    A bf16 or f16 table may give f32 rows (widened as they are read).
  }];
  let arguments = (ins LLMC_FloatTensor:$table, LLMC_IndexTensor:$ids);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_QuantizedEmbeddingOp : LLMC_Op<"quantized_embedding", [Pure]> {
  let summary = "Row lookup in an int8 table: result[i] = table[ids[i]] * its scales";
  let description = [{
    ```mlir
    %h = llmc.quantized_embedding %table, %scales, %ids {group_size = 64 : i64} : (tensor<2048x64xi8>, tensor<2048x1xf32>, tensor<?xi32>) -> tensor<?x64xf32>
    ```
    The table is i8 [V, D] with one f32 scale per `group_size` columns
    (scales [V, D / group_size]); a lookup dequantizes one row.
    `format = "q4_k" | "q5_k" | "q6_k"` (group_size 256): a GGUF's K-quant
    table as it is, codes [V, D/256 * code bytes] and headers (i8 scales)
    [V, D/256 * header bytes] (llmc/support/kquant.h), as quantized_linear
    holds them: a tied LM head and the lookup share one copy.
  }];
  let arguments = (ins RankedTensorOf<[I8]>:$table, LLMC_AnyTensor:$scales,
                       LLMC_IndexTensor:$ids, I64Attr:$group_size,
                       DefaultValuedAttr<StrAttr, "\"int\"">:$format);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$table `,` $scales `,` $ids attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_RMSNormOp : LLMC_Op<"rms_norm", [Pure]> {
  let summary = "x / sqrt(mean(x^2) + eps) * weight over the last dimension";
  let description = [{
    ```mlir
    %y = llmc.rms_norm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins LLMC_FloatTensor:$input, LLMC_FloatTensor:$weight, F64Attr:$eps);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_LayerNormOp : LLMC_Op<"layer_norm", [Pure]> {
  let summary = "(x - mean) / sqrt(var + eps) * weight + bias over the last dimension";
  let arguments = (ins LLMC_FloatTensor:$input, LLMC_FloatTensor:$weight,
                       LLMC_FloatTensor:$bias, F64Attr:$eps);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_LinearOp : LLMC_Op<"linear", [Pure]> {
  let summary = "x · Wᵀ + b, with W stored [out, in] as in torch.nn.Linear";
  let description = [{
    ```mlir
    %y = llmc.linear %x, %w : (tensor<?x64xf32>, tensor<192x64xf32>) -> tensor<?x192xf32>
    %z = llmc.linear %x, %w, %b : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins LLMC_FloatTensor:$input, LLMC_FloatTensor:$weight,
                       Optional<LLMC_FloatTensor>:$bias);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_RopeOp : LLMC_Op<"rope", [Pure]> {
  let summary = "Rotary position embedding of [T, heads, head_dim] by positions [T]";
  let description = [{
    Rotates the first `rotary_dim` channels of each head by angle
    `position * inv_freq[i]`, `inv_freq[i] = theta^(-2i/rotary_dim)`.
    `style = "half"` pairs channel i with i + rotary_dim/2 (HF Llama, Qwen2);
    `"interleaved"` pairs 2i with 2i+1 (GPT-J, GGUF's original layout).
    `scaling` carries HF's `rope_scaling` ({type = "linear" | "dynamic" |
    "llama3" | "yarn", factor, ...}) or a GGUF's per-pair divisors
    ({type = "freq_factors", factors = array<f64: ...>}, rotary_dim/2 of
    them: inv_freq[i] / factors[i]).

    ```mlir
    %q = llmc.rope %x, %pos {theta = 1.0e+04 : f64, rotary_dim = 16 : i64, style = "half"}
        : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
    ```
  }];
  let arguments = (ins LLMC_FloatTensor:$input, LLMC_IndexTensor:$positions,
                       F64Attr:$theta, I64Attr:$rotary_dim, StrAttr:$style,
                       OptionalAttr<DictionaryAttr>:$scaling);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_MatmulOp : LLMC_Op<"matmul", [Pure]> {
  let summary = "Batched matrix product [..., M, K] x [..., K, N] (or [..., N, K] with transpose_b)";
  let arguments = (ins LLMC_FloatTensor:$lhs, LLMC_FloatTensor:$rhs, UnitAttr:$transpose_b);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_ScaleOp : LLMC_Op<"scale", [Pure, SameOperandsAndResultType]> {
  let summary = "Multiplies every element by a constant factor";
  let arguments = (ins LLMC_FloatTensor:$input, F64Attr:$factor);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def LLMC_SoftcapOp : LLMC_Op<"softcap", [Pure, SameOperandsAndResultType]> {
  let summary = "Soft-capping: cap * tanh(x / cap)";
  let description = [{
    Gemma 2 caps attention scores (between the scale and the mask, where
    `llmc-fuse-attention` folds it into `llmc.attention`) and the final
    logits.

    ```mlir
    %c = llmc.softcap %s {cap = 5.0e+01 : f64} : tensor<4x?x?xf32>
    ```
  }];
  let arguments = (ins LLMC_FloatTensor:$input, F64Attr:$cap);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def LLMC_SoftmaxOp : LLMC_Op<"softmax", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Softmax over the last dimension";
  let description = [{
    With `sinks` [H] (gpt-oss's attention sinks) the input is [H, Tq, Tk]
    attention scores and head h's rows take one more logit, sinks[h], into
    the denominator, whose probability is then dropped: each row sums to
    less than 1.
  }];
  let arguments = (ins LLMC_FloatTensor:$input, Optional<LLMC_FloatTensor>:$sinks,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input (`sinks` $sinks^ `:` type($sinks))? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def LLMC_CausalMaskOp : LLMC_Op<"causal_mask", [Pure, SameOperandsAndResultType]> {
  let summary = "Sets scores of keys a query must not see to -inf";
  let description = [{
    Scores are [heads, Tq, Tk]; the queries are the last Tq of the Tk
    positions. Query i (absolute position p = Tk - Tq + i) sees key j iff
    j <= p and, when `window` > 0, p - window < j (W keys, itself included).
  }];
  let arguments = (ins LLMC_FloatTensor:$input, DefaultValuedAttr<I64Attr, "0">:$window);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

class LLMC_ElementwiseBinaryOp<string mnemonic, string summ>
    : LLMC_Op<mnemonic, [Pure, SameOperandsAndResultType, Commutative]> {
  let summary = summ;
  let arguments = (ins LLMC_FloatTensor:$lhs, LLMC_FloatTensor:$rhs);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` type($result)";
}

def LLMC_AddOp : LLMC_ElementwiseBinaryOp<"add", "Elementwise sum">;
def LLMC_MulOp : LLMC_ElementwiseBinaryOp<"mul", "Elementwise product">;

def LLMC_SiluOp : LLMC_Op<"silu", [Pure, SameOperandsAndResultType]> {
  let summary = "x * sigmoid(x)";
  let arguments = (ins LLMC_FloatTensor:$input);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def LLMC_GeluOp : LLMC_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "GELU; approximate = \"tanh\" is GPT-2's gelu_new, \"none\" the erf form";
  let arguments = (ins LLMC_FloatTensor:$input,
                       DefaultValuedAttr<StrAttr, "\"none\"">:$approximate);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def LLMC_ReshapeOp : LLMC_Op<"reshape", [Pure]> {
  let summary = "Same elements, new shape; at most one result dimension is dynamic";
  let arguments = (ins LLMC_AnyTensor:$input);
  let results = (outs LLMC_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_TransposeOp : LLMC_Op<"transpose", [Pure]> {
  let summary = "Permutes dimensions: result dim i = input dim permutation[i]";
  let arguments = (ins LLMC_AnyTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs LLMC_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_RepeatKVOp : LLMC_Op<"repeat_kv", [Pure]> {
  let summary = "Repeats each kv head `repeats` times: [T, Hkv, D] -> [T, Hkv*repeats, D]";
  let arguments = (ins LLMC_FloatTensor:$input, I64Attr:$repeats);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_SliceOp : LLMC_Op<"slice", [Pure]> {
  let summary = "Columns [start, start + size) of the last dimension";
  let description = [{
    Splits packed projections (GPT-2's c_attn, a packed Q/K/V or gate/up):

    ```mlir
    %k = llmc.slice %qkv {start = 64 : i64, size = 64 : i64} : (tensor<?x192xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins LLMC_FloatTensor:$input, I64Attr:$start, I64Attr:$size);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_TakeLastOp : LLMC_Op<"take_last", [Pure]> {
  let summary = "The last row of [T, D] (or the rows at `indices`, one per sequence)";
  let description = [{
    Without `indices`: [T, D] -> [1, D]. With `indices` [B]: [T, D] -> [B, D],
    the row of each sequence's last new token in a ragged batch.
  }];
  let arguments = (ins LLMC_FloatTensor:$input, Optional<LLMC_IndexTensor>:$indices);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Mixture of experts (importer output; expert weights are stacked)
//===----------------------------------------------------------------------===//

def LLMC_TopKGatingOp : LLMC_Op<"topk_gating", [Pure]> {
  let summary = "The k experts each token is routed to, and their weights";
  let description = [{
    Router logits [T, E] -> weights [T, k] (f32) and experts [T, k] (i32),
    computed in f32. `scoring = "softmax_topk"` (Mixtral, Qwen3-MoE): a
    softmax over all E logits, then the k largest probabilities, renormalised
    to sum 1 when `normalize` is set. `"topk_softmax"` (gpt-oss): the k
    largest logits, then a softmax over those k. Either way the k are in
    descending order and ties go to the lower expert index.

    ```mlir
    %w, %e = llmc.topk_gating %logits {k = 2 : i64, normalize}
        : (tensor<?x8xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
    ```
  }];
  let arguments = (ins LLMC_FloatTensor:$logits, I64Attr:$k, UnitAttr:$normalize,
                       DefaultValuedAttr<StrAttr, "\"softmax_topk\"">:$scoring);
  let results = (outs LLMC_FloatTensor:$weights, RankedTensorOf<[I32]>:$experts);
  let assemblyFormat = "$logits attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_ExpertLinearOp : LLMC_Op<"expert_linear", [Pure]> {
  let summary = "x · W[e]ᵀ for each of a token's chosen experts e";
  let description = [{
    W [E, N, K] stacks the experts' [N, K] weights (torch.nn.Linear's
    layout). `experts` [T, k] names each token's experts; the result
    [T, k, N] holds, at [t, j], the input row times expert experts[t, j]'s
    weight. The input is [T, K] (every chosen expert reads the token's row)
    or [T, k, K] (slot j reads its own row: the down projection).

    ```mlir
    %h = llmc.expert_linear %x, %w, %e : (tensor<?x64xf32>, tensor<8x96x64xf32>, tensor<?x2xi32>) -> tensor<?x2x96xf32>
    ```
  }];
  let arguments = (ins LLMC_FloatTensor:$input, LLMC_FloatTensor:$weight,
                       RankedTensorOf<[I32]>:$experts);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_MoECombineOp : LLMC_Op<"moe_combine", [Pure]> {
  let summary = "The routing-weighted sum of each token's expert outputs";
  let description = [{
    result[t] = sum over j of weights[t, j] * input[t, j], input [T, k, N],
    weights [T, k].

    ```mlir
    %y = llmc.moe_combine %h, %w : (tensor<?x2x64xf32>, tensor<?x2xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins LLMC_FloatTensor:$input, LLMC_FloatTensor:$weights);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fused, cached and quantized ops (pass output)
//===----------------------------------------------------------------------===//

// Not Pure: every rank must run it, in the same order, or the others wait.
def LLMC_AllReduceOp : LLMC_Op<"all_reduce", [SameOperandsAndResultType]> {
  let summary = "The elementwise sum of the operand over every tensor-parallel rank";
  let description = [{
    Under `llmc-shard` each rank holds a partial sum after a row-parallel
    linear; every rank gets the total. The ranks are the module's `llmc.tp`.

    ```mlir
    %y = llmc.all_reduce %partial : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins LLMC_FloatTensor:$input);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def LLMC_AttentionOp : LLMC_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "softmax(scale · Q·Kᵀ + mask) · V with grouped kv heads";
  let description = [{
    Q [T, Hq, D], K [S, Hkv, D], V [S, Hkv, Dv] -> [T, Hq, Dv]; query head h
    reads kv head h / (Hq / Hkv). The T queries are the last T of the S
    positions; with `causal` the mask and `window` follow `llmc.causal_mask`.
    `softcap` > 0 caps each scaled score s at softcap * tanh(s / softcap)
    before the mask (`llmc.softcap`, Gemma 2); 0 leaves scores as they are.

    With `sinks` [Hq] each head's softmax takes one more logit into its
    denominator whose column is dropped (`llmc.softmax`'s sinks; gpt-oss).

    With `segments` (query_start [B+1], context_lens [B]) the rows are a
    ragged batch: queries query_start[b] .. query_start[b+1]-1 belong to
    sequence b, whose keys are the next context_lens[b] rows of K and V (the
    histories of the sequences, concatenated, as `llmc.kv_read` returns them).

    ```mlir
    %o = llmc.attention %q, %k, %v {causal, scale = 2.5e-01 : f64, window = 0 : i64}
        : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x8x16xf32>
    ```
  }];
  let arguments = (ins LLMC_FloatTensor:$query, LLMC_FloatTensor:$key,
                       LLMC_FloatTensor:$value, Variadic<LLMC_IndexTensor>:$segments,
                       Optional<LLMC_FloatTensor>:$sinks,
                       UnitAttr:$causal, F64Attr:$scale,
                       DefaultValuedAttr<I64Attr, "0">:$window,
                       DefaultValuedAttr<F64Attr, "0.0">:$softcap);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$query `,` $key `,` $value (`,` $segments^)? (`sinks` $sinks^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_KVWriteOp : LLMC_Op<"kv_write", [Pure]> {
  let summary = "Stores the new tokens' K and V of one layer at their cache slots";
  let description = [{
    K, V [T, Hkv, D]; `slots` [T] holds block * block_size + offset for each
    token. Returns the updated cache, so reads that follow are ordered.
  }];
  let arguments = (ins LLMC_KVCacheType:$cache, LLMC_FloatTensor:$key,
                       LLMC_FloatTensor:$value, LLMC_IndexTensor:$slots, I64Attr:$layer);
  let results = (outs LLMC_KVCacheType:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_KVReadOp : LLMC_Op<"kv_read", [Pure]> {
  let summary = "Reads one layer's whole K/V history of the step's sequences";
  let description = [{
    `block_tables` [B, M] lists each sequence's blocks; `context_lens` [B]
    the number of cached tokens, new ones included. Returns K, V [S, Hkv, D],
    the B histories concatenated (S = sum of context_lens).
  }];
  let arguments = (ins LLMC_KVCacheType:$cache, LLMC_IndexTensor:$block_tables,
                       LLMC_IndexTensor:$context_lens, I64Attr:$layer);
  let results = (outs LLMC_FloatTensor:$key, LLMC_FloatTensor:$value);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_PagedAttentionOp : LLMC_Op<"paged_attention", [Pure]> {
  let summary = "Decode attention of one new query per sequence over paged K/V";
  let description = [{
    Q [B, Hq, D]; `block_tables` [B, M]; `context_lens` [B]. Each query is the
    last position of its sequence and attends (with `window`, and
    `softcap` and `sinks` as in `llmc.attention`) to its history.
  }];
  let arguments = (ins LLMC_FloatTensor:$query, LLMC_KVCacheType:$cache,
                       LLMC_IndexTensor:$block_tables, LLMC_IndexTensor:$context_lens,
                       Optional<LLMC_FloatTensor>:$sinks,
                       I64Attr:$layer, F64Attr:$scale,
                       DefaultValuedAttr<I64Attr, "0">:$window,
                       DefaultValuedAttr<F64Attr, "0.0">:$softcap);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

class LLMC_GatedOp<string mnemonic, string act> : LLMC_Op<mnemonic, [Pure]> {
  let summary = act # "(gate) * up over a packed [.., 2I] input (gate first)";
  let arguments = (ins LLMC_FloatTensor:$input);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_SwiGLUOp : LLMC_GatedOp<"swiglu", "silu">;
// Gemma's MLP: gelu_pytorch_tanh, GELU with the tanh approximation.
def LLMC_GeGLUOp : LLMC_GatedOp<"geglu", "gelu_tanh">;

def LLMC_ClampedSwiGLUOp : LLMC_Op<"clamped_swiglu", [Pure]> {
  let summary = "gpt-oss's gated activation over a packed [.., 2I] input";
  let description = [{
    g = min(gate, limit), u = clamp(up, -limit, limit),
    result = (u + 1) * g * sigmoid(alpha * g). Gate and up are the input's
    halves (gate first), or with `interleaved` its even and odd columns
    (gpt-oss's gate_up_proj rows alternate gate and up units).
  }];
  let arguments = (ins LLMC_FloatTensor:$input, F64Attr:$limit, F64Attr:$alpha,
                       UnitAttr:$interleaved);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_ExpertBiasOp : LLMC_Op<"expert_bias", [Pure]> {
  let summary = "Adds each chosen expert's bias to its run of an expert_linear";
  let description = [{
    input [T, k, N], bias [E, N], experts [T, k]: result[t, j] =
    input[t, j] + bias[experts[t, j]].
  }];
  let arguments = (ins LLMC_FloatTensor:$input, LLMC_FloatTensor:$bias,
                       RankedTensorOf<[I32]>:$experts);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_AddRMSNormOp : LLMC_Op<"add_rms_norm", [Pure]> {
  let summary = "sum = x + residual; normed = rms_norm(sum) (both returned)";
  let arguments = (ins LLMC_FloatTensor:$input, LLMC_FloatTensor:$residual,
                       LLMC_FloatTensor:$weight, F64Attr:$eps);
  let results = (outs LLMC_FloatTensor:$sum, LLMC_FloatTensor:$normed);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_QuantizedLinearOp : LLMC_Op<"quantized_linear", [Pure]> {
  let summary = "x · dequant(W)ᵀ + b with weight-only int8 or int4 W";
  let description = [{
    `bits = 8`: W is i8 [N, K] with one scale per output row (scales [N, 1]).
    `bits = 4`: W is i8 [N, K/2], two signed nibbles per byte (low nibble
    first), one scale per `group_size` inputs (scales [N, K/group_size]).
    `format = "mxfp4"` (bits 4, group_size 32): each nibble is an FP4 E2M1
    code and each scale an E8M0 byte s (i8 scales, value 2^(s - 127));
    `int8_activations` lets the backend round the input to int8 blocks of 32
    for the product, as llama.cpp does (a plan of reduced-precision
    compute); without it the input stays f32 and the product is exact.
    `format = "q4_k" | "q5_k" | "q6_k"` (bits 4, 5, 6, group_size 256):
    ggml's K-quant super-blocks as a GGUF holds them, split in two
    (llmc/support/kquant.h): W [N, K/256 * code bytes] their codes, scales
    (i8) [N, K/256 * header bytes] their headers; `int8_activations` as for
    mxfp4.
  }];
  let arguments = (ins LLMC_FloatTensor:$input, RankedTensorOf<[I8]>:$weight,
                       LLMC_AnyTensor:$scales, Optional<LLMC_FloatTensor>:$bias,
                       I64Attr:$bits, I64Attr:$group_size,
                       DefaultValuedAttr<StrAttr, "\"int\"">:$format,
                       UnitAttr:$int8_activations);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight `,` $scales (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def LLMC_QuantizedExpertLinearOp : LLMC_Op<"quantized_expert_linear", [Pure]> {
  let summary = "llmc.expert_linear over weight-only int8 or int4 experts";
  let description = [{
    The stacked weight is i8 [E, N, K] (`bits = 8`) or [E, N, K/2]
    (`bits = 4`, two signed nibbles per byte, low first) with scales
    [E, N, K/group_size]: each expert is quantized as
    `llmc.quantized_linear` quantizes one weight (`format` as there).
  }];
  let arguments = (ins LLMC_FloatTensor:$input, RankedTensorOf<[I8]>:$weight,
                       LLMC_AnyTensor:$scales, RankedTensorOf<[I32]>:$experts,
                       I64Attr:$bits, I64Attr:$group_size,
                       DefaultValuedAttr<StrAttr, "\"int\"">:$format,
                       UnitAttr:$int8_activations);
  let results = (outs LLMC_FloatTensor:$result);
  let assemblyFormat = "$input `,` $weight `,` $scales `,` $experts attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif // LLMC_OPS_TD
