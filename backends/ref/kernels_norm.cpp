//===- kernels_norm.cpp - RMSNorm, fused add + RMSNorm, LayerNorm
//----------===//
//
// Statistics are accumulated in f32, as PyTorch does for f32 tensors.
//
//===----------------------------------------------------------------------===//
#include "ref.h"

#include "common/op_checks.h"

#include <cmath>

namespace llmc::ref {
namespace {

// out = x / sqrt(mean(x^2) + eps) * w. out may be x.
void rmsnorm(float *out, const float *x, const float *w, int64_t n, float eps) {
  float ss = 0.0f;
  for (int64_t i = 0; i < n; ++i)
    ss += x[i] * x[i];
  float inv = 1.0f / std::sqrt(ss / float(n) + eps);
  for (int64_t i = 0; i < n; ++i)
    out[i] = x[i] * inv * w[i];
}

// out = (x - mean) / sqrt(var + eps) * w + b, with the biased variance
// (torch.nn.LayerNorm). out may be x.
void layernorm(float *out, const float *x, const float *w, const float *b,
               int64_t n, float eps) {
  float mean = 0.0f;
  for (int64_t i = 0; i < n; ++i)
    mean += x[i];
  mean /= float(n);
  float var = 0.0f;
  for (int64_t i = 0; i < n; ++i)
    var += (x[i] - mean) * (x[i] - mean);
  var /= float(n);
  float inv = 1.0f / std::sqrt(var + eps);
  for (int64_t i = 0; i < n; ++i)
    out[i] = (x[i] - mean) * inv * w[i] + b[i];
}

std::vector<float> loadVector(const llmc_weight_desc &w, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  loadWeight(w, 0, n, v.data());
  return v;
}

} // namespace

// RMS_NORM. in: x, w. f0 = eps, i0 = width (0: the row).
void runRmsNorm(const llmc_op_desc &op, Step &step) {
  Matrix x = step.operand(op, 0), out = step.result(op, 0);
  expectRows(out, x.rows, "the result");
  const int64_t n = common::rmsNormWidth(op, x.cols);
  std::vector<float> w = loadVector(step.weight(op, 1), n);
  for (int64_t r = 0; r < x.rows; ++r)
    for (int64_t c = 0; c < x.cols; c += n)
      rmsnorm(out.row(r) + c, x.row(r) + c, w.data(), n, float(op.f[0]));
}

// ADD_RMS_NORM. in: x, r, w. out: sum = x + r, normed = rms_norm(sum) * w.
void runAddRmsNorm(const llmc_op_desc &op, Step &step) {
  Matrix x = step.operand(op, 0), res = step.operand(op, 1);
  Matrix sum = step.result(op, 0), out = step.result(op, 1);
  expectRows(res, x.rows, "the residual");
  expectRows(sum, x.rows, "the sum");
  expectRows(out, x.rows, "the normed result");
  std::vector<float> w = loadVector(step.weight(op, 2), x.cols);
  for (int64_t r = 0; r < x.rows; ++r) {
    for (int64_t i = 0; i < x.cols; ++i)
      sum.row(r)[i] = x.row(r)[i] + res.row(r)[i];
    rmsnorm(out.row(r), sum.row(r), w.data(), x.cols, float(op.f[0]));
  }
}

// LAYER_NORM. in: x, w, b. f0 = eps.
void runLayerNorm(const llmc_op_desc &op, Step &step) {
  Matrix x = step.operand(op, 0), out = step.result(op, 0);
  expectRows(out, x.rows, "the result");
  std::vector<float> w = loadVector(step.weight(op, 1), x.cols);
  std::vector<float> b = loadVector(step.weight(op, 2), x.cols);
  for (int64_t r = 0; r < x.rows; ++r)
    layernorm(out.row(r), x.row(r), w.data(), b.data(), x.cols, float(op.f[0]));
}

} // namespace llmc::ref
