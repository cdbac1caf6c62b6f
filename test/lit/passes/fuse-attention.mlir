// RUN: llmc-opt %s -split-input-file --llmc-fuse-attention | FileCheck %s

// Tests that the decomposed multi-head attention the importer emits (scores,
// scale, causal mask, softmax, weighted sum) becomes one llmc.attention over
// the heads-minor Q/K/V, with the scale and causality carried as attributes.

// CHECK-LABEL: func.func @mha
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x4xf32>, %[[K:.*]]: tensor<?x2x4xf32>, %[[V:.*]]: tensor<?x2x4xf32>)
// CHECK-NOT: llmc.transpose
// CHECK-NOT: llmc.matmul
// CHECK: %[[O:.*]] = llmc.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 5.000000e-01 : f64}
// CHECK-SAME: (tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
// CHECK-NOT: llmc.scale
// CHECK-NOT: llmc.causal_mask
// CHECK-NOT: llmc.softmax
// CHECK-NOT: llmc.transpose
// CHECK: return %[[O]]
func.func @mha(%q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %qt = llmc.transpose %q {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %kt = llmc.transpose %k {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %vt = llmc.transpose %v {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %s = llmc.matmul %qt, %kt {transpose_b} : (tensor<2x?x4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x?xf32>
  %ss = llmc.scale %s {factor = 5.0e-01 : f64} : tensor<2x?x?xf32>
  %m = llmc.causal_mask %ss : tensor<2x?x?xf32>
  %p = llmc.softmax %m : tensor<2x?x?xf32>
  %o = llmc.matmul %p, %vt : (tensor<2x?x?xf32>, tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %ot = llmc.transpose %o {permutation = array<i64: 1, 0, 2>} : (tensor<2x?x4xf32>) -> tensor<?x2x4xf32>
  return %ot : tensor<?x2x4xf32>
}

// -----

// Tests that grouped-query attention (one kv head repeated for two query
// heads) is fused over the un-repeated K and V: the repeat_kv ops disappear
// and the attention's K/V operands keep their single kv head.

// CHECK-LABEL: func.func @gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x4xf32>, %[[K:.*]]: tensor<?x1x4xf32>, %[[V:.*]]: tensor<?x1x4xf32>)
// CHECK-NOT: llmc.repeat_kv
// CHECK: %[[O:.*]] = llmc.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 5.000000e-01 : f64}
// CHECK-SAME: (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
// CHECK-NOT: llmc.repeat_kv
// CHECK: return %[[O]]
func.func @gqa(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>) -> tensor<?x2x4xf32> {
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
  return %ot : tensor<?x2x4xf32>
}

// -----

// Tests that the sliding window of the causal mask becomes the attention's
// `window` attribute.

// CHECK-LABEL: func.func @sliding_window
// CHECK: llmc.attention %{{.*}}, %{{.*}}, %{{.*}} {causal, scale = 2.500000e-01 : f64, window = 3 : i64}
// CHECK-NOT: llmc.causal_mask
func.func @sliding_window(%q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %qt = llmc.transpose %q {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %kt = llmc.transpose %k {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %vt = llmc.transpose %v {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %s = llmc.matmul %qt, %kt {transpose_b} : (tensor<2x?x4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x?xf32>
  %ss = llmc.scale %s {factor = 2.5e-01 : f64} : tensor<2x?x?xf32>
  %m = llmc.causal_mask %ss {window = 3 : i64} : tensor<2x?x?xf32>
  %p = llmc.softmax %m : tensor<2x?x?xf32>
  %o = llmc.matmul %p, %vt : (tensor<2x?x?xf32>, tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %ot = llmc.transpose %o {permutation = array<i64: 1, 0, 2>} : (tensor<2x?x4xf32>) -> tensor<?x2x4xf32>
  return %ot : tensor<?x2x4xf32>
}

// -----

// Tests that the mask and the scale are optional: without them the fused
// attention is not causal and has scale 1.

// CHECK-LABEL: func.func @no_mask_no_scale
// CHECK: llmc.attention %{{.*}}, %{{.*}}, %{{.*}} {scale = 1.000000e+00 : f64}
// CHECK-NOT: causal
// CHECK: return
func.func @no_mask_no_scale(%q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %qt = llmc.transpose %q {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %kt = llmc.transpose %k {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %vt = llmc.transpose %v {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %s = llmc.matmul %qt, %kt {transpose_b} : (tensor<2x?x4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x?xf32>
  %p = llmc.softmax %s : tensor<2x?x?xf32>
  %o = llmc.matmul %p, %vt : (tensor<2x?x?xf32>, tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %ot = llmc.transpose %o {permutation = array<i64: 1, 0, 2>} : (tensor<2x?x4xf32>) -> tensor<?x2x4xf32>
  return %ot : tensor<?x2x4xf32>
}

// -----

// Tests that attention is not fused when the softmax result has a second
// user: the probabilities are observable, so the decomposed graph stays.

// CHECK-LABEL: func.func @softmax_used_twice
// CHECK-NOT: llmc.attention
// CHECK: %[[P:.*]] = llmc.softmax
// CHECK: llmc.matmul %[[P]], %{{.*}} :
// CHECK: llmc.transpose
// CHECK: return %{{.*}}, %[[P]]
func.func @softmax_used_twice(%q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> (tensor<?x2x4xf32>, tensor<2x?x?xf32>) {
  %qt = llmc.transpose %q {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %kt = llmc.transpose %k {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %vt = llmc.transpose %v {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %s = llmc.matmul %qt, %kt {transpose_b} : (tensor<2x?x4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x?xf32>
  %ss = llmc.scale %s {factor = 5.0e-01 : f64} : tensor<2x?x?xf32>
  %m = llmc.causal_mask %ss : tensor<2x?x?xf32>
  %p = llmc.softmax %m : tensor<2x?x?xf32>
  %o = llmc.matmul %p, %vt : (tensor<2x?x?xf32>, tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %ot = llmc.transpose %o {permutation = array<i64: 1, 0, 2>} : (tensor<2x?x4xf32>) -> tensor<?x2x4xf32>
  return %ot, %p : tensor<?x2x4xf32>, tensor<2x?x?xf32>
}

// -----

// Tests that attention is not fused when Q is not transposed heads-major with
// permutation [1, 0, 2] (here an identity permutation; T = heads = 2 keeps
// the types consistent).

// CHECK-LABEL: func.func @wrong_permutation
// CHECK-NOT: llmc.attention
// CHECK: llmc.transpose %{{.*}} {permutation = array<i64: 0, 1, 2>}
// CHECK: llmc.matmul %{{.*}}, %{{.*}} {transpose_b}
// CHECK: llmc.softmax
func.func @wrong_permutation(%q: tensor<2x2x4xf32>, %k: tensor<2x2x4xf32>, %v: tensor<2x2x4xf32>) -> tensor<2x2x4xf32> {
  %qt = llmc.transpose %q {permutation = array<i64: 0, 1, 2>} : (tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %kt = llmc.transpose %k {permutation = array<i64: 1, 0, 2>} : (tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %vt = llmc.transpose %v {permutation = array<i64: 1, 0, 2>} : (tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %s = llmc.matmul %qt, %kt {transpose_b} : (tensor<2x2x4xf32>, tensor<2x2x4xf32>) -> tensor<2x2x2xf32>
  %ss = llmc.scale %s {factor = 5.0e-01 : f64} : tensor<2x2x2xf32>
  %m = llmc.causal_mask %ss : tensor<2x2x2xf32>
  %p = llmc.softmax %m : tensor<2x2x2xf32>
  %o = llmc.matmul %p, %vt : (tensor<2x2x2xf32>, tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  %ot = llmc.transpose %o {permutation = array<i64: 1, 0, 2>} : (tensor<2x2x4xf32>) -> tensor<2x2x4xf32>
  return %ot : tensor<2x2x4xf32>
}

// -----

// Tests that attention is not fused when K and V are repeated a different
// number of times (K from one kv head x2, V already has two heads): there is
// no single grouping of kv heads for llmc.attention.

// CHECK-LABEL: func.func @mismatched_repeats
// CHECK-NOT: llmc.attention
// CHECK: llmc.repeat_kv %{{.*}} {repeats = 2 : i64}
// CHECK: llmc.softmax
// CHECK: llmc.matmul
func.func @mismatched_repeats(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %kr = llmc.repeat_kv %k {repeats = 2 : i64} : (tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
  %qt = llmc.transpose %q {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %kt = llmc.transpose %kr {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %vt = llmc.transpose %v {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %s = llmc.matmul %qt, %kt {transpose_b} : (tensor<2x?x4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x?xf32>
  %ss = llmc.scale %s {factor = 5.0e-01 : f64} : tensor<2x?x?xf32>
  %m = llmc.causal_mask %ss : tensor<2x?x?xf32>
  %p = llmc.softmax %m : tensor<2x?x?xf32>
  %o = llmc.matmul %p, %vt : (tensor<2x?x?xf32>, tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %ot = llmc.transpose %o {permutation = array<i64: 1, 0, 2>} : (tensor<2x?x4xf32>) -> tensor<?x2x4xf32>
  return %ot : tensor<?x2x4xf32>
}

// -----

// Tests that attention is not fused when the scores are Q times K without
// transpose_b (K transposed to [heads, D, T] instead): the pattern requires
// the Q·Kᵀ form exactly.

// CHECK-LABEL: func.func @scores_without_transpose_b
// CHECK-NOT: llmc.attention
// CHECK: llmc.transpose %{{.*}} {permutation = array<i64: 1, 2, 0>}
// CHECK: llmc.softmax
func.func @scores_without_transpose_b(%q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %qt = llmc.transpose %q {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %kt = llmc.transpose %k {permutation = array<i64: 1, 2, 0>} : (tensor<?x2x4xf32>) -> tensor<2x4x?xf32>
  %vt = llmc.transpose %v {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %s = llmc.matmul %qt, %kt : (tensor<2x?x4xf32>, tensor<2x4x?xf32>) -> tensor<2x?x?xf32>
  %ss = llmc.scale %s {factor = 5.0e-01 : f64} : tensor<2x?x?xf32>
  %m = llmc.causal_mask %ss : tensor<2x?x?xf32>
  %p = llmc.softmax %m : tensor<2x?x?xf32>
  %o = llmc.matmul %p, %vt : (tensor<2x?x?xf32>, tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %ot = llmc.transpose %o {permutation = array<i64: 1, 0, 2>} : (tensor<2x?x4xf32>) -> tensor<?x2x4xf32>
  return %ot : tensor<?x2x4xf32>
}

// -----

// Tests that Gemma 2's soft-capped scores fuse too: the softcap between the
// scale and the mask becomes the attention's softcap attribute, next to its
// window.

// CHECK-LABEL: func.func @softcap
// CHECK-SAME: (%[[Q:.*]]: tensor<?x2x4xf32>, %[[K:.*]]: tensor<?x2x4xf32>, %[[V:.*]]: tensor<?x2x4xf32>)
// CHECK: %[[O:.*]] = llmc.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 5.000000e-01 : f64, softcap = 5.000000e+01 : f64, window = 3 : i64}
// CHECK-NOT: llmc.softcap
// CHECK: return %[[O]]
func.func @softcap(%q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %qt = llmc.transpose %q {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %kt = llmc.transpose %k {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %vt = llmc.transpose %v {permutation = array<i64: 1, 0, 2>} : (tensor<?x2x4xf32>) -> tensor<2x?x4xf32>
  %s = llmc.matmul %qt, %kt {transpose_b} : (tensor<2x?x4xf32>, tensor<2x?x4xf32>) -> tensor<2x?x?xf32>
  %ss = llmc.scale %s {factor = 5.0e-01 : f64} : tensor<2x?x?xf32>
  %sc = llmc.softcap %ss {cap = 50.0 : f64} : tensor<2x?x?xf32>
  %m = llmc.causal_mask %sc {window = 3 : i64} : tensor<2x?x?xf32>
  %p = llmc.softmax %m : tensor<2x?x?xf32>
  %o = llmc.matmul %p, %vt : (tensor<2x?x?xf32>, tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
  %ot = llmc.transpose %o {permutation = array<i64: 1, 0, 2>} : (tensor<2x?x4xf32>) -> tensor<?x2x4xf32>
  return %ot : tensor<?x2x4xf32>
}
