//===- gemv_mxfp4.cpp - Linear over MXFP4 weights, any shape --------------===//
//
// The path for shapes the integer-dot kernels do not take (gemv_int.h):
// each weight row is decoded to f32 (code * 2^(s - 127)) and dotted.
//
//===----------------------------------------------------------------------===//
#include "gemv_quant.h"

#include "common/mxfp4.h"

namespace llmc::cpu {

void gemvMxfp4(const GemvArgs &a, const uint8_t *w, const uint8_t *e8m0) {
  const int64_t K = a.K, blocks = K / 32;
  gemvDequantized(a, [&](int64_t n, float *row) {
    for (int64_t b = 0; b < blocks; ++b) {
      const float s = common::e8m0ToFloat(e8m0[n * blocks + b]);
      const uint8_t *q = w + n * (K / 2) + b * 16;
      for (int64_t j = 0; j < 16; ++j) {
        row[b * 32 + 2 * j] = common::e2m1ToFloat(q[j] & 0xf) * s;
        row[b * 32 + 2 * j + 1] = common::e2m1ToFloat(q[j] >> 4) * s;
      }
    }
  });
}

} // namespace llmc::cpu
