// RUN: llmc-opt %s -split-input-file --llmc-quantize="mode=int4 group=32" | FileCheck %s --check-prefixes=CHECK,INT4
// RUN: llmc-opt %s -split-input-file --llmc-quantize="mode=int4 group=32" 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN
// WARN: warning: llmc-quantize: 'w2' has 16 input columns, not a multiple of the int4 group 32; quantized to int8 per row instead
// RUN: llmc-opt %s -split-input-file --llmc-quantize="mode=int8" | FileCheck %s --check-prefixes=CHECK,INT8
// RUN: llmc-opt %s -split-input-file --llmc-quantize="mode=bf16" | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: llmc-opt %s -split-input-file --llmc-quantize="mode=int8 quantize-head=true" | FileCheck %s --check-prefixes=CHECK,HEAD
// RUN: llmc-opt %s -split-input-file --llmc-quantize="mode=int4 group=32 quantize-head=true quantize-embedding=true" | FileCheck %s --check-prefix=EMB
// RUN: llmc-opt %s -split-input-file --llmc-quantize="mode=bf16 quantize-embedding=true" | FileCheck %s --check-prefix=EMBF
// EMBF-LABEL: func.func @embedding_and_head
// EMBF: %[[E:.*]] = llmc.param "embed" : tensor<16x64xbf16>
// EMBF: llmc.embedding %[[E]], %{{.*}} : (tensor<16x64xbf16>, tensor<?xi32>) -> tensor<?x64xf32>
// RUN: not llmc-opt %s -split-input-file --llmc-quantize="mode=int4 group=64" 2>&1 | FileCheck %s --check-prefix=ERR

// RUN: not llmc-opt %s -split-input-file --llmc-quantize="mode=int3" 2>&1 | FileCheck %s --check-prefix=ERR-MODE

// Tests that an int4 group other than 32 or 128, and an unknown mode, are
// rejected with the offending value spelled out.
// ERR: error: llmc-quantize: int4 group must be 32 or 128, got 64{{$}}
// ERR-MODE: error: llmc-quantize: mode must be f32, bf16, f16, int8, int4 or ggml, got 'int3'

// Tests that linear weights are converted: int4 packs two nibbles per byte
// with one scale per 32 inputs, int8 keeps one byte per weight with one scale
// per output row, bf16 only changes the element type; biases stay f32. With
// int4, a linear whose input width (16) does not split into groups of 32
// falls back to int8 per row, with a warning that names the weight.

// CHECK-LABEL: func.func @linears
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x64xf32>)

// INT4: %[[W1:.*]] = llmc.param "w1" {group_size = 32 : i64, quant = "int4", quant_part = "weight"} : tensor<16x32xi8>
// INT4: %[[S1:.*]] = llmc.param "w1" {group_size = 32 : i64, quant = "int4", quant_part = "scales"} : tensor<16x2xf32>
// INT4: %[[Y:.*]] = llmc.quantized_linear %[[X]], %[[W1]], %[[S1]] {bits = 4 : i64, group_size = 32 : i64}
// INT4-SAME: (tensor<?x64xf32>, tensor<16x32xi8>, tensor<16x2xf32>) -> tensor<?x16xf32>
// INT4: %[[W2:.*]] = llmc.param "w2" {group_size = 16 : i64, quant = "int8", quant_part = "weight"} : tensor<8x16xi8>
// INT4: %[[S2:.*]] = llmc.param "w2" {group_size = 16 : i64, quant = "int8", quant_part = "scales"} : tensor<8x1xf32>
// INT4: llmc.quantized_linear %{{.*}}, %[[W2]], %[[S2]], %{{.*}} {bits = 8 : i64, group_size = 16 : i64}

// INT8: %[[W1:.*]] = llmc.param "w1" {group_size = 64 : i64, quant = "int8", quant_part = "weight"} : tensor<16x64xi8>
// INT8: %[[S1:.*]] = llmc.param "w1" {group_size = 64 : i64, quant = "int8", quant_part = "scales"} : tensor<16x1xf32>
// INT8: llmc.quantized_linear %[[X]], %[[W1]], %[[S1]] {bits = 8 : i64, group_size = 64 : i64}
// INT8: %[[B2:.*]] = llmc.param "b2" : tensor<8xf32>
// INT8: %[[W2:.*]] = llmc.param "w2" {group_size = 16 : i64, quant = "int8", quant_part = "weight"} : tensor<8x16xi8>
// INT8: %[[S2:.*]] = llmc.param "w2" {group_size = 16 : i64, quant = "int8", quant_part = "scales"} : tensor<8x1xf32>
// INT8: llmc.quantized_linear %{{.*}}, %[[W2]], %[[S2]], %[[B2]] {bits = 8 : i64, group_size = 16 : i64}
// INT8-SAME: (tensor<?x16xf32>, tensor<8x16xi8>, tensor<8x1xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// INT8-NOT: llmc.linear

// BF16: %[[W1:.*]] = llmc.param "w1" : tensor<16x64xbf16>
// BF16: llmc.linear %[[X]], %[[W1]] : (tensor<?x64xf32>, tensor<16x64xbf16>) -> tensor<?x16xf32>
// BF16: llmc.param "b2" : tensor<8xf32>
// BF16: %[[W2:.*]] = llmc.param "w2" : tensor<8x16xbf16>
// BF16: llmc.linear %{{.*}}, %[[W2]], %{{.*}} : (tensor<?x16xf32>, tensor<8x16xbf16>, tensor<8xf32>) -> tensor<?x8xf32>
// BF16-NOT: llmc.quantized_linear
func.func @linears(%x: tensor<?x64xf32>) -> tensor<?x8xf32> {
  %w1 = llmc.param "w1" : tensor<16x64xf32>
  %y = llmc.linear %x, %w1 : (tensor<?x64xf32>, tensor<16x64xf32>) -> tensor<?x16xf32>
  %a = llmc.silu %y : tensor<?x16xf32>
  %b2 = llmc.param "b2" : tensor<8xf32>
  %w2 = llmc.param "w2" : tensor<8x16xf32>
  %z = llmc.linear %a, %w2, %b2 : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %o = llmc.silu %z : tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// Tests that the embedding table and the LM head (the linear producing the
// returned logits) stay f32 unless asked; quantize-head=true converts the
// head only.

// CHECK-LABEL: func.func @embedding_and_head
// CHECK: %[[E:.*]] = llmc.param "embed" : tensor<16x64xf32>
// CHECK: llmc.embedding %[[E]], %{{.*}} : (tensor<16x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
// INT4: llmc.quantized_linear
// INT4: %[[H:.*]] = llmc.param "head" : tensor<16x64xf32>
// INT4: llmc.linear %{{.*}}, %[[H]] : (tensor<?x64xf32>, tensor<16x64xf32>) -> tensor<?x16xf32>
// INT8: llmc.quantized_linear
// INT8: %[[H:.*]] = llmc.param "head" : tensor<16x64xf32>
// INT8: llmc.linear %{{.*}}, %[[H]] : (tensor<?x64xf32>, tensor<16x64xf32>) -> tensor<?x16xf32>
// BF16: llmc.param "mid" : tensor<64x64xbf16>
// BF16: %[[H:.*]] = llmc.param "head" : tensor<16x64xf32>
// BF16: llmc.linear %{{.*}}, %[[H]] : (tensor<?x64xf32>, tensor<16x64xf32>) -> tensor<?x16xf32>
// HEAD: llmc.quantized_linear
// HEAD: llmc.param "head" {group_size = 64 : i64, quant = "int8", quant_part = "weight"} : tensor<16x64xi8>
// HEAD: llmc.quantized_linear {{.*}} -> tensor<?x16xf32>
// HEAD-NOT: llmc.linear
// With quantize-embedding an int8/int4 plan's table is int8 with a scale
// per row, looked up by llmc.quantized_embedding (bf16 in bf16 mode).
// EMB-LABEL: func.func @embedding_and_head
// EMB: %[[E:.*]] = llmc.param "embed" {group_size = 64 : i64, quant = "int8", quant_part = "weight"} : tensor<16x64xi8>
// EMB: %[[S:.*]] = llmc.param "embed" {group_size = 64 : i64, quant = "int8", quant_part = "scales"} : tensor<16x1xf32>
// EMB: llmc.quantized_embedding %[[E]], %[[S]], %{{.*}} {group_size = 64 : i64} : (tensor<16x64xi8>, tensor<16x1xf32>, tensor<?xi32>) -> tensor<?x64xf32>
// EMB-NOT: llmc.embedding
func.func @embedding_and_head(%ids: tensor<?xi32>) -> tensor<?x16xf32> {
  %e = llmc.param "embed" : tensor<16x64xf32>
  %h = llmc.embedding %e, %ids : (tensor<16x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %wm = llmc.param "mid" : tensor<64x64xf32>
  %m = llmc.linear %h, %wm : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %wh = llmc.param "head" : tensor<16x64xf32>
  %logits = llmc.linear %m, %wh : (tensor<?x64xf32>, tensor<16x64xf32>) -> tensor<?x16xf32>
  return %logits : tensor<?x16xf32>
}

// -----

// Tests that a head tied to the embedding table stays f32 by default, and
// with quantize-head=true gets a converted copy of the table: the embedding
// keeps reading the f32 one.

// CHECK-LABEL: func.func @tied_head
// CHECK: %[[E:.*]] = llmc.param "embed" : tensor<16x64xf32>
// CHECK: llmc.embedding %[[E]], %{{.*}}
// INT4: llmc.linear %{{.*}}, %[[E]] : (tensor<?x64xf32>, tensor<16x64xf32>) -> tensor<?x16xf32>
// INT8: llmc.linear %{{.*}}, %[[E]] : (tensor<?x64xf32>, tensor<16x64xf32>) -> tensor<?x16xf32>
// BF16: llmc.linear %{{.*}}, %[[E]] : (tensor<?x64xf32>, tensor<16x64xf32>) -> tensor<?x16xf32>
// HEAD: llmc.param "embed" {group_size = 64 : i64, quant = "int8", quant_part = "weight"} : tensor<16x64xi8>
// HEAD: llmc.quantized_linear {{.*}} -> tensor<?x16xf32>
// HEAD-NOT: llmc.linear
// EMB-LABEL: func.func @tied_head
// EMB: llmc.quantized_embedding
// EMB: llmc.param "embed" {group_size = 32 : i64, quant = "int4", quant_part = "weight"} : tensor<16x32xi8>
// EMB: llmc.quantized_linear {{.*}} -> tensor<?x16xf32>
func.func @tied_head(%ids: tensor<?xi32>) -> tensor<?x16xf32> {
  %e = llmc.param "embed" : tensor<16x64xf32>
  %h = llmc.embedding %e, %ids : (tensor<16x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  %logits = llmc.linear %h, %e : (tensor<?x64xf32>, tensor<16x64xf32>) -> tensor<?x16xf32>
  return %logits : tensor<?x16xf32>
}

// -----

// Tests that a weight shared by two linears is converted for both, and that
// weights already converted are left alone.

// CHECK-LABEL: func.func @shared_and_converted
// INT4-COUNT-2: llmc.quantized_linear %{{.*}} {bits = 4 : i64, group_size = 32 : i64}
// INT8-COUNT-2: llmc.quantized_linear %{{.*}} {bits = 8 : i64, group_size = 64 : i64}
// BF16-COUNT-2: llmc.linear %{{.*}}, %{{.*}} : (tensor<?x64xf32>, tensor<64x64xbf16>) -> tensor<?x64xf32>
// CHECK: llmc.param "pre" : tensor<64x64xf16>
// CHECK: llmc.linear %{{.*}}, %{{.*}} : (tensor<?x64xf32>, tensor<64x64xf16>) -> tensor<?x64xf32>
// CHECK-NOT: llmc.param "shared" : tensor<64x64xf32>
func.func @shared_and_converted(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %w = llmc.param "shared" : tensor<64x64xf32>
  %a = llmc.linear %x, %w : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %b = llmc.linear %a, %w : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %p = llmc.param "pre" : tensor<64x64xf16>
  %c = llmc.linear %b, %p : (tensor<?x64xf32>, tensor<64x64xf16>) -> tensor<?x64xf32>
  %o = llmc.silu %c : tensor<?x64xf32>
  return %o : tensor<?x64xf32>
}

// -----

// Tests that stacked experts are quantized per expert like a linear's
// weight (int4 groups of 32 over K = 64; int8 one scale per row) into
// llmc.quantized_expert_linear, converted to bf16 in mode bf16, and that
// the router stays f32 in every mode (llama.cpp keeps ffn_gate_inp F32).

// CHECK-LABEL: func.func @experts
// CHECK: %[[R:.*]] = llmc.param "router" : tensor<4x64xf32>
// CHECK: llmc.linear %{{.*}}, %[[R]] : (tensor<?x64xf32>, tensor<4x64xf32>) -> tensor<?x4xf32>
// INT4: %[[Q:.*]] = llmc.param "experts.{e}.up" {group_size = 32 : i64, quant = "int4", quant_part = "weight"} : tensor<4x16x32xi8>
// INT4: %[[S:.*]] = llmc.param "experts.{e}.up" {group_size = 32 : i64, quant = "int4", quant_part = "scales"} : tensor<4x16x2xf32>
// INT4: llmc.quantized_expert_linear %{{.*}}, %[[Q]], %[[S]], %{{.*}} {bits = 4 : i64, group_size = 32 : i64} : (tensor<?x64xf32>, tensor<4x16x32xi8>, tensor<4x16x2xf32>, tensor<?x2xi32>) -> tensor<?x2x16xf32>
// INT8: %[[Q:.*]] = llmc.param "experts.{e}.up" {group_size = 64 : i64, quant = "int8", quant_part = "weight"} : tensor<4x16x64xi8>
// INT8: %[[S:.*]] = llmc.param "experts.{e}.up" {group_size = 64 : i64, quant = "int8", quant_part = "scales"} : tensor<4x16x1xf32>
// INT8: llmc.quantized_expert_linear %{{.*}}, %[[Q]], %[[S]], %{{.*}} {bits = 8 : i64, group_size = 64 : i64}
// BF16: %[[W:.*]] = llmc.param "experts.{e}.up" : tensor<4x16x64xbf16>
// BF16: llmc.expert_linear %{{.*}}, %[[W]], %{{.*}} : (tensor<?x64xf32>, tensor<4x16x64xbf16>, tensor<?x2xi32>) -> tensor<?x2x16xf32>
// CHECK-NOT: llmc.param "router" {{.*}}bf16
func.func @experts(%x: tensor<?x64xf32>) -> tensor<?x2x16xf32> {
  %r = llmc.param "router" : tensor<4x64xf32>
  %l = llmc.linear %x, %r : (tensor<?x64xf32>, tensor<4x64xf32>) -> tensor<?x4xf32>
  %w, %e = llmc.topk_gating %l {k = 2 : i64, normalize} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
  %u = llmc.param "experts.{e}.up" : tensor<4x16x64xf32>
  %h = llmc.expert_linear %x, %u, %e : (tensor<?x64xf32>, tensor<4x16x64xf32>, tensor<?x2xi32>) -> tensor<?x2x16xf32>
  %s = llmc.silu %h : tensor<?x2x16xf32>
  return %s : tensor<?x2x16xf32>
}
