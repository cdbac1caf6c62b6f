//===- kv_cache.cpp - KV_WRITE into the paged pool ------------------------===//
//
// The pool is backends/common's (per layer K and V [num_blocks, block_size,
// kv_heads, head_dim] in the cache dtype), so copy-on-write and validation are
// shared.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"

#include "llmc/support/half.h"

#include <cstring>

namespace llmc::cpu {
namespace {

void storeRow(const KvCache &cache, common::HostMemory &layer, int64_t slot,
              const float *row) {
  int64_t n = cache.rowElements();
  if (cache.desc.dtype == LLMC_F32) {
    std::memcpy(layer.data() + slot * n * 4, row, size_t(n) * 4);
    return;
  }
  uint8_t *dst = layer.data() + slot * n * 2;
  bool bf = cache.desc.dtype == LLMC_BF16;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h = bf ? floatToBf16(row[i]) : floatToF16(row[i]);
    std::memcpy(dst + i * 2, &h, 2);
  }
}

} // namespace

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
#pragma omp parallel for if (k.rows >= 64)
    for (int64_t t = 0; t < k.rows; ++t) {
      storeRow(cache, kl, step.args.slot_mapping[t], k.row(t));
      storeRow(cache, vl, step.args.slot_mapping[t], v.row(t));
    }
  };
}

} // namespace llmc::cpu
