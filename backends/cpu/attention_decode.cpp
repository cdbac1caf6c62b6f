//===- attention_decode.cpp - One new token per sequence ------------------===//
//
// Work items are (sequence, kv head) with all query heads of the group
// together. When there are fewer items than threads and the context is
// long, each item's keys are split across threads (split-K) and the partial
// softmax states merged, so a single-sequence decode still uses every core.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"

#include <algorithm>
#include <cmath>

namespace llmc::cpu {

Kernel makeDecodeAttention(const llmc_op_desc &op, const Graph &g,
                           Backend &backend) {
  const RowKernels *rows = backend.rows;
  auto sinks = std::make_shared<std::vector<float>>(attentionSinks(op, g));
  return [op, rows, sinks](Step &step) {
    AttentionShape s = common::expectAttentionStep(op, step, true);
    s.sinks = sinks->empty() ? nullptr : sinks->data();
    Matrix q = step.operand(op, 0), out = step.result(op, 0);
    const int32_t *lens = step.args.context_lens;
    int64_t B = step.args.num_seqs, G = s.heads / s.kvHeads, D = s.headDim;
    int64_t items = B * s.kvHeads;
    int64_t threads = ompThreads();
    int64_t maxLen = *std::max_element(lens, lens + B);

    // Each split handles at least 256 keys, or merging costs more than it
    // saves.
    int64_t splits = 1;
    if (items < threads)
      splits = std::clamp<int64_t>((threads + items - 1) / items, 1,
                                   std::max<int64_t>(1, maxLen / 256));
    if (splits == 1) {
#pragma omp parallel for schedule(dynamic, 1) if (items > 1)
      for (int64_t w = 0; w < items; ++w) {
        int64_t b = w / s.kvHeads;
        attendTile(s, step, q, out, b, b, 1, lens[b], w % s.kvHeads, 0, lens[b],
                   nullptr, nullptr, rows);
      }
      return;
    }

    int64_t n = items * splits;
    std::vector<float> m(size_t(n * G)), l(size_t(n * G)),
        acc(size_t(n * G * D));
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t w = 0; w < n; ++w) {
      int64_t item = w / splits, part = w % splits;
      int64_t b = item / s.kvHeads, len = lens[b];
      int64_t per = (len + splits - 1) / splits;
      int64_t lo = std::min(len, part * per), hi = std::min(len, lo + per);
      AttentionPart p{&m[size_t(w * G)], &l[size_t(w * G)],
                      &acc[size_t(w * G * D)]};
      attendTile(s, step, q, out, b, b, 1, len, item % s.kvHeads, lo, hi, &p,
                 nullptr, rows);
    }
    for (int64_t item = 0; item < items; ++item) {
      int64_t b = item / s.kvHeads, kv = item % s.kvHeads;
      for (int64_t g = 0; g < G; ++g) {
        float mx = -INFINITY;
        for (int64_t p = 0; p < splits; ++p)
          mx = std::max(mx, m[size_t((item * splits + p) * G + g)]);
        float *o = out.row(b) + (kv * G + g) * D;
        float sum = 0.0f;
        for (int64_t d = 0; d < D; ++d)
          o[d] = 0.0f;
        for (int64_t p = 0; p < splits; ++p) {
          size_t idx = size_t((item * splits + p) * G + g);
          if (m[idx] == -INFINITY)
            continue;
          float w = std::exp(m[idx] - mx);
          sum += l[idx] * w;
          const float *a = &acc[idx * size_t(D)];
          for (int64_t d = 0; d < D; ++d)
            o[d] += a[d] * w;
        }
        if (s.sinks)
          sum += std::exp(s.sinks[kv * G + g] - mx);
        float inv = sum > 0 ? 1.0f / sum : 0.0f;
        for (int64_t d = 0; d < D; ++d)
          o[d] *= inv;
      }
    }
  };
}

} // namespace llmc::cpu
