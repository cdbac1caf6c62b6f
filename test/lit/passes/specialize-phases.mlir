// RUN: llmc-opt %s -split-input-file -verify-diagnostics --llmc-specialize-phases | FileCheck %s

// Tests that a cached @forward is split into @prefill, @decode and @verify:
// @prefill computes logits only for the rows in a new `logits_rows`
// argument (llmc.take_last before the LM head), @decode attends straight over
// the paged cache with llmc.paged_attention (layer, scale and window kept;
// kv_read and the unused query_start argument gone), and @verify is
// @forward as it was, with logits for every new token.

!cache = !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32>

// CHECK-NOT: func.func @forward
// CHECK-LABEL: func.func @prefill
// CHECK-SAME: %{{[^:]*}}: tensor<?xi32> {llmc.name = "query_start"}, %[[ROWS:[^:]*]]: tensor<?xi32> {llmc.name = "logits_rows"})
// CHECK-SAME: -> (tensor<?x16xf32>, !llmc.kv_cache
// CHECK: llmc.kv_write
// CHECK: %[[HK:.*]], %[[HV:.*]] = llmc.kv_read
// CHECK: llmc.attention %{{.*}}, %[[HK]], %[[HV]], %{{.*}}, %{{.*}} {causal, scale = 5.000000e-01 : f64, window = 2 : i64}
// CHECK: %[[H:.*]] = llmc.reshape
// CHECK: %[[HEAD:.*]] = llmc.param "head"
// CHECK: %[[LAST:.*]] = llmc.take_last %[[H]], %[[ROWS]] : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
// CHECK: %[[LOGITS:.*]] = llmc.linear %[[LAST]], %[[HEAD]] : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK: return %[[LOGITS]], %{{.*}} : tensor<?x16xf32>, !llmc.kv_cache

// CHECK-LABEL: func.func @decode
// CHECK-SAME: (%{{[^:]*}}: tensor<?xi32> {llmc.name = "tokens"}, %[[CACHE:[^:]*]]: !llmc.kv_cache<{{.*}}> {llmc.name = "kv_cache"}, %{{[^:]*}}: tensor<?xi32> {llmc.name = "slot_mapping"}, %[[TABLES:[^:]*]]: tensor<?x?xi32> {llmc.name = "block_tables"}, %[[LENS:[^:]*]]: tensor<?xi32> {llmc.name = "context_lens"})
// CHECK-SAME: -> (tensor<?x16xf32>, !llmc.kv_cache
// CHECK: %[[C1:.*]] = llmc.kv_write %[[CACHE]]
// CHECK-NOT: llmc.kv_read
// CHECK: %[[O:.*]] = llmc.paged_attention %{{.*}}, %[[C1]], %[[TABLES]], %[[LENS]] {layer = 0 : i64, scale = 5.000000e-01 : f64, window = 2 : i64}
// CHECK-SAME: -> tensor<?x2x4xf32>
// CHECK: %[[H:.*]] = llmc.reshape %[[O]]
// CHECK-NOT: llmc.take_last
// CHECK: llmc.linear %[[H]], %{{.*}} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>

// CHECK-LABEL: func.func @verify
// CHECK-SAME: %{{[^:]*}}: tensor<?xi32> {llmc.name = "query_start"})
// CHECK-SAME: -> (tensor<?x16xf32>, !llmc.kv_cache
// CHECK: llmc.kv_read
// CHECK: llmc.attention
// CHECK-NOT: llmc.paged_attention
// CHECK-NOT: llmc.take_last
// CHECK: %[[H:.*]] = llmc.reshape
// CHECK: llmc.linear %[[H]], %{{.*}} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK-NOT: func.func @forward
func.func @forward(%tokens: tensor<?xi32> {llmc.name = "tokens"}, %cache: !cache {llmc.name = "kv_cache"},
                   %slots: tensor<?xi32> {llmc.name = "slot_mapping"}, %tables: tensor<?x?xi32> {llmc.name = "block_tables"},
                   %lens: tensor<?xi32> {llmc.name = "context_lens"}, %qs: tensor<?xi32> {llmc.name = "query_start"})
    -> (tensor<?x16xf32>, !cache) {
  %emb = llmc.param "embed" : tensor<16x8xf32>
  %h = llmc.embedding %emb, %tokens : (tensor<16x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %wq = llmc.param "q" : tensor<8x8xf32>
  %q0 = llmc.linear %h, %wq : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %q = llmc.reshape %q0 : (tensor<?x8xf32>) -> tensor<?x2x4xf32>
  %wk = llmc.param "k" : tensor<4x8xf32>
  %k0 = llmc.linear %h, %wk : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x4xf32>
  %k = llmc.reshape %k0 : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %c1 = llmc.kv_write %cache, %k, %k, %slots {layer = 0 : i64} : (!cache, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>) -> !cache
  %hk, %hv = llmc.kv_read %c1, %tables, %lens {layer = 0 : i64} : (!cache, tensor<?x?xi32>, tensor<?xi32>) -> (tensor<?x1x4xf32>, tensor<?x1x4xf32>)
  %o = llmc.attention %q, %hk, %hv, %qs, %lens {causal, scale = 5.0e-01 : f64, window = 2 : i64} : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x2x4xf32>
  %of = llmc.reshape %o : (tensor<?x2x4xf32>) -> tensor<?x8xf32>
  %wh = llmc.param "head" : tensor<16x8xf32>
  %logits = llmc.linear %of, %wh : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %logits, %c1 : tensor<?x16xf32>, !cache
}

// -----

// Tests that a module without @forward (already specialized, or not a model)
// is left unchanged.

// CHECK-LABEL: func.func @prefill
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: return %[[X]]
// CHECK-NOT: func.func @decode
// CHECK-NOT: func.func @verify
func.func @prefill(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  return %x : tensor<?x8xf32>
}

// -----

// Tests that a @forward without a KV cache is rejected: the phases differ only
// in how they use the cache.

// expected-error@+1 {{llmc-specialize-phases: @forward has no KV cache; run llmc-insert-kv-cache first}}
func.func @forward(%x: tensor<?x8xf32>) -> tensor<?x16xf32> {
  %wh = llmc.param "head" : tensor<16x8xf32>
  %logits = llmc.linear %x, %wh : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  return %logits : tensor<?x16xf32>
}

// -----

// Tests that @prefill cannot be formed when the first result (the logits) is
// not produced by an LM head llmc.linear.

!cache = !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32>

// expected-error@+1 {{llmc-specialize-phases: the first result of @prefill is not produced by an LM head llmc.linear}}
func.func @forward(%x: tensor<?x1x4xf32>, %cache: !cache, %slots: tensor<?xi32>) -> (tensor<?x1x4xf32>, !cache) {
  %c1 = llmc.kv_write %cache, %x, %x, %slots {layer = 0 : i64} : (!cache, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>) -> !cache
  return %x, %c1 : tensor<?x1x4xf32>, !cache
}

// -----

// Tests Gemma 2: @decode's paged attention keeps the score soft-cap, and the
// LM head of @prefill is found behind the final llmc.softcap (take_last goes
// before the head; the softcap stays last).

!cache = !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32>

// CHECK-LABEL: func.func @prefill
// CHECK: %[[LAST:.*]] = llmc.take_last
// CHECK: %[[L:.*]] = llmc.linear %[[LAST]]
// CHECK: %[[C:.*]] = llmc.softcap %[[L]] {cap = 3.000000e+01 : f64}
// CHECK: return %[[C]]
// CHECK-LABEL: func.func @decode
// CHECK: llmc.paged_attention {{.*}} {layer = 0 : i64, scale = 5.000000e-01 : f64, softcap = 5.000000e+01 : f64}
func.func @forward(%tokens: tensor<?xi32> {llmc.name = "tokens"}, %cache: !cache {llmc.name = "kv_cache"},
                   %slots: tensor<?xi32> {llmc.name = "slot_mapping"}, %tables: tensor<?x?xi32> {llmc.name = "block_tables"},
                   %lens: tensor<?xi32> {llmc.name = "context_lens"}, %qs: tensor<?xi32> {llmc.name = "query_start"})
    -> (tensor<?x16xf32>, !cache) {
  %emb = llmc.param "embed" : tensor<16x4xf32>
  %h = llmc.embedding %emb, %tokens : (tensor<16x4xf32>, tensor<?xi32>) -> tensor<?x4xf32>
  %q = llmc.reshape %h : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %c1 = llmc.kv_write %cache, %q, %q, %slots {layer = 0 : i64} : (!cache, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>) -> !cache
  %hk, %hv = llmc.kv_read %c1, %tables, %lens {layer = 0 : i64} : (!cache, tensor<?x?xi32>, tensor<?xi32>) -> (tensor<?x1x4xf32>, tensor<?x1x4xf32>)
  %o = llmc.attention %q, %hk, %hv, %qs, %lens {causal, scale = 5.0e-01 : f64, softcap = 50.0 : f64} : (tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>, tensor<?xi32>, tensor<?xi32>) -> tensor<?x1x4xf32>
  %of = llmc.reshape %o : (tensor<?x1x4xf32>) -> tensor<?x4xf32>
  %logits = llmc.linear %of, %emb : (tensor<?x4xf32>, tensor<16x4xf32>) -> tensor<?x16xf32>
  %capped = llmc.softcap %logits {cap = 30.0 : f64} : tensor<?x16xf32>
  return %capped, %c1 : tensor<?x16xf32>, !cache
}
