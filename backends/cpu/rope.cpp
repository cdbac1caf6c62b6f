//===- rope.cpp - Rotary position embedding -------------------------------===//
//
// cos and sin depend only on (position, frequency), so they are computed
// once per token (in f32 with libm, as ref and Hugging Face do) and applied
// to every head.
//
//===----------------------------------------------------------------------===//
#include "common/step.h"
#include "cpu.h"

#include <cmath>

namespace llmc::cpu {

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
    int64_t pairs = rot / 2;
#pragma omp parallel if (x.rows * x.cols >= (1 << 15))
    {
      std::vector<float> cs(size_t(2 * pairs));
#pragma omp for schedule(static)
      for (int64_t t = 0; t < x.rows; ++t) {
        const std::vector<float> &table =
            !useLong.empty() && useLong[size_t(t)] ? *longFreq : *invFreq;
        for (int64_t i = 0; i < pairs; ++i) {
          float angle = float(positions[t]) * table[size_t(i)];
          cs[size_t(i)] = std::cos(angle) * scaling;
          cs[size_t(pairs + i)] = std::sin(angle) * scaling;
        }
        for (int64_t h = 0; h < heads; ++h) {
          const float *xi = x.row(t) + h * headDim;
          float *o = out.row(t) + h * headDim;
          // Reads of a pair precede its writes, so out may be x.
          for (int64_t i = 0; i < pairs; ++i) {
            int64_t a = half ? i : 2 * i, b = half ? i + pairs : 2 * i + 1;
            float c = cs[size_t(i)], s = cs[size_t(pairs + i)];
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
