// RUN: llmc-opt %s --llmc-quantize="mode=ggml otherwise=bf16 quantize-head=true quantize-embedding=true" | FileCheck %s
// RUN: llmc-opt %s --llmc-quantize="mode=int8" | FileCheck %s --check-prefix=INT8
// RUN: llmc-opt %s --llmc-fuse | FileCheck %s --check-prefix=FUSE
// RUN: not llmc-opt %s --llmc-quantize="mode=ggml otherwise=ggml" 2>&1 | FileCheck %s --check-prefix=ERR

// Tests that mode=ggml keeps what a GGUF stores: Q4_0 as int4 and the other
// block formats as int8, both in groups of 32 (the blocks' own scales); F16
// stays f16; a weight without ggml_type (F32 in the file) takes `otherwise`.
// The embedding table keeps groups of 32 too.

// CHECK-LABEL: func.func @gguf
// CHECK: llmc.param "q" {ggml_type = "Q4_0", group_size = 32 : i64, quant = "int4", quant_part = "weight"} : tensor<64x32xi8>
// CHECK: llmc.quantized_linear {{.*}} {bits = 4 : i64, group_size = 32 : i64}
// CHECK: llmc.param "k" {ggml_type = "Q6_K", group_size = 32 : i64, quant = "int8", quant_part = "weight"} : tensor<64x64xi8>
// CHECK: llmc.quantized_linear {{.*}} {bits = 8 : i64, group_size = 32 : i64}
// CHECK: llmc.param "v" {ggml_type = "F16"} : tensor<64x64xf16>
// CHECK: llmc.param "o" : tensor<64x64xbf16>
// CHECK: llmc.quantized_embedding {{.*}} {group_size = 32 : i64}

// INT8-LABEL: func.func @gguf
// INT8: llmc.quantized_linear {{.*}} {bits = 8 : i64, group_size = 32 : i64}
// INT8: llmc.quantized_linear {{.*}} {bits = 8 : i64, group_size = 32 : i64}
// INT8: llmc.quantized_linear {{.*}} {bits = 8 : i64, group_size = 32 : i64}
// INT8: llmc.quantized_linear {{.*}} {bits = 8 : i64, group_size = 64 : i64}

// ERR: error: llmc-quantize: otherwise must be f32, bf16, f16, int8 or int4, got 'ggml'
func.func @gguf(%x: tensor<?x64xf32>, %ids: tensor<?xi32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  %q = llmc.param "q" {ggml_type = "Q4_0"} : tensor<64x64xf32>
  %a = llmc.linear %x, %q : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %k = llmc.param "k" {ggml_type = "Q6_K"} : tensor<64x64xf32>
  %b = llmc.linear %x, %k : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %v = llmc.param "v" {ggml_type = "F16"} : tensor<64x64xf32>
  %c = llmc.linear %x, %v : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %o = llmc.param "o" : tensor<64x64xf32>
  %d = llmc.linear %x, %o : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %e = llmc.param "embed" {ggml_type = "Q8_0"} : tensor<16x64xf32>
  %h = llmc.embedding %e, %ids : (tensor<16x64xf32>, tensor<?xi32>) -> tensor<?x64xf32>
  return %a, %b, %c, %d, %h : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// Tests that llmc-fuse packs block formats that differ (llama.cpp's Q4_0
// files keep some tensors in Q6_K) under the one kept with more bits (int8
// holds a Q4_0 block exactly too), and does not pack a block format with F16.

// FUSE-LABEL: func.func @mixed
// FUSE: llmc.param "g+u" {ggml_type = "Q6_K", sources = ["g", "u"]} : tensor<128x64xf32>
// FUSE: llmc.param "g2" {ggml_type = "Q4_K"}
// FUSE: llmc.param "u2" {ggml_type = "F16"}
func.func @mixed(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>) {
  %g = llmc.param "g" {ggml_type = "Q4_0"} : tensor<64x64xf32>
  %u = llmc.param "u" {ggml_type = "Q6_K"} : tensor<64x64xf32>
  %a = llmc.linear %x, %g : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %s = llmc.silu %a : tensor<?x64xf32>
  %b = llmc.linear %x, %u : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %m = llmc.mul %s, %b : tensor<?x64xf32>
  %g2 = llmc.param "g2" {ggml_type = "Q4_K"} : tensor<64x64xf32>
  %u2 = llmc.param "u2" {ggml_type = "F16"} : tensor<64x64xf32>
  %a2 = llmc.linear %x, %g2 : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %s2 = llmc.silu %a2 : tensor<?x64xf32>
  %b2 = llmc.linear %x, %u2 : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %m2 = llmc.mul %s2, %b2 : tensor<?x64xf32>
  return %m, %m2 : tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// Tests that mode=ggml keeps Q4_K, Q5_K and Q6_K over whole super-blocks as
// they are: codes [N, K/256 * 128 | 160 | 192] and headers [N, K/256 * 16 |
// 16 | 18] as i8, int8 activations allowed; an embedding table in a K-quant
// becomes a K-quant lookup over the same params a tied head reads. int8
// mode still converts them (in groups of 32; w4 is the head, kept f32 there,
// and w6 is tied to the table). llmc-fuse packs a K-quant only with its own
// type.

// CHECK-LABEL: func.func @kquants
// CHECK: llmc.param "w4" {ggml_type = "Q4_K", group_size = 256 : i64, quant = "q4_k", quant_part = "weight"} : tensor<8x256xi8>
// CHECK: llmc.param "w4" {ggml_type = "Q4_K", group_size = 256 : i64, quant = "q4_k", quant_part = "scales"} : tensor<8x32xi8>
// CHECK: llmc.quantized_linear {{.*}} {bits = 4 : i64, format = "q4_k", group_size = 256 : i64, int8_activations}
// CHECK: llmc.param "w5" {{.*}} quant = "q5_k", quant_part = "weight"} : tensor<8x320xi8>
// CHECK: llmc.quantized_linear {{.*}} {bits = 5 : i64, format = "q5_k", group_size = 256 : i64, int8_activations}
// CHECK: llmc.param "w6" {{.*}} quant = "q6_k", quant_part = "weight"} : tensor<8x384xi8>
// CHECK: llmc.param "w6" {{.*}} quant = "q6_k", quant_part = "scales"} : tensor<8x36xi8>
// CHECK: llmc.quantized_linear {{.*}} {bits = 6 : i64, format = "q6_k", group_size = 256 : i64, int8_activations}
// CHECK: llmc.quantized_embedding {{.*}} {format = "q6_k", group_size = 256 : i64} : (tensor<8x384xi8>, tensor<8x36xi8>, tensor<?xi32>)

// INT8-LABEL: func.func @kquants
// INT8: llmc.param "w5" {ggml_type = "Q5_K", group_size = 32 : i64, quant = "int8", quant_part = "weight"} : tensor<8x512xi8>
// INT8: llmc.quantized_linear {{.*}} {bits = 8 : i64, group_size = 32 : i64}

// FUSE-LABEL: func.func @kquants
// FUSE: llmc.param "w4" {ggml_type = "Q4_K"}
// FUSE: llmc.param "w5" {ggml_type = "Q5_K"}
func.func @kquants(%x: tensor<?x512xf32>, %ids: tensor<?xi32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x512xf32>) {
  %w4 = llmc.param "w4" {ggml_type = "Q4_K"} : tensor<8x512xf32>
  %a = llmc.linear %x, %w4 : (tensor<?x512xf32>, tensor<8x512xf32>) -> tensor<?x8xf32>
  %w5 = llmc.param "w5" {ggml_type = "Q5_K"} : tensor<8x512xf32>
  %b = llmc.linear %x, %w5 : (tensor<?x512xf32>, tensor<8x512xf32>) -> tensor<?x8xf32>
  %w6 = llmc.param "w6" {ggml_type = "Q6_K"} : tensor<8x512xf32>
  %c = llmc.linear %x, %w6 : (tensor<?x512xf32>, tensor<8x512xf32>) -> tensor<?x8xf32>
  %h = llmc.embedding %w6, %ids : (tensor<8x512xf32>, tensor<?xi32>) -> tensor<?x512xf32>
  return %a, %b, %c, %h : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x512xf32>
}
