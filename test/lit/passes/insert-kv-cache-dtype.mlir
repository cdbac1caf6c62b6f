// RUN: llmc-opt %s --llmc-insert-kv-cache="kv-dtype=int8" | FileCheck %s --check-prefix=INT8
// RUN: llmc-opt %s --llmc-insert-kv-cache="kv-dtype=fp8" | FileCheck %s --check-prefix=FP8
// RUN: llmc-opt %s --llmc-insert-kv-cache="kv-dtype=bf16" | FileCheck %s --check-prefix=BF16
// RUN: llmc-opt %s --llmc-insert-kv-cache | FileCheck %s --check-prefix=KEYS
// RUN: not llmc-opt %s --llmc-insert-kv-cache="kv-dtype=int4" 2>&1 | FileCheck %s --check-prefix=BAD

// Tests that kv-dtype chooses the cache's storage type, independently of the
// f32 keys and values that are written to it and read back from it; without
// it the cache keeps the keys' type.

// INT8: %{{[^:]*}}: !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = i8> {llmc.name = "kv_cache"}
// INT8: llmc.kv_read {{.*}} -> (tensor<?x1x4xf32>, tensor<?x1x4xf32>)
// FP8: !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f8E4M3FN>
// BF16: !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = bf16>
// KEYS: !llmc.kv_cache<layers = 1, kv_heads = 1, head_dim = 4, dtype = f32>
// BAD: error: llmc-insert-kv-cache: kv-dtype 'int4' is not f32, bf16, f16, int8 or fp8
func.func @one_layer(%q: tensor<?x2x4xf32>, %k: tensor<?x1x4xf32>, %v: tensor<?x1x4xf32>) -> tensor<?x2x4xf32> {
  %o = llmc.attention %q, %k, %v {causal, scale = 5.0e-01 : f64} : (tensor<?x2x4xf32>, tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x2x4xf32>
  return %o : tensor<?x2x4xf32>
}
