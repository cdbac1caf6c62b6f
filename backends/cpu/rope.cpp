//===- rope.cpp - Rotary position embedding -------------------------------===//
//
// cos and sin depend only on (position, frequency), so they are computed
// once per token (in f32 with libm, as ref and Hugging Face do) and applied
// to every head. A step's rope ops (q and k of every layer) share its
// positions and, nearly always, one frequency table: the table of a step
// is kept by the thread running it and reused while they stay the same
// (24 ropes of a 512-token prompt computed 24 times 16k sin/cos pairs).
//
//===----------------------------------------------------------------------===//
#include "common/step.h"
#include "cpu.h"

#include <immintrin.h>

#include <cmath>
#include <cstring>

namespace llmc::cpu {
namespace {

/// cos and sin (times the scaling) of every token's angles: token t's
/// pairs cos at cs[t * 2 * pairs], sin after them.
struct RopeTable {
  std::vector<int32_t> positions;
  std::vector<float> freq, longFreq;
  std::vector<uint8_t> useLong;
  float scaling = 0;
  std::vector<float> cs;

  bool matches(const int32_t *pos, int64_t T, const std::vector<float> &f,
               const std::vector<float> &lf, const std::vector<uint8_t> &ul,
               float s) const {
    return s == scaling && int64_t(positions.size()) == T &&
           std::memcmp(positions.data(), pos, size_t(T) * 4) == 0 &&
           f == freq && lf == longFreq && ul == useLong;
  }
};

} // namespace

Kernel makeRope(const llmc_op_desc &op, const Graph &g, Backend &) {
  int64_t rot = op.i[2];
  auto invFreq = std::make_shared<std::vector<float>>(
      toF32(g.weights[op.operands[2].index], rot / 2));
  // LongRoPE: the long table, for the sequences the step marks long.
  auto longFreq = std::make_shared<std::vector<float>>(
      op.i[4] > 0 ? toF32(g.weights[op.operands[3].index], rot / 2)
                  : std::vector<float>());
  return [op, invFreq, longFreq](Step &step) {
    const std::vector<uint8_t> useLong =
        longFreq->empty() ? std::vector<uint8_t>()
                          : common::longRopeTokens(step.args);
    Matrix x = step.operand(op, 0), out = step.result(op, 0);
    const int32_t *positions = step.input(op, 1);
    int64_t heads = op.i[0], headDim = op.i[1], rot = op.i[2];
    bool half = op.i[3] == 0;
    float scaling = float(op.f[0]);
    expectRows(x, step.args.num_tokens, "x");
    expectRows(out, x.rows, "the result");
    const int64_t pairs = rot / 2, T = x.rows;
    thread_local RopeTable table;
    const bool fresh =
        !table.matches(positions, T, *invFreq, *longFreq, useLong, scaling);
    if (fresh) {
      table.positions.assign(positions, positions + T);
      table.freq = *invFreq;
      table.longFreq = *longFreq;
      table.useLong = useLong;
      table.scaling = scaling;
      table.cs.resize(size_t(T * 2 * pairs));
    }
    RopeTable &tab = table; // the team reads the calling thread's table
#pragma omp parallel if (x.rows * x.cols >= (1 << 15))
    {
      if (fresh) {
#pragma omp for schedule(static)
        for (int64_t t = 0; t < T; ++t) {
          const std::vector<float> &f =
              !useLong.empty() && useLong[size_t(t)] ? *longFreq : *invFreq;
          float *cs = &tab.cs[size_t(t * 2 * pairs)];
          for (int64_t i = 0; i < pairs; ++i) {
            float angle = float(positions[t]) * f[size_t(i)];
            cs[i] = std::cos(angle) * scaling;
            cs[pairs + i] = std::sin(angle) * scaling;
          }
        }
      }
#pragma omp for schedule(static)
      for (int64_t t = 0; t < T; ++t) {
        const float *cs = &tab.cs[size_t(t * 2 * pairs)];
        for (int64_t h = 0; h < heads; ++h) {
          const float *xi = x.row(t) + h * headDim;
          float *o = out.row(t) + h * headDim;
          // Reads of a pair precede its writes, so out may be x.
          int64_t i = 0;
          if (half)
            for (; i + 8 <= pairs; i += 8) {
              const __m256 c = _mm256_loadu_ps(cs + i),
                           s = _mm256_loadu_ps(cs + pairs + i);
              const __m256 x1 = _mm256_loadu_ps(xi + i),
                           x2 = _mm256_loadu_ps(xi + pairs + i);
              _mm256_storeu_ps(o + i, _mm256_sub_ps(_mm256_mul_ps(x1, c),
                                                    _mm256_mul_ps(x2, s)));
              _mm256_storeu_ps(
                  o + pairs + i,
                  _mm256_add_ps(_mm256_mul_ps(x2, c), _mm256_mul_ps(x1, s)));
            }
          for (; i < pairs; ++i) {
            int64_t a = half ? i : 2 * i, b = half ? i + pairs : 2 * i + 1;
            float c = cs[i], s = cs[pairs + i];
            float x1 = xi[a], x2 = xi[b];
            o[a] = x1 * c - x2 * s;
            o[b] = x2 * c + x1 * s;
          }
          if (o != xi)
            for (int64_t c = rot; c < headDim; ++c)
              o[c] = xi[c];
        }
      }
    }
  };
}

} // namespace llmc::cpu
