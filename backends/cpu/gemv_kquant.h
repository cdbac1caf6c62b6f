//===- gemv_kquant.h - Q4_K / Q5_K / Q6_K linears ---------------*- C++ -*-===//
//
// Weights in ggml's K-quant super-blocks, read as the plan holds them
// (llmc/support/kquant.h). Any thread may call; the calls open a parallel
// region unless made from inside one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "cpu.h"

#include "llmc/support/kquant.h"

namespace llmc::cpu {

/// One block of 256 activations as int8 with one scale (x ~ d * q) and
/// the sums of each 16 q: llama.cpp's q8_K.
struct Q8K {
  float d;
  int16_t bsums[16];
  int8_t q[kquant::kBlock];
};

/// x [K] (K a multiple of 256) as K / 256 blocks.
void quantizeQ8K(const float *x, int64_t K, Q8K *out);

struct KQuantWeight {
  kquant::Format format;
  const uint8_t *codes;   // [N][K / 256 * code bytes]
  const uint8_t *headers; // [N][K / 256 * header bytes]
  bool int8Activations;   // op i2: x may be rounded to q8_K
};

/// res[r] = W row (header, codes) · x row r for R <= 4 rows of q8_K blocks,
/// row r at x + r * ldx.
void dotKQuant(kquant::Format f, const uint8_t *header, const uint8_t *codes,
               int64_t K, const Q8K *x, int64_t ldx, int64_t R, float *res);

/// out = x · Wᵀ (+ bias) for any number of rows.
void gemvKQuant(const GemvArgs &a, const KQuantWeight &w);

} // namespace llmc::cpu
