//===- kquant_dot.h - K-quant dot products per ISA level --------*- C++ -*-===//
//
// One weight row's super-blocks (kquant.h: header and codes) against up to
// four rows of q8_K activations. gemv_kquant.cpp builds them for AVX2,
// gemv_kquant_avx512.cpp for AVX-512 BW (512-bit vpmaddubsw); like every
// level file (isa.h) this header includes nothing but integer types.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace llmc::cpu {

/// One block of 256 activations as int8 with one scale (x ~ d * q) and
/// the sums of each 16 q: llama.cpp's q8_K.
struct Q8K {
  float d;
  int16_t bsums[16];
  int8_t q[256];
};

/// res[r] = W row (headers, codes: `blocks` super-blocks) · x row r, for
/// R <= KQuantDots::maxRows rows of q8_K blocks, row r at x + r * ldx, in
/// KQuantGemm's arithmetic (gemv_int.h): the same bits as the GEMM tiles.
using KQuantDot = void (*)(const uint8_t *headers, const uint8_t *codes,
                           int64_t blocks, const Q8K *x, int64_t ldx, int64_t R,
                           float *res);

/// Where q8_K value k (0..255) is stored: in the natural order at k; in the
/// paired order each 128 values hold [0-31, 64-95, 32-63, 96-127], so that
/// 64 bytes of Q4_K / Q5_K codes (low nibbles: sub-blocks 0 and 2, high
/// nibbles: 1 and 3) meet their activations without a shuffle. bsums stay
/// in the natural order.
constexpr int q8kIndex(int k, bool paired) {
  const int quarter = (k % 128) / 32;
  return !paired || quarter == 0 || quarter == 3
             ? k
             : k + (quarter == 1 ? 32 : -32);
}

/// Indexed by kquant::Format (Q4_K, Q5_K, Q6_K).
struct KQuantDots {
  KQuantDot dot[3];
  bool pairedX[3]; // the dot reads q8_K in the paired order
  int64_t maxRows; // rows one call takes (the registers a level has)
};

/// f(Rows<R>{}) for the runtime R in 1..Max: a level's kernels take the
/// row count as a template argument. (Each level file instantiates it with
/// its own lambda: nothing built for one level is shared with another.)
template <int N> struct Rows { static constexpr int value = N; };
template <int Max, typename F> inline void withRows(int64_t R, const F &f) {
  if constexpr (Max > 1)
    if (R < Max)
      return withRows<Max - 1>(R, f);
  f(Rows<Max>{});
}

KQuantDots kquantDotsAvx2();
KQuantDots kquantDotsAvx512();

} // namespace llmc::cpu
