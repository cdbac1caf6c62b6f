// RUN: llmc-opt %s --llmc-shard=tp=2 | FileCheck %s

// Tests that a MoE layer splits every expert's intermediate width over the
// ranks (gate/up [E, I, H] by rows: shard_dim 1; down [E, H, I] by columns:
// shard_dim 2), the router staying whole, and that one llmc.all_reduce
// follows the moe_combine.

// CHECK: module attributes {llmc.tp = 2 : i64}
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
