//===- attention_rows.h - Decode attention on the cache's own rows -*- C++ -*-//
//
// Decode has one query row per head, a group of G per kv head: too few rows
// for a GEMM tile, and so few that converting each chunk of keys to f32 in
// memory and transposing it cost more than the dot products (measured: at
// 2k context that staging was half of decode attention). These kernels read
// each key's and value's row where the block table put it, widen it to f32
// in registers once for the whole group (i8 and fp8 as exactly as
// ref's decode: the value times its row's scale), and reduce each key's dot
// products across the row's lanes.
//
// The per-level kernels live in attention_rows_<level>.cpp; this header is
// all they include besides intrinsics (see isa.h). Called by attendTile on
// its own thread; the kernels keep no state.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace llmc::cpu {

/// Keys per chunk (attendTile's decode chunk).
constexpr int64_t kRowChunk = 32;
/// The widest head the row kernels take (16 vectors of 16 lanes).
constexpr int64_t kRowMaxHeadDim = 256;

enum class RowType : uint32_t { F32, Bf16, F16, I8, Fp8 };

/// A chunk of one kv head's keys: rows [0, n) of K and V, headDim values of
/// `type` each. Entries past n are never read.
struct KeyRows {
  RowType type;
  int64_t headDim, n;
  const uint8_t *k[kRowChunk], *v[kRowChunk];
  float ks[kRowChunk], vs[kRowChunk]; // each row's scale: i8, fp8; else 1
};

struct RowKernels {
  /// scores[r * kRowChunk + t] = q[r] · K_t for R query rows (each
  /// headDim floats), t < n; 0 for t in [n, kRowChunk). Each row's result
  /// is the same bits whatever rows share the call.
  void (*scores)(const KeyRows &keys, const float *const *q, int64_t R,
                 float *scores);
  /// acc_r = alpha[r] * acc_r + sum over t < n of p[r * kRowChunk + t] * V_t
  /// for the G rows of acc (G * headDim floats); each row's result is the
  /// same bits whatever rows share the call.
  void (*accumulate)(const KeyRows &keys, const float *p, const float *alpha,
                     int64_t G, float *acc);
};

RowKernels rowKernelsAvx512(); // attention_rows_avx512.cpp

} // namespace llmc::cpu
