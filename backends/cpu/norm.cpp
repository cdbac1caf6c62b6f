//===- norm.cpp - RMSNorm, fused add + RMSNorm, LayerNorm -----------------===//
//
// Statistics in f32 over 8 lanes; weights were converted to f32 at prepare.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"
#include "simd.h"

#include "common/op_checks.h"

#include <cmath>

namespace llmc::cpu {
namespace {

constexpr int64_t kParallelValues = 1 << 15;

float sumSquares(const float *x, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    a0 = _mm256_fmadd_ps(v0, v0, a0);
    a1 = _mm256_fmadd_ps(v1, v1, a1);
  }
  float s = simd::hsum(_mm256_add_ps(a0, a1));
  for (; i < n; ++i)
    s += x[i] * x[i];
  return s;
}

void scaleBy(float *out, const float *x, const float *w, float inv, int64_t n) {
  __m256 vi = _mm256_set1_ps(inv);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vi),
                                   _mm256_loadu_ps(w + i)));
  for (; i < n; ++i)
    out[i] = x[i] * inv * w[i];
}

void rmsnorm(float *out, const float *x, const float *w, int64_t n, float eps) {
  float inv = 1.0f / std::sqrt(sumSquares(x, n) / float(n) + eps);
  scaleBy(out, x, w, inv, n);
}

void layernorm(float *out, const float *x, const float *w, const float *b,
               int64_t n, float eps) {
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    acc = _mm256_add_ps(acc, _mm256_loadu_ps(x + i));
  float mean = simd::hsum(acc);
  for (; i < n; ++i)
    mean += x[i];
  mean /= float(n);
  __m256 vm = _mm256_set1_ps(mean);
  acc = _mm256_setzero_ps();
  for (i = 0; i + 8 <= n; i += 8) {
    __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), vm);
    acc = _mm256_fmadd_ps(d, d, acc);
  }
  float var = simd::hsum(acc);
  for (; i < n; ++i)
    var += (x[i] - mean) * (x[i] - mean);
  var /= float(n);
  float inv = 1.0f / std::sqrt(var + eps);
  __m256 vi = _mm256_set1_ps(inv);
  for (i = 0; i + 8 <= n; i += 8) {
    __m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), vi);
    _mm256_storeu_ps(out + i, _mm256_fmadd_ps(d, _mm256_loadu_ps(w + i),
                                              _mm256_loadu_ps(b + i)));
  }
  for (; i < n; ++i)
    out[i] = (x[i] - mean) * inv * w[i] + b[i];
}

} // namespace

Kernel makeNorm(const llmc_op_desc &op, const Graph &g, Backend &) {
  int64_t n = g.buffers[op.operands[0].index].cols;
  float eps = float(op.f[0]);
  if (op.kind == LLMC_OP_RMS_NORM) {
    const int64_t width = common::rmsNormWidth(op, n);
    auto w = std::make_shared<std::vector<float>>(
        toF32(g.weights[op.operands[1].index], width));
    return [op, w, eps, width](Step &step) {
      Matrix x = step.operand(op, 0), out = step.result(op, 0);
      expectRows(out, x.rows, "the result");
#pragma omp parallel for if (x.rows * x.cols >= kParallelValues)
      for (int64_t r = 0; r < x.rows; ++r)
        for (int64_t c = 0; c < x.cols; c += width)
          rmsnorm(out.row(r) + c, x.row(r) + c, w->data(), width, eps);
    };
  }
  if (op.kind == LLMC_OP_ADD_RMS_NORM) {
    auto w = std::make_shared<std::vector<float>>(
        toF32(g.weights[op.operands[2].index], n));
    return [op, w, eps](Step &step) {
      Matrix x = step.operand(op, 0), res = step.operand(op, 1);
      Matrix sum = step.result(op, 0), out = step.result(op, 1);
      expectRows(res, x.rows, "the residual");
      expectRows(sum, x.rows, "the sum");
      expectRows(out, x.rows, "the normed result");
#pragma omp parallel for if (x.rows * x.cols >= kParallelValues)
      for (int64_t r = 0; r < x.rows; ++r) {
        const float *a = x.row(r), *b = res.row(r);
        float *s = sum.row(r);
        int64_t i = 0;
        for (; i + 8 <= x.cols; i += 8)
          _mm256_storeu_ps(s + i, _mm256_add_ps(_mm256_loadu_ps(a + i),
                                                _mm256_loadu_ps(b + i)));
        for (; i < x.cols; ++i)
          s[i] = a[i] + b[i];
        rmsnorm(out.row(r), s, w->data(), x.cols, eps);
      }
    };
  }
  auto w = std::make_shared<std::vector<float>>(
      toF32(g.weights[op.operands[1].index], n));
  auto b = std::make_shared<std::vector<float>>(
      toF32(g.weights[op.operands[2].index], n));
  return [op, w, b, eps](Step &step) {
    Matrix x = step.operand(op, 0), out = step.result(op, 0);
    expectRows(out, x.rows, "the result");
#pragma omp parallel for if (x.rows * x.cols >= kParallelValues)
    for (int64_t r = 0; r < x.rows; ++r)
      layernorm(out.row(r), x.row(r), w->data(), b->data(), x.cols, eps);
  };
}

} // namespace llmc::cpu
