//===- moe.h - Routing tokens to experts, shared by the host backends -*- C++
//-*-===//
//
// MOE_GATING's arithmetic (ref and cpu run the same code: a step routes
// T x E logits, nothing next to the experts' GEMMs) and the grouping of a
// step's (token, run) pairs by expert that the expert kernels need. Any
// thread may call these; they keep no state.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace llmc::common {

/// One row of MOE_GATING: the k experts of `logits` [E] and their weights,
/// in descending order, ties to the lower index. mode 0: softmax over all,
/// top k, divided by their sum when `renormalize`; mode 1: top k of the
/// logits, softmax over them. In f32, as the references compute it.
void routeTopK(const float *logits, int64_t E, int64_t k, bool renormalize,
               int64_t mode, float *weights, int32_t *experts);

/// A step's (token, run) pairs grouped by expert: the pairs of expert e are
/// pairs[begin[e] .. begin[e + 1]), in token order. Throws InvalidArgument
/// naming the row for an id outside [0, E).
struct ExpertGroups {
  std::vector<int64_t> begin; // [E + 1]
  std::vector<int32_t> pairs; // t * k + j
};
ExpertGroups groupByExpert(const int32_t *experts, int64_t rows, int64_t k,
                           int64_t E);

/// gpt-oss's gated unit (SWIGLU i0 = 2): g = min(gate, limit), u =
/// clamp(up, -limit, limit), (u + 1) * g * sigmoid(alpha * g), as
/// transformers' GptOssExperts computes it.
inline float clampedSwiglu(float gate, float up, float limit, float alpha) {
  const float g = std::fmin(gate, limit);
  const float u = std::fmax(std::fmin(up, limit), -limit);
  return (u + 1.0f) * (g / (1.0f + std::exp(-(g * alpha))));
}

/// experts[t][j] as an id, checked to be in [0, E).
int32_t expertAt(const int32_t *experts, int64_t k, int64_t t, int64_t j,
                 int64_t E);

} // namespace llmc::common
