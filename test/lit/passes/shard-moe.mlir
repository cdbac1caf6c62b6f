// RUN: llmc-opt %s -split-input-file --llmc-shard=tp=2 | FileCheck %s

// Tests that a MoE layer splits every expert's intermediate width over the
// ranks (gate/up [E, I, H] by rows: shard_dim 1; down [E, H, I] by columns:
// shard_dim 2), the router staying whole, and that one llmc.all_reduce
// follows the moe_combine.

// CHECK: module attributes {llmc.tp = 2 : i64}
// CHECK-LABEL: func.func @forward
// CHECK: llmc.topk_gating
// CHECK: llmc.param "gate" {shard_dim = 1 : i64, shard_starts = array<i64: 0, 48>} : tensor<4x48x64xf32>
// CHECK: llmc.expert_linear {{.*}} -> tensor<?x2x48xf32>
// CHECK: llmc.param "up" {shard_dim = 1 : i64, shard_starts = array<i64: 0, 48>} : tensor<4x48x64xf32>
// CHECK: llmc.silu %{{.*}} : tensor<?x2x48xf32>
// CHECK: llmc.mul %{{.*}}, %{{.*}} : tensor<?x2x48xf32>
// CHECK: llmc.param "down" {shard_dim = 2 : i64, shard_starts = array<i64: 0, 48>} : tensor<4x64x48xf32>
// CHECK: llmc.expert_linear {{.*}} : (tensor<?x2x48xf32>, tensor<4x64x48xf32>, tensor<?x2xi32>) -> tensor<?x2x64xf32>
// CHECK: %[[C:.*]] = llmc.moe_combine
// CHECK: %[[S:.*]] = llmc.all_reduce %[[C]] : tensor<?x64xf32>
// CHECK: return %[[S]]
func.func @forward(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %wr = llmc.param "router" : tensor<4x64xf32>
  %l = llmc.linear %x, %wr : (tensor<?x64xf32>, tensor<4x64xf32>) -> tensor<?x4xf32>
  %w, %e = llmc.topk_gating %l {k = 2 : i64, normalize} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
  %wg = llmc.param "gate" : tensor<4x96x64xf32>
  %g = llmc.expert_linear %x, %wg, %e : (tensor<?x64xf32>, tensor<4x96x64xf32>, tensor<?x2xi32>) -> tensor<?x2x96xf32>
  %wu = llmc.param "up" : tensor<4x96x64xf32>
  %u = llmc.expert_linear %x, %wu, %e : (tensor<?x64xf32>, tensor<4x96x64xf32>, tensor<?x2xi32>) -> tensor<?x2x96xf32>
  %s = llmc.silu %g : tensor<?x2x96xf32>
  %m = llmc.mul %s, %u : tensor<?x2x96xf32>
  %wd = llmc.param "down" : tensor<4x64x96xf32>
  %d = llmc.expert_linear %m, %wd, %e : (tensor<?x2x96xf32>, tensor<4x64x96xf32>, tensor<?x2xi32>) -> tensor<?x2x64xf32>
  %c = llmc.moe_combine %d, %w : (tensor<?x2x64xf32>, tensor<?x2xf32>) -> tensor<?x64xf32>
  return %c : tensor<?x64xf32>
}

// -----

// gpt-oss's experts: an interleaved gate/up (2I wide: each rank its
// contiguous half, pairs whole) with its bias split alike, the activation
// I wide, and the down bias added once (rank 0's; -1: zeros elsewhere).

// CHECK-LABEL: func.func @gpt_oss
// CHECK: llmc.param "gate_up" {shard_dim = 1 : i64, shard_starts = array<i64: 0, 16>} : tensor<4x16x8xf32>
// CHECK: llmc.param "gate_up_bias" {shard_dim = 1 : i64, shard_starts = array<i64: 0, 16>} : tensor<4x16xf32>
// CHECK: llmc.clamped_swiglu {{.*}} : (tensor<?x2x16xf32>) -> tensor<?x2x8xf32>
// CHECK: llmc.param "down" {shard_dim = 2 : i64, shard_starts = array<i64: 0, 8>} : tensor<4x8x8xf32>
// CHECK: llmc.param "down_bias" {shard_dim = 0 : i64, shard_starts = array<i64: 0, -1>} : tensor<4x8xf32>
// CHECK: %[[C:.*]] = llmc.moe_combine
// CHECK: llmc.all_reduce %[[C]]
func.func @gpt_oss(%x: tensor<?x8xf32>, %logits: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %w, %e = llmc.topk_gating %logits {k = 2 : i64, normalize} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
  %wu = llmc.param "gate_up" : tensor<4x32x8xf32>
  %u = llmc.expert_linear %x, %wu, %e : (tensor<?x8xf32>, tensor<4x32x8xf32>, tensor<?x2xi32>) -> tensor<?x2x32xf32>
  %bu = llmc.param "gate_up_bias" : tensor<4x32xf32>
  %ub = llmc.expert_bias %u, %bu, %e : (tensor<?x2x32xf32>, tensor<4x32xf32>, tensor<?x2xi32>) -> tensor<?x2x32xf32>
  %s = llmc.clamped_swiglu %ub {alpha = 1.702 : f64, interleaved, limit = 7.0 : f64} : (tensor<?x2x32xf32>) -> tensor<?x2x16xf32>
  %wd = llmc.param "down" : tensor<4x8x16xf32>
  %d = llmc.expert_linear %s, %wd, %e : (tensor<?x2x16xf32>, tensor<4x8x16xf32>, tensor<?x2xi32>) -> tensor<?x2x8xf32>
  %bd = llmc.param "down_bias" : tensor<4x8xf32>
  %db = llmc.expert_bias %d, %bd, %e : (tensor<?x2x8xf32>, tensor<4x8xf32>, tensor<?x2xi32>) -> tensor<?x2x8xf32>
  %c = llmc.moe_combine %db, %w : (tensor<?x2x8xf32>, tensor<?x2xf32>) -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}
