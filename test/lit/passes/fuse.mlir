// RUN: llmc-opt %s -split-input-file --llmc-fuse | FileCheck %s

// Tests that a residual add feeding an rms_norm becomes llmc.add_rms_norm,
// whose `sum` replaces the add for its other users and whose `normed`
// replaces the norm; the norm weight, defined after the add, moves up.

// CHECK-LABEL: func.func @add_rms_norm
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x8xf32>, %[[R:[^:]*]]: tensor<?x8xf32>)
// CHECK: %[[W:.*]] = llmc.param "norm" : tensor<8xf32>
// CHECK-NEXT: %[[SUM:.*]], %[[NORMED:.*]] = llmc.add_rms_norm %[[X]], %[[R]], %[[W]] {eps = 1.000000e-05 : f64}
// CHECK-SAME: (tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
// CHECK-NOT: llmc.add
// CHECK-NOT: llmc.rms_norm
// CHECK: %[[OUT:.*]] = llmc.mul %[[NORMED]], %[[SUM]]
// CHECK: return %[[OUT]]
func.func @add_rms_norm(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %s = llmc.add %x, %r : tensor<?x8xf32>
  %w = llmc.param "norm" : tensor<8xf32>
  %n = llmc.rms_norm %s, %w {eps = 1.0e-05 : f64} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %o = llmc.mul %n, %s : tensor<?x8xf32>
  return %o : tensor<?x8xf32>
}

// -----

// Tests that an add that does not feed a norm, and a norm whose input is not
// an add, are left alone.

// CHECK-LABEL: func.func @add_not_feeding_norm
// CHECK-NOT: llmc.add_rms_norm
// CHECK: %[[N:.*]] = llmc.rms_norm %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64}
// CHECK: %[[S:.*]] = llmc.add %[[N]], %{{.*}} : tensor<?x8xf32>
// CHECK: %[[S2:.*]] = llmc.silu %[[S]]
// CHECK-NOT: llmc.add_rms_norm
// CHECK: return %[[S2]]
func.func @add_not_feeding_norm(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = llmc.param "norm" : tensor<8xf32>
  %n = llmc.rms_norm %x, %w {eps = 1.0e-05 : f64} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %s = llmc.add %n, %r : tensor<?x8xf32>
  %a = llmc.silu %s : tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

// Tests that mul(silu(linear(x, Wg)), linear(x, Wu)) becomes one linear over
// a packed [Wg; Wu] param (gate rows first) followed by llmc.swiglu.

// CHECK-LABEL: func.func @gate_up
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x8xf32>)
// CHECK: %[[W:.*]] = llmc.param "gate+up" {sources = ["gate", "up"]} : tensor<32x8xf32>
// CHECK: %[[GU:.*]] = llmc.linear %[[X]], %[[W]] : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
// CHECK: %[[S:.*]] = llmc.swiglu %[[GU]] : (tensor<?x32xf32>) -> tensor<?x16xf32>
// CHECK-NOT: llmc.silu
// CHECK-NOT: llmc.mul
// CHECK: return %[[S]]
func.func @gate_up(%x: tensor<?x8xf32>) -> tensor<?x16xf32> {
  %wg = llmc.param "gate" : tensor<16x8xf32>
  %g = llmc.linear %x, %wg : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %wu = llmc.param "up" : tensor<16x8xf32>
  %u = llmc.linear %x, %wu : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %gs = llmc.silu %g : tensor<?x16xf32>
  %m = llmc.mul %gs, %u : tensor<?x16xf32>
  return %m : tensor<?x16xf32>
}

// -----

// Tests that gate and up projections of different inputs are not packed.

// CHECK-LABEL: func.func @gate_up_different_inputs
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x8xf32>, %[[Y:[^:]*]]: tensor<?x8xf32>)
// CHECK-NOT: llmc.swiglu
// CHECK: %[[G:.*]] = llmc.linear %[[X]], %{{.*}} : (tensor<?x8xf32>, tensor<16x8xf32>)
// CHECK: %[[U:.*]] = llmc.linear %[[Y]], %{{.*}} : (tensor<?x8xf32>, tensor<16x8xf32>)
// CHECK: %[[GS:.*]] = llmc.silu %[[G]]
// CHECK: llmc.mul %[[GS]], %[[U]]
// CHECK-NOT: llmc.swiglu
func.func @gate_up_different_inputs(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x16xf32> {
  %wg = llmc.param "gate" : tensor<16x8xf32>
  %g = llmc.linear %x, %wg : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %wu = llmc.param "up" : tensor<16x8xf32>
  %u = llmc.linear %y, %wu : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %gs = llmc.silu %g : tensor<?x16xf32>
  %m = llmc.mul %gs, %u : tensor<?x16xf32>
  return %m : tensor<?x16xf32>
}

// -----

// Tests that the Q, K and V projections of one input (GQA widths 8, 4, 4)
// become one linear over a packed [Wq; Wk; Wv] param and three slices at
// consecutive column offsets.

// CHECK-LABEL: func.func @qkv
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x8xf32>)
// CHECK: %[[W:.*]] = llmc.param "q+k+v" {sources = ["q", "k", "v"]} : tensor<16x8xf32>
// CHECK: %[[QKV:.*]] = llmc.linear %[[X]], %[[W]] : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK: %[[Q:.*]] = llmc.slice %[[QKV]] {size = 8 : i64, start = 0 : i64} : (tensor<?x16xf32>) -> tensor<?x8xf32>
// CHECK: %[[K:.*]] = llmc.slice %[[QKV]] {size = 4 : i64, start = 8 : i64} : (tensor<?x16xf32>) -> tensor<?x4xf32>
// CHECK: %[[V:.*]] = llmc.slice %[[QKV]] {size = 4 : i64, start = 12 : i64} : (tensor<?x16xf32>) -> tensor<?x4xf32>
// CHECK-NOT: llmc.linear
// CHECK: return %[[Q]], %[[K]], %[[V]]
func.func @qkv(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %wq = llmc.param "q" : tensor<8x8xf32>
  %q = llmc.linear %x, %wq : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %wk = llmc.param "k" : tensor<4x8xf32>
  %k = llmc.linear %x, %wk : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %wv = llmc.param "v" : tensor<4x8xf32>
  %v = llmc.linear %x, %wv : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %q, %k, %v : tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Tests that Q/K/V biases (Qwen2) are packed into one bias param alongside
// the packed weight.

// CHECK-LABEL: func.func @qkv_bias
// CHECK-DAG: %[[W:.*]] = llmc.param "q.weight+k.weight+v.weight" {sources = ["q.weight", "k.weight", "v.weight"]} : tensor<16x8xf32>
// CHECK-DAG: %[[B:.*]] = llmc.param "q.bias+k.bias+v.bias" {sources = ["q.bias", "k.bias", "v.bias"]} : tensor<16xf32>
// CHECK: %[[QKV:.*]] = llmc.linear %{{.*}}, %[[W]], %[[B]] : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
// CHECK: llmc.slice %[[QKV]] {size = 8 : i64, start = 0 : i64}
// CHECK: llmc.slice %[[QKV]] {size = 4 : i64, start = 8 : i64}
// CHECK: llmc.slice %[[QKV]] {size = 4 : i64, start = 12 : i64}
// CHECK-NOT: llmc.linear
func.func @qkv_bias(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %wq = llmc.param "q.weight" : tensor<8x8xf32>
  %bq = llmc.param "q.bias" : tensor<8xf32>
  %q = llmc.linear %x, %wq, %bq : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %wk = llmc.param "k.weight" : tensor<4x8xf32>
  %bk = llmc.param "k.bias" : tensor<4xf32>
  %k = llmc.linear %x, %wk, %bk : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %wv = llmc.param "v.weight" : tensor<4x8xf32>
  %bv = llmc.param "v.bias" : tensor<4xf32>
  %v = llmc.linear %x, %wv, %bv : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  return %q, %k, %v : tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Tests that only two projections of one input (not a Q/K/V triple) are not
// packed.

// CHECK-LABEL: func.func @two_projections
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x8xf32>)
// CHECK-NOT: llmc.slice
// CHECK-NOT: sources
// CHECK: llmc.linear %[[X]], %{{.*}} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK: llmc.linear %[[X]], %{{.*}} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
// CHECK-NOT: llmc.slice
func.func @two_projections(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>) {
  %wq = llmc.param "q" : tensor<8x8xf32>
  %q = llmc.linear %x, %wq : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %wk = llmc.param "k" : tensor<4x8xf32>
  %k = llmc.linear %x, %wk : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %q, %k : tensor<?x8xf32>, tensor<?x4xf32>
}

// -----

// Tests that three projections are not packed when one weight is not a plain
// checkpoint tensor (stored transposed), nor when only some have a bias.

// CHECK-LABEL: func.func @qkv_not_packable
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x8xf32>, %[[Y:[^:]*]]: tensor<?x8xf32>)
// CHECK-NOT: llmc.slice
// CHECK: llmc.param "k" {transposed}
// CHECK-COUNT-3: llmc.linear %[[X]], %{{.*}} :
// CHECK-NOT: llmc.slice
// CHECK: llmc.linear %[[Y]], %{{.*}}, %{{.*}} :
// CHECK-NEXT: llmc.linear %[[Y]], %{{.*}} :
// CHECK-NEXT: llmc.linear %[[Y]], %{{.*}} :
// CHECK-NOT: llmc.slice
func.func @qkv_not_packable(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %wq = llmc.param "q" : tensor<8x8xf32>
  %wk = llmc.param "k" {transposed} : tensor<4x8xf32>
  %wv = llmc.param "v" : tensor<4x8xf32>
  %bq = llmc.param "q.bias" : tensor<8xf32>
  %q = llmc.linear %x, %wq : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %k = llmc.linear %x, %wk : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %v = llmc.linear %x, %wv : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %q2 = llmc.linear %y, %wq, %bq : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %k2 = llmc.linear %y, %wv : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %v2 = llmc.linear %y, %wv : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  return %q, %k, %v, %q2, %k2, %v2 : tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// Tests Gemma 2's MLP: mul(gelu{tanh}(linear(x, Wg)), linear(x, Wu)) packs
// like SwiGLU into llmc.geglu; the erf GELU is not Gemma's and stays.

// CHECK-LABEL: func.func @geglu
// CHECK: %[[W:.*]] = llmc.param "gate+up" {sources = ["gate", "up"]} : tensor<32x8xf32>
// CHECK: %[[GU:.*]] = llmc.linear %{{.*}}, %[[W]]
// CHECK: %[[S:.*]] = llmc.geglu %[[GU]] : (tensor<?x32xf32>) -> tensor<?x16xf32>
// CHECK-NOT: llmc.gelu
// CHECK: return %[[S]]
func.func @geglu(%x: tensor<?x8xf32>) -> tensor<?x16xf32> {
  %wg = llmc.param "gate" : tensor<16x8xf32>
  %g = llmc.linear %x, %wg : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %wu = llmc.param "up" : tensor<16x8xf32>
  %u = llmc.linear %x, %wu : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %gs = llmc.gelu %g {approximate = "tanh"} : tensor<?x16xf32>
  %m = llmc.mul %gs, %u : tensor<?x16xf32>
  return %m : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @gelu_erf_not_packed
// CHECK-NOT: llmc.geglu
// CHECK: llmc.gelu %{{.*}} : tensor<?x16xf32>
func.func @gelu_erf_not_packed(%x: tensor<?x8xf32>) -> tensor<?x16xf32> {
  %wg = llmc.param "gate" : tensor<16x8xf32>
  %g = llmc.linear %x, %wg : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %wu = llmc.param "up" : tensor<16x8xf32>
  %u = llmc.linear %x, %wu : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %gs = llmc.gelu %g : tensor<?x16xf32>
  %m = llmc.mul %gs, %u : tensor<?x16xf32>
  return %m : tensor<?x16xf32>
}

// -----

// Tests Gemma 2's sandwich norms: a post-norm normalizes a sublayer's
// output (a linear), not a residual sum, so it stays a plain rms_norm; the
// residual add after it fuses with the next pre-norm, the post-normed value
// as its residual operand. Norm params with an offset (1 + w) are not packed
// or changed.

// CHECK-LABEL: func.func @post_norms
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x8xf32>)
// CHECK: %[[A:.*]] = llmc.linear %[[X]]
// CHECK: %[[PW:.*]] = llmc.param "post_attention" {offset = 1.000000e+00 : f64}
// CHECK: %[[P:.*]] = llmc.rms_norm %[[A]], %[[PW]]
// CHECK: %[[SUM:.*]], %[[NORMED:.*]] = llmc.add_rms_norm %[[X]], %[[P]], %{{.*}}
// CHECK: %[[F:.*]] = llmc.linear %[[NORMED]]
// CHECK: %[[Q:.*]] = llmc.rms_norm %[[F]], %{{.*}}
// CHECK: %[[OUT:.*]] = llmc.add %[[SUM]], %[[Q]]
// CHECK: return %[[OUT]]
func.func @post_norms(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %wo = llmc.param "o" : tensor<8x8xf32>
  %a = llmc.linear %x, %wo : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %pw = llmc.param "post_attention" {offset = 1.0 : f64} : tensor<8xf32>
  %p = llmc.rms_norm %a, %pw {eps = 1.0e-06 : f64} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %h = llmc.add %x, %p : tensor<?x8xf32>
  %fw = llmc.param "pre_feedforward" {offset = 1.0 : f64} : tensor<8xf32>
  %m = llmc.rms_norm %h, %fw {eps = 1.0e-06 : f64} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %wd = llmc.param "down" : tensor<8x8xf32>
  %f = llmc.linear %m, %wd : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %qw = llmc.param "post_feedforward" {offset = 1.0 : f64} : tensor<8xf32>
  %q = llmc.rms_norm %f, %qw {eps = 1.0e-06 : f64} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %out = llmc.add %h, %q : tensor<?x8xf32>
  return %out : tensor<?x8xf32>
}

// -----

// Tests that the experts' gate and up projections of the same tokens and
// routing pack into one stacked weight whose expert e holds gate rows then
// up rows of expert e (sources, each naming all experts), followed by a
// SwiGLU over each chosen expert's run.

// CHECK-LABEL: func.func @expert_gate_up
// CHECK: %[[W:.*]] = llmc.param "experts.{e}.w1+experts.{e}.w3" {sources = ["experts.{e}.w1", "experts.{e}.w3"]} : tensor<4x32x64xf32>
// CHECK: %[[H:.*]] = llmc.expert_linear %{{.*}}, %[[W]], %{{.*}} : (tensor<?x64xf32>, tensor<4x32x64xf32>, tensor<?x2xi32>) -> tensor<?x2x32xf32>
// CHECK: %[[A:.*]] = llmc.swiglu %[[H]] : (tensor<?x2x32xf32>) -> tensor<?x2x16xf32>
// CHECK-NOT: llmc.silu
// CHECK: llmc.expert_linear %[[A]]
func.func @expert_gate_up(%x: tensor<?x64xf32>, %e: tensor<?x2xi32>) -> tensor<?x2x64xf32> {
  %g = llmc.param "experts.{e}.w1" : tensor<4x16x64xf32>
  %u = llmc.param "experts.{e}.w3" : tensor<4x16x64xf32>
  %d = llmc.param "experts.{e}.w2" : tensor<4x64x16xf32>
  %gx = llmc.expert_linear %x, %g, %e : (tensor<?x64xf32>, tensor<4x16x64xf32>, tensor<?x2xi32>) -> tensor<?x2x16xf32>
  %ux = llmc.expert_linear %x, %u, %e : (tensor<?x64xf32>, tensor<4x16x64xf32>, tensor<?x2xi32>) -> tensor<?x2x16xf32>
  %s = llmc.silu %gx : tensor<?x2x16xf32>
  %a = llmc.mul %s, %ux : tensor<?x2x16xf32>
  %y = llmc.expert_linear %a, %d, %e : (tensor<?x2x16xf32>, tensor<4x64x16xf32>, tensor<?x2xi32>) -> tensor<?x2x64xf32>
  return %y : tensor<?x2x64xf32>
}

// -----

// Tests that gate and up routed by different gatings do not pack.

// CHECK-LABEL: func.func @expert_gate_up_other_routing
// CHECK-NOT: llmc.swiglu
func.func @expert_gate_up_other_routing(%x: tensor<?x64xf32>, %e: tensor<?x2xi32>, %f: tensor<?x2xi32>) -> tensor<?x2x16xf32> {
  %g = llmc.param "experts.{e}.w1" : tensor<4x16x64xf32>
  %u = llmc.param "experts.{e}.w3" : tensor<4x16x64xf32>
  %gx = llmc.expert_linear %x, %g, %e : (tensor<?x64xf32>, tensor<4x16x64xf32>, tensor<?x2xi32>) -> tensor<?x2x16xf32>
  %ux = llmc.expert_linear %x, %u, %f : (tensor<?x64xf32>, tensor<4x16x64xf32>, tensor<?x2xi32>) -> tensor<?x2x16xf32>
  %s = llmc.silu %gx : tensor<?x2x16xf32>
  %a = llmc.mul %s, %ux : tensor<?x2x16xf32>
  return %a : tensor<?x2x16xf32>
}
