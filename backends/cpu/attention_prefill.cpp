//===- attention_prefill.cpp - Causal attention of a step's new tokens ----===//
//
// Work items are (sequence, kv head, tile of query rows); tiles near the end
// of a long prompt see more keys, so they are handed out dynamically.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"

#include <algorithm>

namespace llmc::cpu {

Kernel makePrefillAttention(const llmc_op_desc &op, const Graph &g,
                            Backend &backend) {
  auto sinks = std::make_shared<std::vector<float>>(attentionSinks(op, g));
  // The AVX2 tile works 3 rows by 16 columns at a time: on a head's few
  // columns it loses to attendTile's own two-row loop (measured).
  const F32Tile tile = backend.isa >= Isa::Avx512 ? backend.f32Tile : nullptr;
  return [op, tile, sinks](Step &step) {
    AttentionShape s = common::expectAttentionStep(op, step, false);
    s.sinks = sinks->empty() ? nullptr : sinks->data();
    Matrix q = step.operand(op, 0), out = step.result(op, 0);
    const int32_t *start = step.args.query_start;
    int64_t G = s.heads / s.kvHeads;
    // About 64 query vectors per tile share each converted chunk of keys.
    int64_t tileRows = std::max<int64_t>(1, 64 / G);

    struct Item {
      int64_t b, first, count, kvHead;
    };
    std::vector<Item> items;
    for (int64_t b = 0; b < step.args.num_seqs; ++b)
      for (int64_t r = start[b]; r < start[b + 1]; r += tileRows)
        for (int64_t kv = 0; kv < s.kvHeads; ++kv)
          items.push_back(
              {b, r, std::min<int64_t>(tileRows, start[b + 1] - r), kv});

    int64_t n = int64_t(items.size());
#pragma omp parallel for schedule(dynamic, 1) if (n > 1)
    for (int64_t w = 0; w < n; ++w) {
      const Item &it = items[size_t(w)];
      int32_t b = int32_t(it.b);
      // The tile's rows are the last of the sequence's new tokens shifted:
      // treat the tile as `count` rows ending at its own last position.
      int64_t seqEnd = start[b + 1];
      int64_t len =
          step.args.context_lens[b] - (seqEnd - (it.first + it.count));
      attendTile(s, step, q, out, b, it.first, it.count, len, it.kvHead, 0, len,
                 nullptr, tile);
    }
  };
}

} // namespace llmc::cpu
