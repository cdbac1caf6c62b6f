//===- kernels_rope.cpp - Rotary position embedding
//------------------------===//
//
// Matches Hugging Face: the angle is float(pos) * inv_freq[i] in f32, cos and
// sin are taken in f32 and multiplied by the attention scaling, then
// out = x * cos + rotate(x) * sin.
//
//===----------------------------------------------------------------------===//
#include "common/step.h"
#include "ref.h"

#include <algorithm>
#include <cmath>

namespace llmc::ref {
namespace {

enum Style { Half = 0, Interleaved = 1 };

// Rotates the first `rot` channels of one head; the rest pass through.
// "half" pairs channel i with i + rot/2 (rotate_half); "interleaved" pairs
// 2i with 2i + 1 (GPT-J, Meta's original Llama).
void rope(float *out, const float *x, int64_t headDim, int64_t rot,
          int64_t style, int32_t pos, const float *invFreq, float scaling) {
  for (int64_t c = rot; c < headDim; ++c)
    out[c] = x[c];
  for (int64_t i = 0; i < rot / 2; ++i) {
    float angle = float(pos) * invFreq[i];
    float cos = std::cos(angle) * scaling;
    float sin = std::sin(angle) * scaling;
    int64_t a = style == Half ? i : 2 * i;
    int64_t b = style == Half ? i + rot / 2 : 2 * i + 1;
    float x1 = x[a], x2 = x[b];
    out[a] = x1 * cos - x2 * sin;
    out[b] = x2 * cos + x1 * sin;
  }
}

} // namespace

// ROPE. in: x, positions, inv_freq (and the long one when i4 > 0). i0
// heads, i1 head_dim, i2 rotary_dim, i3 style; f0 attention scaling.
void runRope(const llmc_op_desc &op, Step &step) {
  Matrix x = step.operand(op, 0), out = step.result(op, 0);
  const int32_t *positions = step.input(op, 1);
  int64_t heads = op.i[0], headDim = op.i[1], rot = op.i[2];
  expectRows(x, step.args.num_tokens, "x");
  expectRows(out, x.rows, "the result");
  std::vector<float> invFreq(size_t(rot / 2)), longFreq;
  loadWeight(step.weight(op, 2), 0, rot / 2, invFreq.data());
  std::vector<uint8_t> useLong;
  if (op.i[4] > 0) {
    longFreq.resize(size_t(rot / 2));
    loadWeight(step.weight(op, 3), 0, rot / 2, longFreq.data());
    useLong = common::longRopeTokens(step.args);
  }

  std::vector<float> row(size_t(x.cols)); // out may be x
  for (int64_t t = 0; t < x.rows; ++t) {
    std::copy(x.row(t), x.row(t) + x.cols, row.begin());
    const float *table = !useLong.empty() && useLong[size_t(t)]
                             ? longFreq.data()
                             : invFreq.data();
    for (int64_t h = 0; h < heads; ++h)
      rope(out.row(t) + h * headDim, row.data() + h * headDim, headDim, rot,
           op.i[3], positions[t], table, float(op.f[0]));
  }
}

} // namespace llmc::ref
