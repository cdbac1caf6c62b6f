//===- gemv_int.h - Integer-dot GEMV over i8 / i4 weights ------*- C++ -*-===//
//
// Decode with quantized weights as llama.cpp does it: the activations are
// quantized per block of 32 to int8 with one f32 scale (its q8_0), and each
// block's dot product with the weights runs on 8-bit integer multiplies
// (vpmaddubsw on AVX2, vpdpbusd with VNNI), scaled once per block. Weights
// are read from the plan as they are, once per step.
//
// The per-level panels live in gemv_int_<level>.cpp; this header is the
// only thing they include besides intrinsics (see isa.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace llmc::cpu {

constexpr int64_t kQuantBlock = 32;
/// How many weight rows ahead the panels prefetch.
constexpr int64_t kPrefetchRows = 4;

/// One integer GEMV: out[r][n] = sum_k x[r][k] * W[n][k] + bias[n], with x
/// given quantized.
struct IntGemv {
  const int8_t *xq;  // [rows][K]; for i4 each block holds its even columns
                     // first, then its odd ones (the nibble order)
  const float *xs;   // [rows][K / 4]: each block's scale, once per int32 lane
                     // of a vpdpbusd over the block (8 copies)
  const int32_t *xn; // i4 only: [rows][K / 4], -8 times the sum of each
                     // lane's four xq: the accumulator's start, since a
                     // nibble q is read as q + 8
  int64_t rows, K, N;
  const void *w;   // i8 [N][K] or i4 [N][K / 2]
  const float *ws; // [N][K / group]
  int64_t group;   // a multiple of 32
  const float *bias;
  float *out; // [rows][N]
};

/// Output columns [n0, n1) of rows [r0, r0 + R), R <= 4.
using IntPanel = void (*)(const IntGemv &, int64_t n0, int64_t n1, int64_t r0,
                          int64_t R);

struct IntKernels {
  IntPanel q8, q4;
};

IntKernels intKernelsAvx2();
IntKernels intKernelsAvxVnni();
IntKernels intKernelsAvx512();

/// bf16 weights against activations rounded to bf16 (vdpbf16ps).
struct Bf16Gemv {
  const uint16_t *x; // [rows][K] bf16
  int64_t rows, K, N;
  const uint16_t *w; // [N][K]
  const float *bias;
  float *out;
};
using Bf16Panel = void (*)(const Bf16Gemv &, int64_t n0, int64_t n1, int64_t r0,
                           int64_t R);
Bf16Panel bf16PanelAvx512();

} // namespace llmc::cpu
