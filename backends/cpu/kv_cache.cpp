//===- kv_cache.cpp - KV_WRITE into the paged pool ------------------------===//
//
// The pool and its row formats are backends/common's, so copy-on-write,
// validation and the i8/fp8 scales are shared with ref.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"

namespace llmc::cpu {
Kernel makeKvWrite(const llmc_op_desc &op, const Graph &, Backend &) {
  return [op](Step &step) {
    KvCache &cache = step.kv();
    Matrix k = step.operand(op, 0), v = step.operand(op, 1);
    AttentionShape s{op.i[0], 0,   cache.desc.kv_heads, cache.desc.head_dim, 0,
                     0.0f,    0.0f};
    expectCacheFits(cache.desc, s);
    expectCols(k.cols, cache.rowElements(), "k");
    expectRows(k, step.args.num_tokens, "k");
    expectRows(v, step.args.num_tokens, "v");
    auto &kl = cache.k[size_t(s.layer)], &vl = cache.v[size_t(s.layer)];
    const int32_t *slots = step.slots(s.layer);
#pragma omp parallel for if (k.rows >= 64)
    for (int64_t t = 0; t < k.rows; ++t) {
      common::storeKvRow(cache, kl, slots[t], k.row(t));
      common::storeKvRow(cache, vl, slots[t], v.row(t));
    }
  };
}

} // namespace llmc::cpu
