// RUN: llmc-opt %s | llmc-opt | FileCheck %s
// RUN: llmc-opt %s --mlir-print-op-generic | llmc-opt | FileCheck %s

// Round trip of every llmc op: parse, print, parse again, print.

// CHECK-LABEL: func.func @weights
func.func @weights() -> (tensor<2048x64xf32>, tensor<64x192xf32>, tensor<64x64xf32>) {
  // CHECK: llmc.param "model.embed_tokens.weight" : tensor<2048x64xf32>
  %0 = llmc.param "model.embed_tokens.weight" : tensor<2048x64xf32>
  // CHECK: llmc.param "transformer.h.0.attn.c_attn.weight" {transposed} : tensor<64x192xf32>
  %1 = llmc.param "transformer.h.0.attn.c_attn.weight" {transposed} : tensor<64x192xf32>
  // CHECK: llmc.param "qkv" {sources = ["q", "k", "v"]} : tensor<192x64xf32>
  %3 = llmc.param "qkv" {sources = ["q", "k", "v"]} : tensor<192x64xf32>
  // CHECK: llmc.param "q.int4" {group_size = 32 : i64, quant = "int4", quant_part = "weight"} : tensor<64x32xi8>
  %4 = llmc.param "q.int4" {quant = "int4", quant_part = "weight", group_size = 32 : i64} : tensor<64x32xi8>
  // CHECK: llmc.param "blk.0.attn_q.weight" {rope_unpermute_heads = 4 : i64} : tensor<64x64xf32>
  %2 = llmc.param "blk.0.attn_q.weight" {rope_unpermute_heads = 4 : i64} : tensor<64x64xf32>
  // CHECK: llmc.param "k" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 0, 16, 16>} : tensor<16x64xf32>
  %5 = llmc.param "k" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 0, 16, 16>} : tensor<16x64xf32>
  return %0, %1, %2 : tensor<2048x64xf32>, tensor<64x192xf32>, tensor<64x64xf32>
}

// CHECK-LABEL: func.func @collectives
func.func @collectives(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // CHECK: llmc.all_reduce %{{.*}} : tensor<?x64xf32>
  %0 = llmc.all_reduce %x : tensor<?x64xf32>
  return %0 : tensor<?x64xf32>
}

// CHECK-LABEL: func.func @decomposed
func.func @decomposed(%ids: tensor<?xi32>, %pos: tensor<?xi32>) -> tensor<1x2048xf32> {
  %table = llmc.param "embed" : tensor<2048x64xf32>
  %nw = llmc.param "norm" : tensor<64xf32>
  %nb = llmc.param "norm.bias" : tensor<64xf32>
  %wq = llmc.param "q" : tensor<64x64xf32>
  %bq = llmc.param "q.bias" : tensor<64xf32>
  // CHECK: llmc.embedding %{{.*}}, %{{.*}} : (tensor<2048x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %h = llmc.embedding %table, %ids : (tensor<2048x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %tq = llmc.param "embed.q" : tensor<2048x64xi8>
  %ts = llmc.param "embed.s" : tensor<2048x1xf32>
  // CHECK: llmc.quantized_embedding %{{.*}}, %{{.*}}, %{{.*}} {group_size = 64 : i64} : (tensor<2048x64xi8>, tensor<2048x1xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %hq = llmc.quantized_embedding %tq, %ts, %ids {group_size = 64 : i64} : (tensor<2048x64xi8>, tensor<2048x1xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %tb = llmc.param "embed.bf16" : tensor<2048x64xbf16>
  // CHECK: llmc.embedding %{{.*}}, %{{.*}} : (tensor<2048x64xbf16>, tensor<?xi32>) -> tensor<?x64xf32>
  %hb = llmc.embedding %tb, %ids : (tensor<2048x64xbf16>, tensor<?xi32>) -> tensor<?x64xf32>
  // CHECK: llmc.rms_norm %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64}
  %n = llmc.rms_norm %h, %nw {eps = 1.0e-05 : f64} : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  // CHECK: llmc.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64}
  %ln = llmc.layer_norm %n, %nw, %nb {eps = 1.0e-05 : f64} : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  // CHECK: llmc.linear %{{.*}}, %{{.*}} : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %q0 = llmc.linear %ln, %wq : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  // CHECK: llmc.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %q1 = llmc.linear %q0, %wq, %bq : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  // CHECK: llmc.reshape %{{.*}} : (tensor<?x64xf32>) -> tensor<?x4x16xf32>
  %q = llmc.reshape %q1 : (tensor<?x64xf32>) -> tensor<?x4x16xf32>
  // CHECK: llmc.rope %{{.*}}, %{{.*}} {rotary_dim = 16 : i64, scaling = {factor = 8.000000e+00 : f64, type = "llama3"}, style = "half", theta = 5.000000e+05 : f64}
  %qr = llmc.rope %q, %pos {theta = 5.0e+05 : f64, rotary_dim = 16 : i64, style = "half", scaling = {type = "llama3", factor = 8.0 : f64}} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  // CHECK: llmc.rope %{{.*}}, %{{.*}} {rotary_dim = 8 : i64, style = "interleaved", theta = 1.000000e+04 : f64}
  %kr = llmc.rope %q, %pos {theta = 1.0e+04 : f64, rotary_dim = 8 : i64, style = "interleaved"} : (tensor<?x4x16xf32>, tensor<?xi32>) -> tensor<?x4x16xf32>
  // CHECK: llmc.repeat_kv %{{.*}} {repeats = 2 : i64} : (tensor<?x4x16xf32>) -> tensor<?x8x16xf32>
  %rep = llmc.repeat_kv %kr {repeats = 2 : i64} : (tensor<?x4x16xf32>) -> tensor<?x8x16xf32>
  // CHECK: llmc.transpose %{{.*}} {permutation = array<i64: 1, 0, 2>} : (tensor<?x4x16xf32>) -> tensor<4x?x16xf32>
  %qt = llmc.transpose %qr {permutation = array<i64: 1, 0, 2>} : (tensor<?x4x16xf32>) -> tensor<4x?x16xf32>
  // CHECK: llmc.matmul %{{.*}}, %{{.*}} {transpose_b} : (tensor<4x?x16xf32>, tensor<4x?x16xf32>) -> tensor<4x?x?xf32>
  %s = llmc.matmul %qt, %qt {transpose_b} : (tensor<4x?x16xf32>, tensor<4x?x16xf32>) -> tensor<4x?x?xf32>
  // CHECK: llmc.scale %{{.*}} {factor = 2.500000e-01 : f64} : tensor<4x?x?xf32>
  %ss = llmc.scale %s {factor = 0.25 : f64} : tensor<4x?x?xf32>
  // CHECK: llmc.causal_mask %{{.*}} {window = 16 : i64} : tensor<4x?x?xf32>
  %m = llmc.causal_mask %ss {window = 16 : i64} : tensor<4x?x?xf32>
  // CHECK: llmc.causal_mask %{{.*}} : tensor<4x?x?xf32>
  %m0 = llmc.causal_mask %m : tensor<4x?x?xf32>
  // CHECK: llmc.softmax %{{.*}} : tensor<4x?x?xf32>
  %p = llmc.softmax %m0 : tensor<4x?x?xf32>
  // CHECK: llmc.matmul %{{.*}}, %{{.*}} : (tensor<4x?x?xf32>, tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %o = llmc.matmul %p, %qt : (tensor<4x?x?xf32>, tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
  %ot = llmc.transpose %o {permutation = array<i64: 1, 0, 2>} : (tensor<4x?x16xf32>) -> tensor<?x4x16xf32>
  %of = llmc.reshape %ot : (tensor<?x4x16xf32>) -> tensor<?x64xf32>
  // CHECK: llmc.add %{{.*}}, %{{.*}} : tensor<?x64xf32>
  %r = llmc.add %of, %h : tensor<?x64xf32>
  // CHECK: llmc.silu %{{.*}} : tensor<?x64xf32>
  %a = llmc.silu %r : tensor<?x64xf32>
  // CHECK: llmc.gelu %{{.*}} {approximate = "tanh"} : tensor<?x64xf32>
  %g = llmc.gelu %a {approximate = "tanh"} : tensor<?x64xf32>
  // CHECK: llmc.gelu %{{.*}} : tensor<?x64xf32>
  %g2 = llmc.gelu %g : tensor<?x64xf32>
  // CHECK: llmc.mul %{{.*}}, %{{.*}} : tensor<?x64xf32>
  %mm = llmc.mul %g2, %r : tensor<?x64xf32>
  // CHECK: llmc.slice %{{.*}} {size = 32 : i64, start = 16 : i64} : (tensor<?x64xf32>) -> tensor<?x32xf32>
  %sl = llmc.slice %mm {start = 16 : i64, size = 32 : i64} : (tensor<?x64xf32>) -> tensor<?x32xf32>
  // CHECK: llmc.take_last %{{.*}} : (tensor<?x64xf32>) -> tensor<1x64xf32>
  %last = llmc.take_last %mm : (tensor<?x64xf32>) -> tensor<1x64xf32>
  // CHECK: llmc.take_last %{{.*}}, %{{.*}} : (tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %lasts = llmc.take_last %mm, %ids : (tensor<?x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %logits = llmc.linear %last, %table : (tensor<1x64xf32>, tensor<2048x64xf32>) -> tensor<1x2048xf32>
  return %logits : tensor<1x2048xf32>
}

!cache = !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>

// CHECK-LABEL: func.func @fused
// CHECK-SAME: !llmc.kv_cache<layers = 2, kv_heads = 2, head_dim = 16, dtype = f32>
func.func @fused(%c: !cache, %q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>,
                 %slots: tensor<?xi32>, %table: tensor<?xi32>, %len: tensor<1xi32>,
                 %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // CHECK: llmc.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 2.500000e-01 : f64, window = 4 : i64}
  %a = llmc.attention %q, %k, %v {causal, scale = 0.25 : f64, window = 4 : i64} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x8x16xf32>
  // CHECK: llmc.kv_write %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {layer = 1 : i64}
  %c1 = llmc.kv_write %c, %k, %v, %slots {layer = 1 : i64} : (!cache, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?xi32>) -> !cache
  // CHECK: llmc.kv_read %{{.*}}, %{{.*}}, %{{.*}} {layer = 1 : i64}
  %hk, %hv = llmc.kv_read %c1, %tables, %lens {layer = 1 : i64} : (!cache, tensor<?x?xi32>, tensor<?xi32>) -> (tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  // CHECK: llmc.attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 2.500000e-01 : f64}
  %ar = llmc.attention %q, %hk, %hv, %table, %lens {causal, scale = 0.25 : f64} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x8x16xf32>
  // CHECK: llmc.paged_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {layer = 0 : i64, scale = 2.500000e-01 : f64}
  %pa = llmc.paged_attention %q, %c1, %tables, %lens {layer = 0 : i64, scale = 0.25 : f64} : (tensor<?x8x16xf32>, !cache, tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x8x16xf32>
  %gu = llmc.param "gate_up" : tensor<344x64xf32>
  %y = llmc.linear %x, %gu : (tensor<?x64xf32>, tensor<344x64xf32>) -> tensor<?x344xf32>
  // CHECK: llmc.swiglu %{{.*}} : (tensor<?x344xf32>) -> tensor<?x172xf32>
  %s = llmc.swiglu %y : (tensor<?x344xf32>) -> tensor<?x172xf32>
  // Gemma 2: GeGLU, soft-capped scores and logits, (1 + w) norm weights.
  // CHECK: llmc.geglu %{{.*}} : (tensor<?x344xf32>) -> tensor<?x172xf32>
  %gg = llmc.geglu %y : (tensor<?x344xf32>) -> tensor<?x172xf32>
  // CHECK: llmc.softcap %{{.*}} {cap = 3.000000e+01 : f64} : tensor<?x172xf32>
  %cap = llmc.softcap %gg {cap = 30.0 : f64} : tensor<?x172xf32>
  // CHECK: llmc.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 2.500000e-01 : f64, softcap = 5.000000e+01 : f64, window = 4 : i64}
  %acap = llmc.attention %q, %k, %v {causal, scale = 0.25 : f64, window = 4 : i64, softcap = 50.0 : f64} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x8x16xf32>
  // CHECK: llmc.paged_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {layer = 0 : i64, scale = 2.500000e-01 : f64, softcap = 5.000000e+01 : f64}
  %pcap = llmc.paged_attention %q, %c1, %tables, %lens {layer = 0 : i64, scale = 0.25 : f64, softcap = 50.0 : f64} : (tensor<?x8x16xf32>, !cache, tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x8x16xf32>
  // CHECK: llmc.param "gemma.norm" {offset = 1.000000e+00 : f64} : tensor<64xf32>
  %gn = llmc.param "gemma.norm" {offset = 1.0 : f64} : tensor<64xf32>
  %w = llmc.param "norm" : tensor<64xf32>
  // CHECK: llmc.add_rms_norm %{{.*}}, %{{.*}}, %{{.*}} {eps = 9.9999999999999995E-7 : f64}
  %sum, %normed = llmc.add_rms_norm %x, %x, %w {eps = 1.0e-06 : f64} : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>)
  %q8 = llmc.param "down.q8" : tensor<64x172xi8>
  %s8 = llmc.param "down.q8.scales" : tensor<64x1xf32>
  // CHECK: llmc.quantized_linear %{{.*}}, %{{.*}}, %{{.*}} {bits = 8 : i64, group_size = 172 : i64}
  %d8 = llmc.quantized_linear %s, %q8, %s8 {bits = 8 : i64, group_size = 172 : i64} : (tensor<?x172xf32>, tensor<64x172xi8>, tensor<64x1xf32>) -> tensor<?x64xf32>
  %q4 = llmc.param "up.q4" : tensor<64x32xi8>
  %s4 = llmc.param "up.q4.scales" : tensor<64x2xf32>
  %b4 = llmc.param "up.bias" : tensor<64xf32>
  // CHECK: llmc.quantized_linear %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {bits = 4 : i64, group_size = 32 : i64}
  %d4 = llmc.quantized_linear %normed, %q4, %s4, %b4 {bits = 4 : i64, group_size = 32 : i64} : (tensor<?x64xf32>, tensor<64x32xi8>, tensor<64x2xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %r = llmc.add %d4, %d8 : tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// The cache's storage may be 8-bit (a scale per token and kv head) while
// the K/V written to it and read back are f32.
// CHECK-LABEL: func.func @scaled_caches
// CHECK-SAME: !llmc.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, dtype = i8>
// CHECK-SAME: !llmc.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, dtype = f8E4M3FN>
func.func @scaled_caches(%c8: !llmc.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, dtype = i8>,
                         %cf: !llmc.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, dtype = f8E4M3FN>,
                         %k: tensor<?x2x16xf32>, %slots: tensor<?xi32>) -> !llmc.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, dtype = i8> {
  // CHECK: llmc.kv_write
  %c1 = llmc.kv_write %c8, %k, %k, %slots {layer = 0 : i64} : (!llmc.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, dtype = i8>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<?xi32>) -> !llmc.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, dtype = i8>
  return %c1 : !llmc.kv_cache<layers = 1, kv_heads = 2, head_dim = 16, dtype = i8>
}

// A mixture-of-experts block: routing, the chosen experts of each token
// (stacked [experts, out, in] weights, f32 or quantized), the weighted sum.
// CHECK-LABEL: func.func @moe
// CHECK: %[[W:.*]], %[[E:.*]] = llmc.topk_gating %{{.*}} {k = 2 : i64, normalize} : (tensor<?x8xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
// CHECK: llmc.topk_gating %{{.*}} {k = 2 : i64, scoring = "topk_softmax"}
// CHECK: %[[H:.*]] = llmc.expert_linear %{{.*}}, %{{.*}}, %[[E]] : (tensor<?x64xf32>, tensor<8x96x64xf32>, tensor<?x2xi32>) -> tensor<?x2x96xf32>
// CHECK: llmc.swiglu %[[H]] : (tensor<?x2x96xf32>) -> tensor<?x2x48xf32>
// CHECK: llmc.quantized_expert_linear %{{.*}}, %{{.*}}, %{{.*}}, %[[E]] {bits = 4 : i64, group_size = 48 : i64} : (tensor<?x2x48xf32>, tensor<8x64x24xi8>, tensor<8x64x1xf32>, tensor<?x2xi32>) -> tensor<?x2x64xf32>
// CHECK: llmc.moe_combine %{{.*}}, %[[W]] : (tensor<?x2x64xf32>, tensor<?x2xf32>) -> tensor<?x64xf32>
func.func @moe(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %r = llmc.param "router" : tensor<8x64xf32>
  %gu = llmc.param "experts.{e}.gate_up" : tensor<8x96x64xf32>
  %dq = llmc.param "down.q" : tensor<8x64x24xi8>
  %ds = llmc.param "down.s" : tensor<8x64x1xf32>
  %l = llmc.linear %x, %r : (tensor<?x64xf32>, tensor<8x64xf32>) -> tensor<?x8xf32>
  %w, %e = llmc.topk_gating %l {k = 2 : i64, normalize} : (tensor<?x8xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
  %w2, %e2 = llmc.topk_gating %l {k = 2 : i64, scoring = "topk_softmax"} : (tensor<?x8xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
  %h = llmc.expert_linear %x, %gu, %e : (tensor<?x64xf32>, tensor<8x96x64xf32>, tensor<?x2xi32>) -> tensor<?x2x96xf32>
  %a = llmc.swiglu %h : (tensor<?x2x96xf32>) -> tensor<?x2x48xf32>
  %d = llmc.quantized_expert_linear %a, %dq, %ds, %e {bits = 4 : i64, group_size = 48 : i64} : (tensor<?x2x48xf32>, tensor<8x64x24xi8>, tensor<8x64x1xf32>, tensor<?x2xi32>) -> tensor<?x2x64xf32>
  %y = llmc.moe_combine %d, %w : (tensor<?x2x64xf32>, tensor<?x2xf32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// gpt-oss: attention sinks (in the softmax, the fused attention and the
// paged one), MXFP4 experts with their E8M0 scales, expert biases and the
// clamped SwiGLU over interleaved gate/up rows.
// CHECK-LABEL: func.func @gpt_oss
// CHECK: llmc.softmax %{{.*}} sinks %{{.*}} : tensor<4xf32> : tensor<4x?x?xf32>
// CHECK: llmc.attention %{{.*}}, %{{.*}}, %{{.*}} sinks %{{.*}} {causal, scale = 2.500000e-01 : f64, window = 8 : i64}
// CHECK: llmc.quantized_expert_linear %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {bits = 4 : i64, format = "mxfp4", group_size = 32 : i64, int8_activations}
// CHECK: llmc.expert_bias %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x2x128xf32>, tensor<8x128xf32>, tensor<?x2xi32>) -> tensor<?x2x128xf32>
// CHECK: llmc.clamped_swiglu %{{.*}} {alpha = 1.702000e+00 : f64, interleaved, limit = 7.000000e+00 : f64} : (tensor<?x2x128xf32>) -> tensor<?x2x64xf32>
func.func @gpt_oss(%s: tensor<4x?x?xf32>, %q: tensor<?x4x16xf32>, %k: tensor<?x2x16xf32>, %x: tensor<?x64xf32>, %e: tensor<?x2xi32>) -> tensor<?x2x64xf32> {
  %sinks = llmc.param "sinks" : tensor<4xf32>
  %p = llmc.softmax %s sinks %sinks : tensor<4xf32> : tensor<4x?x?xf32>
  %o = llmc.attention %q, %k, %k sinks %sinks {causal, scale = 0.25 : f64, window = 8 : i64} : (tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>, tensor<4xf32>) -> tensor<?x4x16xf32>
  %wq = llmc.param "gu" {quant = "mxfp4", quant_part = "weight", group_size = 32 : i64} : tensor<8x128x32xi8>
  %ws = llmc.param "gu" {quant = "mxfp4", quant_part = "scales", group_size = 32 : i64} : tensor<8x128x2xi8>
  %h = llmc.quantized_expert_linear %x, %wq, %ws, %e {bits = 4 : i64, format = "mxfp4", group_size = 32 : i64, int8_activations} : (tensor<?x64xf32>, tensor<8x128x32xi8>, tensor<8x128x2xi8>, tensor<?x2xi32>) -> tensor<?x2x128xf32>
  %b = llmc.param "gu.bias" : tensor<8x128xf32>
  %hb = llmc.expert_bias %h, %b, %e : (tensor<?x2x128xf32>, tensor<8x128xf32>, tensor<?x2xi32>) -> tensor<?x2x128xf32>
  %a = llmc.clamped_swiglu %hb {alpha = 1.702 : f64, interleaved, limit = 7.0 : f64} : (tensor<?x2x128xf32>) -> tensor<?x2x64xf32>
  return %a : tensor<?x2x64xf32>
}
