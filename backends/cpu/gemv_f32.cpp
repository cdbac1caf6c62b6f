//===- gemv_f32.cpp - Small-row linear over f32 weights -------------------===//
#include "gemv.h"

namespace llmc::cpu {
namespace {

struct F32Row {
  const float *w;
  __m256 vec(int64_t k) const { return _mm256_loadu_ps(w + k); }
  float one(int64_t k) const {
    float v;
    std::memcpy(&v, w + k, 4);
    return v;
  }
};

} // namespace

void gemvF32(const GemvArgs &a, const float *w) {
  gemvDriver(
      a,
      [&](int64_t n, const float *x, int64_t R, float *res) {
        dotAny(x, a.K, R, F32Row{w + n * a.K}, res);
      },
      WeightRows{w, a.K * 4});
}

} // namespace llmc::cpu
