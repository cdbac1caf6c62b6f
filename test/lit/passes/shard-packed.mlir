// RUN: llmc-opt %s --llmc-shard=tp=2 | FileCheck %s

// Tests that a packed Q/K/V projection with a bias (GPT-2's c_attn, Phi's
// qkv_proj), sliced by llmc.slice, becomes one linear per part over that
// part of the same checkpoint tensor (each rank's rows counted from the
// part's start: Q at 0, K at 32, V at 48), and that a row-parallel linear's
// bias is added once in the sum: rank 0 holds it, rank 1 zeros (-1).

// CHECK: module attributes {llmc.tp = 2 : i64}
// CHECK-DAG: llmc.param "qkv" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 16>} : tensor<16x32xf32>
// CHECK-DAG: llmc.param "qkv.bias" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 16>} : tensor<16xf32>
// CHECK-DAG: llmc.param "qkv" {shard_dim = 0 : i64, shard_starts = array<i64: 32, 40>} : tensor<8x32xf32>
// CHECK-DAG: llmc.param "qkv" {shard_dim = 0 : i64, shard_starts = array<i64: 48, 56>} : tensor<8x32xf32>
// CHECK-NOT: llmc.slice
// CHECK: llmc.attention {{.*}} -> tensor<?x2x8xf32>
// CHECK: llmc.param "o.bias" {shard_dim = 0 : i64, shard_starts = array<i64: 0, -1>} : tensor<32xf32>
// CHECK: %[[P:.*]] = llmc.linear {{.*}} : (tensor<?x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<?x32xf32>
// CHECK: llmc.all_reduce %[[P]] : tensor<?x32xf32>
!cache = !llmc.kv_cache<layers = 1, kv_heads = 2, head_dim = 8, dtype = f32>
func.func @forward(%x: tensor<?x32xf32>, %pos: tensor<?xi32>, %cache: !cache, %slots: tensor<?xi32>,
                   %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %qs: tensor<?xi32>) -> (tensor<?x32xf32>, !cache) {
  %w = llmc.param "qkv" : tensor<64x32xf32>
  %b = llmc.param "qkv.bias" : tensor<64xf32>
  %qkv = llmc.linear %x, %w, %b : (tensor<?x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<?x64xf32>
  %q0 = llmc.slice %qkv {start = 0 : i64, size = 32 : i64} : (tensor<?x64xf32>) -> tensor<?x32xf32>
  %k0 = llmc.slice %qkv {start = 32 : i64, size = 16 : i64} : (tensor<?x64xf32>) -> tensor<?x16xf32>
  %v0 = llmc.slice %qkv {start = 48 : i64, size = 16 : i64} : (tensor<?x64xf32>) -> tensor<?x16xf32>
  %q = llmc.reshape %q0 : (tensor<?x32xf32>) -> tensor<?x4x8xf32>
  %k = llmc.reshape %k0 : (tensor<?x16xf32>) -> tensor<?x2x8xf32>
  %v = llmc.reshape %v0 : (tensor<?x16xf32>) -> tensor<?x2x8xf32>
  %c1 = llmc.kv_write %cache, %k, %v, %slots {layer = 0 : i64} : (!cache, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?xi32>) -> !cache
  %hk, %hv = llmc.kv_read %c1, %tables, %lens {layer = 0 : i64} : (!cache, tensor<?x?xi32>, tensor<?xi32>) -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>)
  %a = llmc.attention %q, %hk, %hv, %qs, %lens {causal, scale = 3.5e-01 : f64} : (tensor<?x4x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x4x8xf32>
  %a2 = llmc.reshape %a : (tensor<?x4x8xf32>) -> tensor<?x32xf32>
  %wo = llmc.param "o" : tensor<32x32xf32>
  %bo = llmc.param "o.bias" : tensor<32xf32>
  %o = llmc.linear %a2, %wo, %bo : (tensor<?x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  return %o, %c1 : tensor<?x32xf32>, !cache
}
