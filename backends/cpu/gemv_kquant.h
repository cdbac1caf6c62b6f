//===- gemv_kquant.h - Q4_K / Q5_K / Q6_K linears ---------------*- C++ -*-===//
//
// Weights in ggml's K-quant super-blocks, read as the plan holds them
// (llmc/support/kquant.h). Any thread may call; the calls open a parallel
// region unless made from inside one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu.h"
#include "kquant_dot.h"

#include "llmc/support/kquant.h"

namespace llmc::cpu {

/// x [K] (K a multiple of 256) as K / 256 blocks, q in the paired order
/// where asked (q8kIndex).
void quantizeQ8K(const float *x, int64_t K, Q8K *out, bool paired = false);

struct KQuantWeight {
  kquant::Format format;
  const uint8_t *codes;   // [N][K / 256 * code bytes]
  const uint8_t *headers; // [N][K / 256 * header bytes]
  bool int8Activations;   // op i2: x may be rounded to q8_K
  KQuantDot dot;          // the backend's level's, for this format
  bool pairedX;           // dot reads q8_K in the paired order
  int64_t maxRows;        // rows one dot takes
  const IntKernels *ints; // the level's GEMM tiles (prefill)
};

/// Rows above which K-quants run on gemmKQuant: it derives f32 scales
/// and repacks per call, which a prompt amortizes and a small batched
/// decode step does not (BM_BatchedDecode, 12 layers of 1.1B shapes, Q4_K:
/// 16 rows 94 ms there, 70 on the dot; 32 rows 139 / 140; 64 rows 206 / 286).
constexpr int64_t kKQuantGemmRows = 32;

/// Many rows on the integer GEMM tiles (gemm.cpp), x rounded to q8_K;
/// `gated` as gemmPackedInt's (SWIGLU fused).
void gemmKQuant(const IntKernels &k, const GemvArgs &a, const KQuantWeight &w,
                float *gated = nullptr);

/// out = x · Wᵀ (+ bias) for any number of rows.
void gemvKQuant(const GemvArgs &a, const KQuantWeight &w);

} // namespace llmc::cpu
