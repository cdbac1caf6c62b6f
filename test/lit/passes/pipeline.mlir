// RUN: llmc-opt %s -split-input-file -verify-diagnostics --llmc-pipeline | FileCheck %s
// RUN: llmc-opt %s -split-input-file -verify-diagnostics --llmc-pipeline="quant=int8" | FileCheck %s --check-prefix=INT8
// RUN: llmc-opt %s -split-input-file -verify-diagnostics --llmc-pipeline="dtype=bf16" | FileCheck %s --check-prefix=BF16
// RUN: llmc-opt %s -split-input-file -verify-diagnostics --llmc-pipeline="disable=llmc-fuse,llmc-plan-memory" | FileCheck %s --check-prefix=NOFUSE
// RUN: not llmc-opt %s -split-input-file --llmc-pipeline="disable=llmc-serialize" 2>&1 | FileCheck %s --check-prefix=ERR-REQUIRED
// RUN: not llmc-opt %s -split-input-file --llmc-pipeline="disable=llmc-foo" 2>&1 | FileCheck %s --check-prefix=ERR-UNKNOWN
// RUN: llmc-opt %s -split-input-file -verify-diagnostics --llmc-pipeline="quant=int8 quantize-head=false" | FileCheck %s --check-prefix=F32HEAD
// RUN: llmc-opt %s -split-input-file -verify-diagnostics --llmc-pipeline="dtype=bf16 quant=int8" | FileCheck %s --check-prefix=MIXED

// Tests that the pipeline refuses to skip a required pass or an unknown pass.
// ERR-REQUIRED: pass 'llmc-serialize' is required: the plan cannot run without it (optional: llmc-fuse, llmc-plan-memory)
// ERR-UNKNOWN: unknown pass 'llmc-foo' (passes: llmc-fuse-attention, llmc-insert-kv-cache, llmc-specialize-phases, llmc-fuse, llmc-quantize, llmc-plan-memory, llmc-serialize)

// Tests that the whole pipeline turns a handwritten 1-layer Llama-style model
// (hidden 8, 2 query heads sharing 1 kv head of 4, FFN 16, vocab 16) into
// @prefill, @decode and @verify: fused cached attention (paged in @decode),
// logits only for the last rows in @prefill, fused residual+norm, SwiGLU and
// Q/K/V, planned workspace offsets and the kernel lines of each phase.

// CHECK-LABEL: module attributes {llmc.weights = ["embed : f32", "l0.attn_norm : f32", "l0.q+l0.k+l0.v : f32", "rope.inv_freq(theta=1.000000e+04,dim=4) : f32", "l0.o : f32", "l0.ffn_norm : f32", "l0.gate+l0.up : f32", "l0.down : f32", "norm : f32", "head : f32"]}
// CHECK-NOT: func.func @forward

// CHECK-LABEL: func.func @prefill
// CHECK-SAME: !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32> {llmc.name = "kv_cache"}
// CHECK-SAME: {llmc.name = "logits_rows"}
// CHECK-SAME: llmc.kernels = ["b0 = embedding(w0, tokens)", "b1 = rms_norm(b0, w1)", "b2 = linear(b1, w2, -, -)",
// CHECK-SAME: "kv_write(b7, b5)", "b8 = prefill_attention(b6)",
// CHECK-SAME: "b17 = take_rows(b16)", "b18 = linear(b17, w9, -, -)"]
// CHECK-SAME: llmc.workspace = {constant = 0 : i64, per_token = {{[0-9]+}} : i64}
// CHECK: llmc.param "l0.q+l0.k+l0.v" {sources = ["l0.q", "l0.k", "l0.v"]} : tensor<16x8xf32>
// CHECK-COUNT-3: llmc.slice
// CHECK: llmc.kv_write
// CHECK: %[[HK:.*]], %[[HV:.*]] = llmc.kv_read
// CHECK: llmc.attention %{{.*}}, %[[HK]], %[[HV]], %{{.*}}, %{{.*}} {causal, llmc.offsets = array<i64: {{[0-9]+}}>, scale = 5.000000e-01 : f64}
// CHECK-SAME: (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x2x4xf32>
// CHECK: llmc.add_rms_norm
// CHECK: llmc.swiglu
// CHECK: %{{.*}}, %[[NORMED:.*]] = llmc.add_rms_norm
// CHECK: %[[LAST:.*]] = llmc.take_last %[[NORMED]], %{{.*}} {llmc.offsets
// CHECK: llmc.linear %[[LAST]], %{{.*}} {llmc.offsets = array<i64: {{[0-9]+}}>} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK-NOT: llmc.softmax
// CHECK-NOT: llmc.repeat_kv

// CHECK-LABEL: func.func @decode
// CHECK-NOT: query_start
// CHECK-SAME: llmc.kernels = [{{.*}}"kv_write(b7, b5)", "b8 = decode_attention(b6)",
// CHECK: llmc.kv_write
// CHECK-NOT: llmc.kv_read
// CHECK: llmc.paged_attention %{{.*}} {layer = 0 : i64, llmc.offsets = array<i64: {{[0-9]+}}>, scale = 5.000000e-01 : f64}
// CHECK-NOT: llmc.take_last
// CHECK-NOT: llmc.attention

// CHECK-LABEL: func.func @verify
// CHECK-SAME: {llmc.name = "query_start"}
// CHECK-SAME: llmc.kernels = [{{.*}}"b8 = prefill_attention(b6)",
// CHECK: llmc.kv_write
// CHECK: llmc.kv_read
// CHECK: llmc.attention
// CHECK-NOT: llmc.take_last

// By default the LM head takes the weight type too, and the embedding int8
// (bf16 in bf16 plans).
// INT8: llmc.weights = ["embed : i8", "embed : f32", "l0.attn_norm : f32", "l0.q+l0.k+l0.v : i8", "l0.q+l0.k+l0.v : f32", "rope.inv_freq(theta=1.000000e+04,dim=4) : f32", "l0.o : i8", "l0.o : f32", "l0.ffn_norm : f32", "l0.gate+l0.up : i8", "l0.gate+l0.up : f32", "l0.down : i8", "l0.down : f32", "norm : f32", "head : i8", "head : f32"]
// INT8-LABEL: func.func @prefill
// INT8: llmc.quantized_linear {{.*}} {bits = 8 : i64, group_size = 8 : i64{{.*}}} : (tensor<?x8xf32>, tensor<16x8xi8>, tensor<16x1xf32>) -> tensor<?x16xf32>
// INT8: llmc.take_last
// INT8: llmc.quantized_linear {{.*}} : (tensor<?x8xf32>, tensor<16x8xi8>, tensor<16x1xf32>) -> tensor<?x16xf32>
// F32HEAD: "head : f32"]
// F32HEAD: llmc.take_last
// F32HEAD-NEXT: llmc.linear {{.*}} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
// bf16 with int8: every linear in int8 (the KV cache bf16, see compile.test).
// MIXED: "head : i8", "head : f32"]
// MIXED: llmc.take_last
// MIXED: llmc.quantized_linear {{.*}} {bits = 8 : i64{{.*}}} : (tensor<?x8xf32>, tensor<16x8xi8>, tensor<16x1xf32>)

// BF16: llmc.weights = ["embed : bf16", "l0.attn_norm : f32", "l0.q+l0.k+l0.v : bf16", "rope.inv_freq(theta=1.000000e+04,dim=4) : f32", "l0.o : bf16", "l0.ffn_norm : f32", "l0.gate+l0.up : bf16", "l0.down : bf16", "norm : f32", "head : bf16"]

// NOFUSE-LABEL: func.func @prefill
// NOFUSE-SAME: llmc.kernels = ["b0 = embedding(w0, tokens)", "b1 = rms_norm(b0, w1)", "b2 = linear(b1, w2, -, -)", "b3 = linear(b1, w3, -, -)", "b4 = linear(b1, w4, -, -)",
// NOFUSE-SAME: "b9 = add(b0, b8)", "b10 = rms_norm(b9, w7)", "b11 = linear(b10, w8, -, -)", "b12 = linear(b10, w9, -, -)", "b13 = silu(b11)", "b14 = mul(b13, b12)"
// NOFUSE-NOT: llmc.workspace
// NOFUSE-NOT: llmc.offsets
// NOFUSE-NOT: llmc.swiglu
// NOFUSE-NOT: llmc.add_rms_norm
// NOFUSE: llmc.attention
// NOFUSE-NOT: llmc.offsets
// NOFUSE-NOT: llmc.swiglu
// NOFUSE-NOT: llmc.add_rms_norm
// NOFUSE: llmc.take_last
func.func @forward(%tokens: tensor<?xi32> {llmc.name = "tokens"}, %pos: tensor<?xi32> {llmc.name = "positions"}) -> tensor<?x16xf32> {
  %emb = llmc.param "embed" : tensor<16x8xf32>
  %h = llmc.embedding %emb, %tokens : (tensor<16x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %n1w = llmc.param "l0.attn_norm" : tensor<8xf32>
  %n1 = llmc.rms_norm %h, %n1w {eps = 1.0e-05 : f64} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %wq = llmc.param "l0.q" : tensor<8x8xf32>
  %q0 = llmc.linear %n1, %wq : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %wk = llmc.param "l0.k" : tensor<4x8xf32>
  %k0 = llmc.linear %n1, %wk : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %wv = llmc.param "l0.v" : tensor<4x8xf32>
  %v0 = llmc.linear %n1, %wv : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %q1 = llmc.reshape %q0 : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
  %q = llmc.rope %q1, %pos {rotary_dim = 4 : i64, style = "half", theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi32>) -> tensor<?x2x4xf32>
  %k1 = llmc.reshape %k0 : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %k = llmc.rope %k1, %pos {rotary_dim = 4 : i64, style = "half", theta = 1.0e+04 : f64} : (tensor<?x1x4xf32>, tensor<?xi32>) -> tensor<?x1x4xf32>
  %v = llmc.reshape %v0 : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %kr = llmc.repeat_kv %k {repeats = 2 : i64} : (tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
  %vr = llmc.repeat_kv %v {repeats = 2 : i64} : (tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
  %qt = llmc.transpose %q {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %kt = llmc.transpose %kr {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %vt = llmc.transpose %vr {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %s = llmc.matmul %qt, %kt {transpose_b} : (tensor<2x?x4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x?xf32>
  %ss = llmc.scale %s {factor = 5.0e-01 : f64} : tensor<2x?x?xf32>
  %m = llmc.causal_mask %ss : tensor<2x?x?xf32>
  %p = llmc.softmax %m : tensor<2x?x?xf32>
  %o = llmc.matmul %p, %vt : (tensor<2x?x?xf32>, tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %ot = llmc.transpose %o {permutation = array<i64: 1, 0, 2>} : (tensor<2x?x4xf32>) -> tensor<?x2x4xf32>
  %of = llmc.reshape %ot : (tensor<?x2x4xf32>) -> tensor<?x8xf32>
  %wo = llmc.param "l0.o" : tensor<8x8xf32>
  %a = llmc.linear %of, %wo : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %h1 = llmc.add %h, %a : tensor<?x8xf32>
  %n2w = llmc.param "l0.ffn_norm" : tensor<8xf32>
  %n2 = llmc.rms_norm %h1, %n2w {eps = 1.0e-05 : f64} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %wg = llmc.param "l0.gate" : tensor<16x8xf32>
  %g = llmc.linear %n2, %wg : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %wu = llmc.param "l0.up" : tensor<16x8xf32>
  %u = llmc.linear %n2, %wu : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %gs = llmc.silu %g : tensor<?x16xf32>
  %gu = llmc.mul %gs, %u : tensor<?x16xf32>
  %wd = llmc.param "l0.down" : tensor<8x16xf32>
  %d = llmc.linear %gu, %wd : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
  %h2 = llmc.add %h1, %d : tensor<?x8xf32>
  %nfw = llmc.param "norm" : tensor<8xf32>
  %nf = llmc.rms_norm %h2, %nfw {eps = 1.0e-05 : f64} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %wh = llmc.param "head" : tensor<16x8xf32>
  %logits = llmc.linear %nf, %wh : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %logits : tensor<?x16xf32>
}

// -----

// Tests that a model without causal attention (nothing to cache) cannot be
// compiled: phase specialization needs the KV cache.

// CHECK-NOT: func.func @prefill
// expected-error@+1 {{llmc-specialize-phases: @forward has no KV cache; run llmc-insert-kv-cache first}}
func.func @forward(%tokens: tensor<?xi32> {llmc.name = "tokens"}) -> tensor<?x16xf32> {
  %emb = llmc.param "embed" : tensor<16x8xf32>
  %h = llmc.embedding %emb, %tokens : (tensor<16x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %wh = llmc.param "head" : tensor<16x8xf32>
  %logits = llmc.linear %h, %wh : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %logits : tensor<?x16xf32>
}
