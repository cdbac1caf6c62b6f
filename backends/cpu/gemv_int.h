//===- gemv_int.h - The integer and f32 GEMM tiles of each level -*- C++
//-*-===//
//
// Quantized weights as llama.cpp runs them: the activations are quantized
// per block of 32 to int8 with one f32 scale (its q8_0), and each block's
// dot product with the weights runs on 8-bit integer multiplies
// (vpmaddubsw on AVX2, vpdpbusd with VNNI), scaled once per block, on
// register-blocked tiles over weight panels packed once (every row count:
// one decode token to a prompt).
//
// The per-level tiles live in gemm_<kind>_<level>.cpp; this header is the
// only thing they include besides intrinsics (see isa.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace llmc::cpu {

constexpr int64_t kQuantBlock = 32;

/// The weight formats of the integer tiles: i8, i4, MXFP4, and a K-quant
/// weight's codes as unsigned bytes (gemm.cpp packs them per call).
enum IntFormat : int { kI8 = 0, kI4 = 1, kMx = 2, kKq = 3 };
/// How many weight rows ahead the row-major GEMVs prefetch.
constexpr int64_t kPrefetchRows = 4;

/// 2^(e - 128) for every E8M0 byte e: the scale of a block whose codes are
/// read as doubled values (gemv_int.cpp, baseline build).
const float *e8m0HalfTable();

/// The doubled E2M1 values by code, as a byte table for vpshufb.
constexpr int8_t kMxfp4Doubled[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                      0, -1, -2, -3, -4, -6, -8, -12};
/// What packed MXFP4 tiles add to a doubled value to make it unsigned
/// (0..24: vpmaddubsw's pair sums stay far from saturating).
constexpr int32_t kMxfp4Offset = 12;

/// 32 floats to int8 at q (round to nearest of x * 127 / max |x|), their
/// sum at *sum; returns the scale (gemv_int.cpp, baseline build).
float quantizeBlockInt8(const float *x, int8_t *q, int32_t *sum);

/// A register-blocked GEMM over one panel of kTileN output columns at a
/// time: each group of 4 consecutive columns of K ("quad") holds kTileN
/// 4-byte runs, one per output column, so one vpdpbusd against a broadcast
/// quad of x yields 16 columns at once and no horizontal sums are needed.
constexpr int64_t kTileN = 32;

struct IntGemm {
  const int8_t *xq;  // [rows][ldx]: this block of K, natural column order
  const float *xs;   // [rows][ldx / 32]: each block of 32's scale
  const int32_t *xc; // [rows][ldx / 32]: each block of 32's accumulator
                     // start, -offset times its sum of xq (see IntKernels)
  int64_t ldx, rows, K;
  const uint8_t *w;  // [K / 4][kTileN][4] unsigned: weight + offset (the
                     // t4Nibbles tile: [K / 8][kTileN][4], two quads a byte)
  const float *ws;   // [groups][kTileN], 0 past the last column
  int64_t groups;    // weight scale groups in this block (1: per row)
  const float *bias; // the panel's first column, or null
  float *out;        // row 0, the panel's first column
  int64_t ldo, cols; // output row stride, columns to write (<= kTileN)
  bool accumulate;   // add to what out holds (a later block of K; no bias)
  // The tMx tile: w holds MXFP4 codes as t4Nibbles' nibbles, these their
  // E8M0 scales ([groups][kTileN]) in place of ws.
  const uint8_t *we = nullptr;
};
using IntTile = void (*)(const IntGemm &);

/// Q4_K / Q5_K / Q6_K weights (kquant.h) against x rounded to q8_K, in the
/// dots' arithmetic (kquant_dot.h): per super-block of 256 an exact int32
/// sum of each sub-block's codes · x times its integer scale (Q6_K's codes
/// stand for code - 32: each accumulator of 16 starts at -32 times its sum
/// of x) and, for Q4_K / Q5_K, of each min times its 32 x's sum; then
/// f = fma(float(isum), d dx, f) and f = f - float(msum) (dmin dx), super-
/// block by super-block. A row's result is the same bits at any batch.
struct KQuantGemm {
  const int8_t *xq;  // [rows][K], q8_K's values in the natural order
  const float *xd;   // [rows][K / 256]: each super-block's q8_K scale
  const int32_t *xc; // Q6_K: [rows][K / 16], each accumulator's start
  const int32_t *xb; // Q4_K / Q5_K: [rows][K / 256][4], the sums of x per
                     // 32 as int16 pairs (sub-blocks 2p low, 2p + 1 high)
  int64_t rows, K;
  const uint8_t *w;      // [K / 4][kTileN][4] codes (IntGemm's layout)
  const int32_t *ws;     // [K / block][kTileN] sub-block scales
  const float *wd, *wdm; // [K / 256][kTileN] d and dmin
  const int32_t *wm;     // Q4_K / Q5_K: [K / 256][4][kTileN] mins, int16
                         // pairs as xb's
  int64_t block;         // 32 (Q4_K, Q5_K) or 16 (Q6_K)
  const float *bias;     // the panel's first column, or null
  float *out;            // row 0, the panel's first column
  int64_t ldo, cols;     // output row stride, columns to write
};
using KQuantTile = void (*)(const KQuantGemm &);

struct IntKernels {
  IntTile t8, t4; // bytes: i8 + q8Offset; i4 + 8, MXFP4 + kMxfp4Offset widened
  // What the GEMM adds to an i8 weight to make it unsigned: 128 for
  // vpdpbusd; 0 on plain AVX2, whose tile multiplies |w| by x carrying w's
  // sign instead (128 * 127 * 2 would saturate vpmaddubsw). i4 weights
  // always get 8.
  int32_t q8Offset;
  IntTile t4Nibbles; // i4 kept at two per byte (PackedIntWeight)
  KQuantTile tkq;
  IntTile tMx; // MXFP4 codes kept at two per byte (PackedIntWeight)
};

IntKernels intKernelsAvx2();
IntKernels intKernelsAvxVnni();
IntKernels intKernelsAvx512();
void intTileAvx512(const IntGemm &g); // gemm_int_avx512.cpp
void intTileNibblesAvx512(const IntGemm &g);
void intTileMxfp4Avx512(const IntGemm &g);
void kquantTileAvx512(const KQuantGemm &g); // gemm_kquant_avx512.cpp

/// Rows of f32 x against a panel of f32 (or widened bf16 / f16) weights: a
/// panel holds, for each column of a block of K, its kTileN weights in a row. x
/// is packed too, in tiles of kF32TileRows rows (zero padded) whose K
/// columns each hold the tile's rows in a row, so each k's broadcasts come
/// from one cache line.
constexpr int64_t kF32TileRows = 6;
/// What an F32Gemm's weights hold: f32, or bf16 / f16 the tile widens in
/// registers as it reads them. bf16 panels hold no denormals (packFloatWeight
/// flushes them to +0, as every widening pack does, so all give the same
/// bits): the widening is a shift.
enum class PanelType : uint8_t { F32, Bf16, F16 };
struct F32Gemm {
  const float *x; // this block of K: [rows / kF32TileRows][K][kF32TileRows]
  int64_t rows, K;
  const void *w; // [K][ldw] of `type`: the panel's kTileN columns first
  int64_t ldw;
  const float *bias; // the panel's first column, or null
  float *out;        // row 0, the panel's first column
  int64_t ldo, cols;
  bool accumulate; // add to what out holds (a later block of K; no bias)
  PanelType type = PanelType::F32;
};
using F32Tile = void (*)(const F32Gemm &);

/// Rows of bf16 x against one panel of bf16 weights in pairs of K, on
/// vdpbf16ps (AVX512-BF16): what llama.cpp computes for bf16 weights.
struct Bf16Gemm {
  const uint16_t *x; // [rows][K] bf16 (rounded to nearest even)
  int64_t rows, K;   // K even
  const uint16_t *w; // [K / 2][kTileN][2]: column c's pair k, k + 1
  const float *bias; // the panel's first column, or null
  float *out;        // row 0, the panel's first column
  int64_t ldo, cols; // output row stride, columns to write (<= kTileN)
};
using Bf16Tile = void (*)(const Bf16Gemm &);
void bf16TileAvx512(const Bf16Gemm &g); // gemm_bf16_avx512.cpp
void f32TileAvx512(const F32Gemm &g);   // gemm_f32_avx512.cpp
void f32TileAvx2(const F32Gemm &g);     // gemm_f32_avx2.cpp

} // namespace llmc::cpu
