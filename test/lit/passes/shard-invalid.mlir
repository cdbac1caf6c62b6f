// RUN: llmc-opt %s -split-input-file -verify-diagnostics --llmc-shard=tp=2

// Tests llmc-shard's refusals, each naming the op and what does not split.

!cache = !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32>
func.func @forward(%x: tensor<?x12xf32>, %cache: !cache, %slots: tensor<?xi32>, %tables: tensor<?x?xi32>,
                   %lens: tensor<?xi32>, %qs: tensor<?xi32>) -> (tensor<?x3x4xf32>, !cache) {
  %wq = llmc.param "q" : tensor<12x12xf32>
  %q0 = llmc.linear %x, %wq : (tensor<?x12xf32>, tensor<12x12xf32>) -> tensor<?x12xf32>
  %q = llmc.reshape %q0 : (tensor<?x12xf32>) -> tensor<?x3x4xf32>
  %wk = llmc.param "k" : tensor<4x12xf32>
  %k0 = llmc.linear %x, %wk : (tensor<?x12xf32>, tensor<4x12xf32>) -> tensor<?x4xf32>
  %k = llmc.reshape %k0 : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %c1 = llmc.kv_write %cache, %k, %k, %slots {layer = 0 : i64} : (!cache, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>) -> !cache
  %hk, %hv = llmc.kv_read %c1, %tables, %lens {layer = 0 : i64} : (!cache, tensor<?x?xi32>, tensor<?xi32>) -> (tensor<?x1x4xf32>, tensor<?x1x4xf32>)
  // expected-error @+1 {{llmc-shard: 3 query heads do not split over 2 ranks}}
  %a = llmc.attention %q, %hk, %hv, %qs, %lens {causal, scale = 5.0e-01 : f64} : (tensor<?x3x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x3x4xf32>
  return %a, %c1 : tensor<?x3x4xf32>, !cache
}

// -----

!cache = !llmc.kv_cache<layers = 1, kv_heads = 3, head_dim = 4, dtype = f32>
func.func @forward(%x: tensor<?x24xf32>, %cache: !cache, %slots: tensor<?xi32>, %tables: tensor<?x?xi32>,
                   %lens: tensor<?xi32>, %qs: tensor<?xi32>) -> (tensor<?x6x4xf32>, !cache) {
  %wq = llmc.param "q" : tensor<24x24xf32>
  %q0 = llmc.linear %x, %wq : (tensor<?x24xf32>, tensor<24x24xf32>) -> tensor<?x24xf32>
  %q = llmc.reshape %q0 : (tensor<?x24xf32>) -> tensor<?x6x4xf32>
  %wk = llmc.param "k" : tensor<12x24xf32>
  %k0 = llmc.linear %x, %wk : (tensor<?x24xf32>, tensor<12x24xf32>) -> tensor<?x12xf32>
  %k = llmc.reshape %k0 : (tensor<?x12xf32>) -> tensor<?x3x4xf32>
  %c1 = llmc.kv_write %cache, %k, %k, %slots {layer = 0 : i64} : (!cache, tensor<?x3x4xf32>, tensor<?x3x4xf32>, tensor<?xi32>) -> !cache
  %hk, %hv = llmc.kv_read %c1, %tables, %lens {layer = 0 : i64} : (!cache, tensor<?x?xi32>, tensor<?xi32>) -> (tensor<?x3x4xf32>, tensor<?x3x4xf32>)
  // expected-error @+1 {{llmc-shard: 3 kv heads neither split over nor replicate evenly across 2 ranks}}
  %a = llmc.attention %q, %hk, %hv, %qs, %lens {causal, scale = 5.0e-01 : f64} : (tensor<?x6x4xf32>, tensor<?x3x4xf32>, tensor<?x3x4xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x6x4xf32>
  return %a, %c1 : tensor<?x6x4xf32>, !cache
}

// -----

func.func @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %wg = llmc.param "gate" : tensor<15x8xf32>
  %g = llmc.linear %x, %wg : (tensor<?x8xf32>, tensor<15x8xf32>) -> tensor<?x15xf32>
  %s = llmc.silu %g : tensor<?x15xf32>
  %wd = llmc.param "down" : tensor<8x15xf32>
  // expected-error @+1 {{llmc-shard: intermediate size 15 does not split over 2 ranks}}
  %d = llmc.linear %s, %wd : (tensor<?x15xf32>, tensor<8x15xf32>) -> tensor<?x8xf32>
  return %d : tensor<?x8xf32>
}

// -----

func.func @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %wg = llmc.param "gate" : tensor<16x8xf32>
  %g = llmc.linear %x, %wg : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %s = llmc.silu %g : tensor<?x16xf32>
  // expected-error @+1 {{llmc-shard: cannot split an MLP through it}}
  %t = llmc.scale %s {factor = 2.0 : f64} : tensor<?x16xf32>
  %wu = llmc.param "up" : tensor<16x8xf32>
  %u = llmc.linear %x, %wu : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %m = llmc.mul %t, %u : tensor<?x16xf32>
  %wd = llmc.param "down" : tensor<8x16xf32>
  %d = llmc.linear %m, %wd : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
  return %d : tensor<?x8xf32>
}

// -----

func.func @forward(%x: tensor<?x8xf32>, %logits: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %w, %e = llmc.topk_gating %logits {k = 2 : i64, normalize} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
  %wu = llmc.param "up" : tensor<4x15x8xf32>
  %u = llmc.expert_linear %x, %wu, %e : (tensor<?x8xf32>, tensor<4x15x8xf32>, tensor<?x2xi32>) -> tensor<?x2x15xf32>
  %s = llmc.silu %u : tensor<?x2x15xf32>
  %wd = llmc.param "down" : tensor<4x8x15xf32>
  // expected-error @+1 {{llmc-shard: intermediate size 15 does not split over 2 ranks}}
  %d = llmc.expert_linear %s, %wd, %e : (tensor<?x2x15xf32>, tensor<4x8x15xf32>, tensor<?x2xi32>) -> tensor<?x2x8xf32>
  %c = llmc.moe_combine %d, %w : (tensor<?x2x8xf32>, tensor<?x2xf32>) -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// -----

func.func @forward(%x: tensor<?x8xf32>, %logits: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %w, %e = llmc.topk_gating %logits {k = 2 : i64, normalize} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>)
  %wu = llmc.param "gate_up" : tensor<4x16x8xf32>
  %u = llmc.expert_linear %x, %wu, %e : (tensor<?x8xf32>, tensor<4x16x8xf32>, tensor<?x2xi32>) -> tensor<?x2x16xf32>
  // expected-error @+1 {{llmc-shard: a gate-first clamped swiglu does not split by contiguous columns}}
  %s = llmc.clamped_swiglu %u {alpha = 1.702 : f64, limit = 7.0 : f64} : (tensor<?x2x16xf32>) -> tensor<?x2x8xf32>
  %wd = llmc.param "down" : tensor<4x8x8xf32>
  %d = llmc.expert_linear %s, %wd, %e : (tensor<?x2x8xf32>, tensor<4x8x8xf32>, tensor<?x2xi32>) -> tensor<?x2x8xf32>
  %c = llmc.moe_combine %d, %w : (tensor<?x2x8xf32>, tensor<?x2xf32>) -> tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}
