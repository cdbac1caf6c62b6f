// RUN: llmc-opt %s -split-input-file -verify-diagnostics --llmc-serialize | FileCheck %s
// RUN: not llmc-opt %s -split-input-file --llmc-serialize 2>&1 | FileCheck %s --check-prefix=ERR

// Tests that each phase is lowered to kernel calls over numbered buffers,
// recorded as `llmc.kernels` (weights wN, step inputs by name, "-" for an
// absent operand; reshapes and kv_read are views and emit nothing), and that
// the module lists the weights the plan stores, with their dtypes, each
// once: "head" follows take_last in @prefill, so it sits at another position
// than in @decode and @verify, and is still shared.

!cache = !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32>

// CHECK-LABEL: module attributes
// CHECK-SAME: llmc.weights = ["embed : f32", "qkv : f32", "rope.inv_freq(theta=1.000000e+04,dim=4) : f32", "o : i8", "o : f32", "head : f32"]

// CHECK-LABEL: func.func @prefill
// CHECK-SAME: llmc.kernels = ["b0 = embedding(w0, tokens)",
// CHECK-SAME: "b1 = linear(b0, w1, -, -)", "b2 = slice(b1)", "b3 = slice(b1)", "b4 = slice(b1)",
// CHECK-SAME: "b5 = rope(b2, positions, w2)", "kv_write(b3, b4)", "b6 = prefill_attention(b5)",
// CHECK-SAME: "b7 = linear(b6, w3, w4, -)", "b8 = take_rows(b7)", "b9 = linear(b8, w5, -, -)"]

// CHECK-LABEL: func.func @decode
// CHECK-SAME: llmc.kernels = ["b0 = embedding(w0, tokens)",
// CHECK-SAME: "b1 = linear(b0, w1, -, -)", "b2 = slice(b1)", "b3 = slice(b1)", "b4 = slice(b1)",
// CHECK-SAME: "b5 = rope(b2, positions, w2)", "kv_write(b3, b4)", "b6 = decode_attention(b5)",
// CHECK-SAME: "b7 = linear(b6, w3, w4, -)", "b8 = linear(b7, w5, -, -)"]

// CHECK-LABEL: func.func @verify
// CHECK-SAME: llmc.kernels = [
// CHECK-SAME: "b6 = prefill_attention(b5)", "b7 = linear(b6, w3, w4, -)", "b8 = linear(b7, w5, -, -)"]
module {
func.func @prefill(%tokens: tensor<?xi32> {llmc.name = "tokens"}, %pos: tensor<?xi32> {llmc.name = "positions"},
                   %cache: !cache {llmc.name = "kv_cache"}, %slots: tensor<?xi32> {llmc.name = "slot_mapping"},
                   %tables: tensor<?x?xi32> {llmc.name = "block_tables"}, %lens: tensor<?xi32> {llmc.name = "context_lens"},
                   %qs: tensor<?xi32> {llmc.name = "query_start"}, %rows: tensor<?xi32> {llmc.name = "logits_rows"})
    -> (tensor<?x16xf32>, !cache) {
  %emb = llmc.param "embed" : tensor<16x8xf32>
  %h = llmc.embedding %emb, %tokens : (tensor<16x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %wqkv = llmc.param "qkv" : tensor<16x8xf32>
  %qkv = llmc.linear %h, %wqkv : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %q0 = llmc.slice %qkv {start = 0 : i64, size = 8 : i64} : (tensor<?x16xf32>) -> tensor<?x8xf32>
  %k0 = llmc.slice %qkv {start = 8 : i64, size = 4 : i64} : (tensor<?x16xf32>) -> tensor<?x4xf32>
  %v0 = llmc.slice %qkv {start = 12 : i64, size = 4 : i64} : (tensor<?x16xf32>) -> tensor<?x4xf32>
  %q1 = llmc.reshape %q0 : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
  %q = llmc.rope %q1, %pos {rotary_dim = 4 : i64, style = "half", theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi32>) -> tensor<?x2x4xf32>
  %k = llmc.reshape %k0 : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %v = llmc.reshape %v0 : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %c1 = llmc.kv_write %cache, %k, %v, %slots {layer = 0 : i64} : (!cache, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>) -> !cache
  %hk, %hv = llmc.kv_read %c1, %tables, %lens {layer = 0 : i64} : (!cache, tensor<?x?xi32>, tensor<?xi32>) -> (tensor<?x1x4xf32>, tensor<?x1x4xf32>)
  %o = llmc.attention %q, %hk, %hv, %qs, %lens {causal, scale = 5.0e-01 : f64} : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x2x4xf32>
  %of = llmc.reshape %o : (tensor<?x2x4xf32>) -> tensor<?x8xf32>
  %wo = llmc.param "o" {quant = "int8", quant_part = "weight", group_size = 8 : i64} : tensor<8x8xi8>
  %so = llmc.param "o" {quant = "int8", quant_part = "scales", group_size = 8 : i64} : tensor<8x1xf32>
  %a = llmc.quantized_linear %of, %wo, %so {bits = 8 : i64, group_size = 8 : i64} : (tensor<?x8xf32>, tensor<8x8xi8>, tensor<8x1xf32>) -> tensor<?x8xf32>
  %last = llmc.take_last %a, %rows : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %wh = llmc.param "head" : tensor<16x8xf32>
  %logits = llmc.linear %last, %wh : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %logits, %c1 : tensor<?x16xf32>, !cache
}

func.func @decode(%tokens: tensor<?xi32> {llmc.name = "tokens"}, %pos: tensor<?xi32> {llmc.name = "positions"},
                  %cache: !cache {llmc.name = "kv_cache"}, %slots: tensor<?xi32> {llmc.name = "slot_mapping"},
                  %tables: tensor<?x?xi32> {llmc.name = "block_tables"}, %lens: tensor<?xi32> {llmc.name = "context_lens"})
    -> (tensor<?x16xf32>, !cache) {
  %emb = llmc.param "embed" : tensor<16x8xf32>
  %h = llmc.embedding %emb, %tokens : (tensor<16x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %wqkv = llmc.param "qkv" : tensor<16x8xf32>
  %qkv = llmc.linear %h, %wqkv : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %q0 = llmc.slice %qkv {start = 0 : i64, size = 8 : i64} : (tensor<?x16xf32>) -> tensor<?x8xf32>
  %k0 = llmc.slice %qkv {start = 8 : i64, size = 4 : i64} : (tensor<?x16xf32>) -> tensor<?x4xf32>
  %v0 = llmc.slice %qkv {start = 12 : i64, size = 4 : i64} : (tensor<?x16xf32>) -> tensor<?x4xf32>
  %q1 = llmc.reshape %q0 : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
  %q = llmc.rope %q1, %pos {rotary_dim = 4 : i64, style = "half", theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi32>) -> tensor<?x2x4xf32>
  %k = llmc.reshape %k0 : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %v = llmc.reshape %v0 : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %c1 = llmc.kv_write %cache, %k, %v, %slots {layer = 0 : i64} : (!cache, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>) -> !cache
  %o = llmc.paged_attention %q, %c1, %tables, %lens {layer = 0 : i64, scale = 5.0e-01 : f64} : (tensor<?x2x4xf32>, !cache, tensor<?x?xi32>, tensor<?xi32>) -> tensor<?x2x4xf32>
  %of = llmc.reshape %o : (tensor<?x2x4xf32>) -> tensor<?x8xf32>
  %wo = llmc.param "o" {quant = "int8", quant_part = "weight", group_size = 8 : i64} : tensor<8x8xi8>
  %so = llmc.param "o" {quant = "int8", quant_part = "scales", group_size = 8 : i64} : tensor<8x1xf32>
  %a = llmc.quantized_linear %of, %wo, %so {bits = 8 : i64, group_size = 8 : i64} : (tensor<?x8xf32>, tensor<8x8xi8>, tensor<8x1xf32>) -> tensor<?x8xf32>
  %wh = llmc.param "head" : tensor<16x8xf32>
  %logits = llmc.linear %a, %wh : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %logits, %c1 : tensor<?x16xf32>, !cache
}

func.func @verify(%tokens: tensor<?xi32> {llmc.name = "tokens"}, %pos: tensor<?xi32> {llmc.name = "positions"},
                  %cache: !cache {llmc.name = "kv_cache"}, %slots: tensor<?xi32> {llmc.name = "slot_mapping"},
                  %tables: tensor<?x?xi32> {llmc.name = "block_tables"}, %lens: tensor<?xi32> {llmc.name = "context_lens"},
                  %qs: tensor<?xi32> {llmc.name = "query_start"})
    -> (tensor<?x16xf32>, !cache) {
  %emb = llmc.param "embed" : tensor<16x8xf32>
  %h = llmc.embedding %emb, %tokens : (tensor<16x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %wqkv = llmc.param "qkv" : tensor<16x8xf32>
  %qkv = llmc.linear %h, %wqkv : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %q0 = llmc.slice %qkv {start = 0 : i64, size = 8 : i64} : (tensor<?x16xf32>) -> tensor<?x8xf32>
  %k0 = llmc.slice %qkv {start = 8 : i64, size = 4 : i64} : (tensor<?x16xf32>) -> tensor<?x4xf32>
  %v0 = llmc.slice %qkv {start = 12 : i64, size = 4 : i64} : (tensor<?x16xf32>) -> tensor<?x4xf32>
  %q1 = llmc.reshape %q0 : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
  %q = llmc.rope %q1, %pos {rotary_dim = 4 : i64, style = "half", theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi32>) -> tensor<?x2x4xf32>
  %k = llmc.reshape %k0 : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %v = llmc.reshape %v0 : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %c1 = llmc.kv_write %cache, %k, %v, %slots {layer = 0 : i64} : (!cache, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>) -> !cache
  %hk, %hv = llmc.kv_read %c1, %tables, %lens {layer = 0 : i64} : (!cache, tensor<?x?xi32>, tensor<?xi32>) -> (tensor<?x1x4xf32>, tensor<?x1x4xf32>)
  %o = llmc.attention %q, %hk, %hv, %qs, %lens {causal, scale = 5.0e-01 : f64} : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x2x4xf32>
  %of = llmc.reshape %o : (tensor<?x2x4xf32>) -> tensor<?x8xf32>
  %wo = llmc.param "o" {quant = "int8", quant_part = "weight", group_size = 8 : i64} : tensor<8x8xi8>
  %so = llmc.param "o" {quant = "int8", quant_part = "scales", group_size = 8 : i64} : tensor<8x1xf32>
  %a = llmc.quantized_linear %of, %wo, %so {bits = 8 : i64, group_size = 8 : i64} : (tensor<?x8xf32>, tensor<8x8xi8>, tensor<8x1xf32>) -> tensor<?x8xf32>
  %wh = llmc.param "head" : tensor<16x8xf32>
  %logits = llmc.linear %a, %wh : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %logits, %c1 : tensor<?x16xf32>, !cache
}
}

// -----

// Tests that an op left without a kernel (a softmax the fusion passes did
// not remove) is an error naming the op.

// ERR: error: llmc-serialize: 'llmc.softmax' has no kernel; the fusion passes must remove it before lowering
func.func @prefill(%tokens: tensor<?xi32> {llmc.name = "tokens"}) -> tensor<?x8xf32> {
  %e = llmc.param "embed" : tensor<16x8xf32>
  %h = llmc.embedding %e, %tokens : (tensor<16x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  // expected-error@+1 {{llmc-serialize: 'llmc.softmax' has no kernel; the fusion passes must remove it before lowering}}
  %p = llmc.softmax %h : tensor<?x8xf32>
  return %p : tensor<?x8xf32>
}
func.func @decode(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}
func.func @verify(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}

// -----

// Tests that a module that was not split into phases is an error.

// ERR: error: llmc-serialize: no @prefill function (run llmc-specialize-phases)
// expected-error@+1 {{llmc-serialize: no @prefill function (run llmc-specialize-phases)}}
module {
  func.func @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
    return %x : tensor<?x8xf32>
  }
}

// -----

// Tests that an attention that does not read the KV cache has no kernel.

// ERR: error: llmc-serialize: attention must read the KV cache (run llmc-insert-kv-cache)
func.func @prefill(%tokens: tensor<?xi32> {llmc.name = "tokens"}, %k: tensor<?x1x4xf32>) -> tensor<?x2x4xf32> {
  %e = llmc.param "embed" : tensor<16x8xf32>
  %x = llmc.embedding %e, %tokens : (tensor<16x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %h = llmc.reshape %x : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
  // expected-error@+1 {{llmc-serialize: attention must read the KV cache (run llmc-insert-kv-cache)}}
  %o = llmc.attention %h, %k, %k {causal, scale = 5.0e-01 : f64} : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
  return %o : tensor<?x2x4xf32>
}
func.func @decode(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}
func.func @verify(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}
