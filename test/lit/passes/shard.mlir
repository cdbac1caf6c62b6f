// RUN: llmc-opt %s --llmc-shard=tp=2 | FileCheck %s --check-prefix=TP2
// RUN: llmc-opt %s --llmc-shard=tp=4 | FileCheck %s --check-prefix=TP4
// RUN: llmc-opt %s --llmc-shard=tp=1 | FileCheck %s --check-prefix=TP1

// Tests the per-rank graph of one Llama layer (8 query heads of 4 over 2 kv
// heads, hidden 32, intermediate 64) split over tp ranks: Q/K/V and
// gate/up are column-parallel (each weight one rank's rows, shard_dim 0),
// O and down row-parallel (one rank's columns, shard_dim 1) followed by
// llmc.all_reduce; the cache holds each rank's kv heads; embedding, norms
// and the LM head stay whole. tp = 2 splits the kv heads (one each); tp = 4
// replicates them (ranks 0 and 1 read kv head 0, ranks 2 and 3 kv head 1).

// TP2: module attributes {llmc.tp = 2 : i64}
// TP2: func.func @forward({{.*}}: !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32> {llmc.name = "kv_cache"}
// TP2-SAME: -> (tensor<?x16xf32>, !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32>)
// TP2: llmc.param "embed" : tensor<16x32xf32>
// TP2: %[[WQ:.*]] = llmc.param "q" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 16>} : tensor<16x32xf32>
// TP2: llmc.linear %{{.*}}, %[[WQ]] : (tensor<?x32xf32>, tensor<16x32xf32>) -> tensor<?x16xf32>
// TP2: llmc.param "k" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 4>} : tensor<4x32xf32>
// TP2: llmc.param "v" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 4>} : tensor<4x32xf32>
// TP2: llmc.reshape %{{.*}} : (tensor<?x16xf32>) -> tensor<?x4x4xf32>
// TP2: llmc.rope %{{.*}} : (tensor<?x4x4xf32>, tensor<?xi32>) -> tensor<?x4x4xf32>
// TP2: llmc.rope %{{.*}} : (tensor<?x1x4xf32>, tensor<?xi32>) -> tensor<?x1x4xf32>
// TP2: llmc.kv_write {{.*}} : (!llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>) -> !llmc.kv_cache<layers = 1, kv_heads = 1
// TP2: llmc.kv_read {{.*}} -> (tensor<?x1x4xf32>, tensor<?x1x4xf32>)
// TP2: llmc.attention {{.*}} : (tensor<?x4x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x4x4xf32>
// TP2: %[[A:.*]] = llmc.reshape %{{.*}} : (tensor<?x4x4xf32>) -> tensor<?x16xf32>
// TP2: %[[WO:.*]] = llmc.param "o" {shard_dim = 1 : i64, shard_starts = array<i64: 0, 16>} : tensor<32x16xf32>
// TP2: %[[PO:.*]] = llmc.linear %[[A]], %[[WO]] : (tensor<?x16xf32>, tensor<32x16xf32>) -> tensor<?x32xf32>
// TP2: %[[O:.*]] = llmc.all_reduce %[[PO]] : tensor<?x32xf32>
// TP2: llmc.add %{{.*}}, %[[O]] : tensor<?x32xf32>
// TP2: llmc.param "gate" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 32>} : tensor<32x32xf32>
// TP2: llmc.param "up" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 32>} : tensor<32x32xf32>
// TP2: llmc.silu %{{.*}} : tensor<?x32xf32>
// TP2: llmc.mul %{{.*}}, %{{.*}} : tensor<?x32xf32>
// TP2: llmc.param "down" {shard_dim = 1 : i64, shard_starts = array<i64: 0, 32>} : tensor<32x32xf32>
// TP2: %[[PD:.*]] = llmc.linear %{{.*}}, %{{.*}} : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32>
// TP2: %[[D:.*]] = llmc.all_reduce %[[PD]] : tensor<?x32xf32>
// TP2: llmc.add %{{.*}}, %[[D]] : tensor<?x32xf32>
// TP2: llmc.param "head" : tensor<16x32xf32>
// TP2: llmc.linear {{.*}} -> tensor<?x16xf32>

// TP4: module attributes {llmc.tp = 4 : i64}
// TP4: llmc.param "q" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 8, 16, 24>} : tensor<8x32xf32>
// TP4: llmc.param "k" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 0, 4, 4>} : tensor<4x32xf32>
// TP4: llmc.param "v" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 0, 4, 4>} : tensor<4x32xf32>
// TP4: llmc.kv_write {{.*}} -> !llmc.kv_cache<layers = 1, kv_heads = 1
// TP4: llmc.attention {{.*}} : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x2x4xf32>
// TP4: llmc.param "o" {shard_dim = 1 : i64, shard_starts = array<i64: 0, 8, 16, 24>} : tensor<32x8xf32>
// TP4: llmc.all_reduce
// TP4: llmc.param "gate" {shard_dim = 0 : i64, shard_starts = array<i64: 0, 16, 32, 48>} : tensor<16x32xf32>
// TP4: llmc.param "down" {shard_dim = 1 : i64, shard_starts = array<i64: 0, 16, 32, 48>} : tensor<32x16xf32>
// TP4: llmc.all_reduce
// TP4-NOT: llmc.all_reduce

// TP1-NOT: llmc.tp
// TP1-NOT: shard_dim
// TP1-NOT: llmc.all_reduce

!cache = !llmc.kv_cache<layers = 1, kv_heads = 2, head_dim = 4, dtype = f32>
func.func @forward(%tokens: tensor<?xi32> {llmc.name = "tokens"}, %pos: tensor<?xi32> {llmc.name = "positions"},
                   %cache: !cache {llmc.name = "kv_cache"}, %slots: tensor<?xi32> {llmc.name = "slot_mapping"},
                   %tables: tensor<?x?xi32> {llmc.name = "block_tables"}, %lens: tensor<?xi32> {llmc.name = "context_lens"},
                   %qs: tensor<?xi32> {llmc.name = "query_start"}) -> (tensor<?x16xf32>, !cache) {
  %emb = llmc.param "embed" : tensor<16x32xf32>
  %x = llmc.embedding %emb, %tokens : (tensor<16x32xf32>, tensor<?xi32>) -> tensor<?x32xf32>
  %n1w = llmc.param "norm1" : tensor<32xf32>
  %n1 = llmc.rms_norm %x, %n1w {eps = 1.0e-05 : f64} : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %wq = llmc.param "q" : tensor<32x32xf32>
  %q0 = llmc.linear %n1, %wq : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32>
  %wk = llmc.param "k" : tensor<8x32xf32>
  %k0 = llmc.linear %n1, %wk : (tensor<?x32xf32>, tensor<8x32xf32>) -> tensor<?x8xf32>
  %wv = llmc.param "v" : tensor<8x32xf32>
  %v0 = llmc.linear %n1, %wv : (tensor<?x32xf32>, tensor<8x32xf32>) -> tensor<?x8xf32>
  %q1 = llmc.reshape %q0 : (tensor<?x32xf32>) -> tensor<?x8x4xf32>
  %k1 = llmc.reshape %k0 : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
  %q = llmc.rope %q1, %pos {rotary_dim = 4 : i64, style = "half", theta = 1.0e+04 : f64} : (tensor<?x8x4xf32>, tensor<?xi32>) -> tensor<?x8x4xf32>
  %k = llmc.rope %k1, %pos {rotary_dim = 4 : i64, style = "half", theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi32>) -> tensor<?x2x4xf32>
  %v = llmc.reshape %v0 : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
  %c1 = llmc.kv_write %cache, %k, %v, %slots {layer = 0 : i64} : (!cache, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?xi32>) -> !cache
  %hk, %hv = llmc.kv_read %c1, %tables, %lens {layer = 0 : i64} : (!cache, tensor<?x?xi32>, tensor<?xi32>) -> (tensor<?x2x4xf32>, tensor<?x2x4xf32>)
  %a = llmc.attention %q, %hk, %hv, %qs, %lens {causal, scale = 5.0e-01 : f64} : (tensor<?x8x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x8x4xf32>
  %a2 = llmc.reshape %a : (tensor<?x8x4xf32>) -> tensor<?x32xf32>
  %wo = llmc.param "o" : tensor<32x32xf32>
  %o = llmc.linear %a2, %wo : (tensor<?x32xf32>, tensor<32x32xf32>) -> tensor<?x32xf32>
  %h = llmc.add %x, %o : tensor<?x32xf32>
  %n2w = llmc.param "norm2" : tensor<32xf32>
  %n2 = llmc.rms_norm %h, %n2w {eps = 1.0e-05 : f64} : (tensor<?x32xf32>, tensor<32xf32>) -> tensor<?x32xf32>
  %wg = llmc.param "gate" : tensor<64x32xf32>
  %g = llmc.linear %n2, %wg : (tensor<?x32xf32>, tensor<64x32xf32>) -> tensor<?x64xf32>
  %wu = llmc.param "up" : tensor<64x32xf32>
  %u = llmc.linear %n2, %wu : (tensor<?x32xf32>, tensor<64x32xf32>) -> tensor<?x64xf32>
  %s = llmc.silu %g : tensor<?x64xf32>
  %m = llmc.mul %s, %u : tensor<?x64xf32>
  %wd = llmc.param "down" : tensor<32x64xf32>
  %d = llmc.linear %m, %wd : (tensor<?x64xf32>, tensor<32x64xf32>) -> tensor<?x32xf32>
  %h2 = llmc.add %h, %d : tensor<?x32xf32>
  %wh = llmc.param "head" : tensor<16x32xf32>
  %logits = llmc.linear %h2, %wh : (tensor<?x32xf32>, tensor<16x32xf32>) -> tensor<?x16xf32>
  return %logits, %c1 : tensor<?x16xf32>, !cache
}
