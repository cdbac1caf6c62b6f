// RUN: llmc-opt %s -split-input-file --llmc-plan-memory | FileCheck %s

// Tests that two buffers whose live ranges do not overlap share an offset:
// %a dies at %b, so %c reuses its bytes; offsets are in bytes per token
// (8 x f32 = 32), aligned to 64, and the workspace is the peak per token.

// CHECK-LABEL: func.func @reuse
// CHECK-SAME: attributes {llmc.workspace = {constant = 0 : i64, per_token = 96 : i64}}
// CHECK: %[[A:.*]] = llmc.silu %{{.*}} {llmc.offsets = array<i64: 0>}
// CHECK: %[[B:.*]] = llmc.silu %[[A]] {llmc.offsets = array<i64: 64>}
// CHECK: %[[C:.*]] = llmc.silu %[[B]] {llmc.offsets = array<i64: 0>}
// CHECK: return %[[C]]
func.func @reuse(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %a = llmc.silu %x : tensor<?x8xf32>
  %b = llmc.silu %a : tensor<?x8xf32>
  %c = llmc.silu %b : tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// -----

// Tests that buffers live at the same time never share bytes: %a is still
// read by the add, so %c goes past both %a and %b; the add's result may not
// alias its inputs %a and %c, but takes the bytes of %b, dead by then.

// CHECK-LABEL: func.func @overlap
// CHECK-SAME: attributes {llmc.workspace = {constant = 0 : i64, per_token = 160 : i64}}
// CHECK: %[[A:.*]] = llmc.silu %{{.*}} {llmc.offsets = array<i64: 0>}
// CHECK: %[[B:.*]] = llmc.silu %[[A]] {llmc.offsets = array<i64: 64>}
// CHECK: %[[C:.*]] = llmc.silu %[[B]] {llmc.offsets = array<i64: 128>}
// CHECK: %[[D:.*]] = llmc.add %[[A]], %[[C]] {llmc.offsets = array<i64: 64>}
// CHECK: return %[[D]]
func.func @overlap(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %a = llmc.silu %x : tensor<?x8xf32>
  %b = llmc.silu %a : tensor<?x8xf32>
  %c = llmc.silu %b : tensor<?x8xf32>
  %d = llmc.add %a, %c : tensor<?x8xf32>
  return %d : tensor<?x8xf32>
}

// -----

// Tests that a reshape is a view of its input: it gets no buffer of its own,
// and a use of the view keeps the input's bytes live (%b cannot reuse 0, the
// rope result goes above both at the next 64-byte boundary).
// Weights and arguments get no offsets; a buffer freed later is reused by a
// wider one when it fits (%d: 16 x f32 = 64 bytes at 0).

// CHECK-LABEL: func.func @reshape_view
// CHECK-SAME: attributes {llmc.workspace = {constant = 0 : i64, per_token = 160 : i64}}
// CHECK: %[[A:.*]] = llmc.silu %{{.*}} {llmc.offsets = array<i64: 0>}
// CHECK-NOT: llmc.offsets
// CHECK: %[[V:.*]] = llmc.reshape %[[A]] : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
// CHECK: %[[B:.*]] = llmc.silu %{{.*}} {llmc.offsets = array<i64: 64>}
// CHECK: llmc.rope %[[V]], %{{.*}} {llmc.offsets = array<i64: 128>
// CHECK: %[[W:.*]] = llmc.param "w" : tensor<16x8xf32>
// CHECK: llmc.linear %[[B]], %[[W]] {llmc.offsets = array<i64: 0>}
func.func @reshape_view(%x: tensor<?x8xf32>, %pos: tensor<?xi32>) -> (tensor<?x2x4xf32>, tensor<?x16xf32>) {
  %a = llmc.silu %x : tensor<?x8xf32>
  %v = llmc.reshape %a : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
  %b = llmc.silu %x : tensor<?x8xf32>
  %r = llmc.rope %v, %pos {rotary_dim = 4 : i64, style = "half", theta = 1.0e+04 : f64} : (tensor<?x2x4xf32>, tensor<?xi32>) -> tensor<?x2x4xf32>
  %w = llmc.param "w" : tensor<16x8xf32>
  %d = llmc.linear %b, %w : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %r, %d : tensor<?x2x4xf32>, tensor<?x16xf32>
}

// -----

// Tests that an op with two results gets one offset per result.

// CHECK-LABEL: func.func @two_results
// CHECK: llmc.add_rms_norm %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64, llmc.offsets = array<i64: 0, 64>}
func.func @two_results(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = llmc.param "norm" : tensor<8xf32>
  %s, %n = llmc.add_rms_norm %x, %r, %w {eps = 1.0e-05 : f64} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>)
  return %s, %n : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Tests that a function without activations needs no workspace and that no
// op gets offsets.

// CHECK-LABEL: func.func @no_activations
// CHECK-SAME: attributes {llmc.workspace = {constant = 0 : i64, per_token = 0 : i64}}
// CHECK-NOT: llmc.offsets
func.func @no_activations(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = llmc.param "w" : tensor<8xf32>
  return %x : tensor<?x8xf32>
}
