//===- attention.cpp - PREFILL_ATTENTION and DECODE_ATTENTION -------------===//
//
// One kernel for both ops, so a decode token computed in a mixed step's
// prefill graph is the token computed alone in the decode graph. Work items
// are (sequence, tile of query positions, kv head); tiles near the end of a
// long prompt see more keys, so they are handed out dynamically. A single
// sequence's decode runs one item per kv head: splitting its keys across
// threads would merge partial softmax states in an order a batched step
// does not share.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"

#include <algorithm>

namespace llmc::cpu {
namespace {

Kernel makeAttention(const llmc_op_desc &op, const Graph &g, Backend &backend,
                     bool decode) {
  auto sinks = std::make_shared<std::vector<float>>(attentionSinks(op, g));
  const RowKernels *rows = backend.rows;
  return [op, rows, sinks, decode](Step &step) {
    AttentionShape s = common::expectAttentionStep(op, step, decode);
    s.sinks = sinks->empty() ? nullptr : sinks->data();
    Matrix q = step.operand(op, 0), out = step.result(op, 0);
    const int32_t *start = step.args.query_start;
    const int64_t G = s.heads / s.kvHeads;
    // About 64 query vectors per tile share each gathered chunk of keys.
    const int64_t tileRows = std::max<int64_t>(1, 64 / G);

    struct Item {
      int64_t b, first, count, kvHead;
    };
    std::vector<Item> items;
    for (int64_t b = 0; b < step.args.num_seqs; ++b) {
      const int64_t begin = decode ? b : start[b],
                    end = decode ? b + 1 : start[b + 1];
      for (int64_t r = begin; r < end; r += tileRows)
        for (int64_t kv = 0; kv < s.kvHeads; ++kv)
          items.push_back({b, r, std::min<int64_t>(tileRows, end - r), kv});
    }

    const int64_t n = int64_t(items.size());
#pragma omp parallel for schedule(dynamic, 1) if (n > 1)
    for (int64_t w = 0; w < n; ++w) {
      const Item &it = items[size_t(w)];
      const int32_t b = int32_t(it.b);
      // The tile's rows are the last of the sequence's new tokens shifted:
      // treat the tile as `count` rows ending at its own last position.
      const int64_t seqEnd = decode ? b + 1 : start[b + 1];
      const int64_t len =
          step.args.context_lens[b] - (seqEnd - (it.first + it.count));
      attendTile(s, step, q, out, b, it.first, it.count, len, it.kvHead, rows);
    }
  };
}

} // namespace

Kernel makePrefillAttention(const llmc_op_desc &op, const Graph &g,
                            Backend &backend) {
  return makeAttention(op, g, backend, false);
}

Kernel makeDecodeAttention(const llmc_op_desc &op, const Graph &g,
                           Backend &backend) {
  return makeAttention(op, g, backend, true);
}

} // namespace llmc::cpu
