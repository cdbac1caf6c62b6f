// RUN: llmc-opt %s -split-input-file -verify-diagnostics --llmc-insert-kv-cache | FileCheck %s

// Tests that a causal attention stores its new K/V with llmc.kv_write and
// attends over the history read back with llmc.kv_read, as a ragged batch;
// the function gains the cache and the step metadata (named with llmc.name)
// and returns the updated cache after its own results.

// CHECK-LABEL: func.func @one_layer
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<?x2x4xf32>, %[[K:[^:]*]]: tensor<?x1x4xf32>, %[[V:[^:]*]]: tensor<?x1x4xf32>,
// CHECK-SAME: %[[CACHE:[^:]*]]: !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32> {llmc.name = "kv_cache"},
// CHECK-SAME: %[[SLOTS:[^:]*]]: tensor<?xi32> {llmc.name = "slot_mapping"},
// CHECK-SAME: %[[TABLES:[^:]*]]: tensor<?x?xi32> {llmc.name = "block_tables"},
// CHECK-SAME: %[[LENS:[^:]*]]: tensor<?xi32> {llmc.name = "context_lens"},
// CHECK-SAME: %[[QS:[^:]*]]: tensor<?xi32> {llmc.name = "query_start"})
// CHECK-SAME: -> (tensor<?x2x4xf32>, !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32>)
// CHECK: %[[C1:.*]] = llmc.kv_write %[[CACHE]], %[[K]], %[[V]], %[[SLOTS]] {layer = 0 : i64}
// CHECK: %[[HK:.*]], %[[HV:.*]] = llmc.kv_read %[[C1]], %[[TABLES]], %[[LENS]] {layer = 0 : i64}
// CHECK-SAME: -> (tensor<?x1x4xf32>, tensor<?x1x4xf32>)
// CHECK: %[[O:.*]] = llmc.attention %[[Q]], %[[HK]], %[[HV]], %[[QS]], %[[LENS]] {causal, scale = 5.000000e-01 : f64}
// CHECK: return %[[O]], %[[C1]] : tensor<?x2x4xf32>, !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32>
func.func @one_layer(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>) -> tensor<?x2x4xf32> {
  %o = llmc.attention %q, %k, %v {causal, scale = 5.0e-01 : f64} : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
  return %o : tensor<?x2x4xf32>
}

// -----

// Tests that layers are numbered in order, that each kv_write takes the cache
// the previous layer returned (so reads see earlier writes), that the cache
// type counts the layers, and that a sliding window is kept.

// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: %[[CACHE:[^:]*]]: !llmc.kv_cache<layers = 2, kv_heads = 1, head_dim = 4, dtype = f32> {llmc.name = "kv_cache"}
// CHECK: %[[C1:.*]] = llmc.kv_write %[[CACHE]], %{{.*}} {layer = 0 : i64}
// CHECK: %[[K0:.*]], %[[V0:.*]] = llmc.kv_read %[[C1]], %{{.*}} {layer = 0 : i64}
// CHECK: %[[O0:.*]] = llmc.attention %{{.*}}, %[[K0]], %[[V0]], %{{.*}}, %{{.*}} {causal, scale = 5.000000e-01 : f64, window = 2 : i64}
// CHECK: %[[C2:.*]] = llmc.kv_write %[[C1]], %{{.*}} {layer = 1 : i64}
// CHECK: %[[K1:.*]], %[[V1:.*]] = llmc.kv_read %[[C2]], %{{.*}} {layer = 1 : i64}
// CHECK: %[[O1:.*]] = llmc.attention %[[O0]], %[[K1]], %[[V1]], %{{.*}}, %{{.*}} {causal, scale = 5.000000e-01 : f64}
// CHECK: return %[[O1]], %[[C2]]
func.func @two_layers(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>) -> tensor<?x2x4xf32> {
  %o0 = llmc.attention %q, %k, %v {causal, scale = 5.0e-01 : f64, window = 2 : i64} : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
  %o1 = llmc.attention %o0, %k, %v {causal, scale = 5.0e-01 : f64} : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
  return %o1 : tensor<?x2x4xf32>
}

// -----

// Tests that a non-causal attention (an encoder, nothing to cache) is left
// alone: no cache op, no new argument, no new result.

// CHECK-LABEL: func.func @non_causal
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<?x2x4xf32>, %[[K:[^:]*]]: tensor<?x2x4xf32>, %[[V:[^:]*]]: tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
// CHECK-NOT: llmc.kv_write
// CHECK-NOT: llmc.kv_read
// CHECK: %[[O:.*]] = llmc.attention %[[Q]], %[[K]], %[[V]] {scale = 5.000000e-01 : f64} :
// CHECK: return %[[O]] : tensor<?x2x4xf32>
func.func @non_causal(%q: tensor<?x2x4xf32>, %k: tensor<?x2x4xf32>, %v: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %o = llmc.attention %q, %k, %v {scale = 5.0e-01 : f64} : (tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  return %o : tensor<?x2x4xf32>
}

// -----

// Tests that an attention that already reads the cache (it has segments) is
// not routed through the cache a second time.

// CHECK-LABEL: func.func @already_cached
// CHECK-SAME: (%{{[^:]*}}: tensor<?x2x4xf32>, %{{[^:]*}}: tensor<?x1x4xf32>, %{{[^:]*}}: tensor<?x1x4xf32>, %{{[^:]*}}: tensor<?xi32>, %{{[^:]*}}: tensor<?xi32>) -> tensor<?x2x4xf32>
// CHECK-NOT: llmc.kv_write
// CHECK: llmc.attention
// CHECK-NOT: llmc.kv_cache
func.func @already_cached(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>, %qs: tensor<?xi32>, %lens: tensor<?xi32>) -> tensor<?x2x4xf32> {
  %o = llmc.attention %q, %k, %v, %qs, %lens {causal, scale = 5.0e-01 : f64} : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x2x4xf32>
  return %o : tensor<?x2x4xf32>
}

// -----

// Tests that layers with different K/V geometry are rejected: one paged cache
// holds every layer.

func.func @mixed_geometry(%q: tensor<?x2x4xf32>, %k1: tensor<?x1x4xf32>, %k2: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %o0 = llmc.attention %q, %k1, %k1 {causal, scale = 5.0e-01 : f64} : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
  // expected-error@+1 {{'llmc.attention' op every layer must share the cache geometry (1 kv heads of 4)}}
  %o1 = llmc.attention %o0, %k2, %k2 {causal, scale = 5.0e-01 : f64} : (tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  return %o1 : tensor<?x2x4xf32>
}
