//===- kernels_linear.cpp - x · Wᵀ + b over float and quantized weights
//----===//
//
// Each row of W is expanded to f32 once (w = q * scale[n][k / group] for the
// integer types, ggml's own decoding for the K-quants) and dotted with every
// row of x, which stays f32. That is the whole kernel: the quantized formats
// are only storage.
//
//===----------------------------------------------------------------------===//
#include "ref.h"

#include "common/mxfp4.h"
#include "common/op_checks.h"

#include <cstring>

namespace llmc::ref {
namespace {

enum Slot {
  X = common::LinearX,
  W = common::LinearW,
  Scales = common::LinearScales,
  Bias = common::LinearBias
};

} // namespace

// Row n of an i8 [N, K] or i4 / MXFP4 [N, K/2] weight, dequantized (the
// scales already floats: MXFP4's E8M0 bytes as loadWeight widens them).
static void dequantRow(const llmc_weight_desc &w, const float *scales,
                       int64_t n, int64_t K, int64_t group, float *out) {
  const auto *bytes = static_cast<const uint8_t *>(w.data);
  const float *scale = scales + n * (K / group);
  for (int64_t k = 0; k < K; ++k) {
    int q;
    if (w.dtype == LLMC_I8) {
      q = int8_t(bytes[n * K + k]);
    } else if (w.dtype == LLMC_MXFP4) {
      uint8_t byte = bytes[n * (K / 2) + k / 2];
      out[k] = common::e2m1ToFloat(k % 2 == 0 ? byte & 0xf : byte >> 4) *
               scale[k / group];
      continue;
    } else {
      // Two's-complement nibbles, the even column in the low one.
      uint8_t byte = bytes[n * (K / 2) + k / 2];
      int nibble = k % 2 == 0 ? byte & 0xf : byte >> 4;
      q = nibble >= 8 ? nibble - 16 : nibble;
    }
    out[k] = float(q) * scale[k / group];
  }
}

WeightRows::WeightRows(const llmc_op_desc &op, Step &step)
    : w_(step.weight(op, W)), group_(op.i[0]) {
  if (common::isKQuant(w_.dtype)) {
    headers_ = &step.weight(op, Scales);
  } else if (common::isQuantized(w_.dtype)) {
    const llmc_weight_desc &s = step.weight(op, Scales);
    scales_.resize(size_t(weightElements(s)));
    loadWeight(s, 0, int64_t(scales_.size()), scales_.data());
  }
}

void WeightRows::row(int64_t n, int64_t K, float *out) const {
  if (headers_)
    common::kquantRow(w_, *headers_, n, K, out);
  else if (common::isQuantized(w_.dtype))
    dequantRow(w_, scales_.data(), n, K, group_, out);
  else
    loadWeight(w_, n * K, K, out);
}

float dot(const float *a, const float *b, int64_t n) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i)
    sum += a[i] * b[i];
  return sum;
}

// LINEAR: [0] x [rows, K], [1] W [N, K], [2] scales (i8/i4) or NONE,
// [3] bias [N] or NONE; i0 = group size. Trailing NONE slots may be left
// out of num_operands.
void runLinear(const llmc_op_desc &op, Step &step) {
  Matrix x = step.operand(op, X), out = step.result(op, 0);
  expectRows(out, x.rows, "the result");
  const WeightRows w(op, step);
  int64_t K = x.cols, N = out.cols;
  std::vector<float> bias(size_t(N), 0.0f);
  if (common::linearSlot(op, Bias).kind == LLMC_OPERAND_WEIGHT)
    loadWeight(step.weight(op, Bias), 0, N, bias.data());

  std::vector<float> wrow(static_cast<size_t>(K));
  for (int64_t n = 0; n < N; ++n) {
    w.row(n, K, wrow.data());
    for (int64_t r = 0; r < x.rows; ++r)
      out.row(r)[n] = dot(x.row(r), wrow.data(), K) + bias[size_t(n)];
  }
}

} // namespace llmc::ref
