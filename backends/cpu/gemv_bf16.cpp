//===- gemv_bf16.cpp - Small-row linear over bf16 and f16 weights ---------===//
//
// Weights widen to f32 in registers (a shift for bf16, F16C for f16) and
// multiply f32 activations, so the only rounding is the weights' own: this
// is exact where a bf16 x bf16 dot product would round the activations too,
// and it costs nothing at memory-bound speed.
//
//===----------------------------------------------------------------------===//
#include "gemv.h"

#include "llmc/support/half.h"

namespace llmc::cpu {
namespace {

struct Bf16Row {
  const uint16_t *w;
  __m256 vec(int64_t k) const { return simd::loadBf16(w + k); }
  float one(int64_t k) const {
    uint16_t h;
    std::memcpy(&h, w + k, 2);
    return bf16ToFloat(h);
  }
};

struct F16Row {
  const uint16_t *w;
  __m256 vec(int64_t k) const { return simd::loadF16(w + k); }
  float one(int64_t k) const {
    uint16_t h;
    std::memcpy(&h, w + k, 2);
    return f16ToFloat(h);
  }
};

} // namespace

void gemvBf16(const GemvArgs &a, const uint16_t *w) {
  gemvDriver(
      a,
      [&](int64_t n, const float *x, int64_t R, float *res) {
        dotAny(x, a.K, R, Bf16Row{w + n * a.K}, res);
      },
      WeightRows{w, a.K * 2});
}

void gemvF16(const GemvArgs &a, const uint16_t *w) {
  gemvDriver(
      a,
      [&](int64_t n, const float *x, int64_t R, float *res) {
        dotAny(x, a.K, R, F16Row{w + n * a.K}, res);
      },
      WeightRows{w, a.K * 2});
}

} // namespace llmc::cpu
