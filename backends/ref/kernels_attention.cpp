//===- kernels_attention.cpp - KV writes and paged causal attention
//--------===//
//
// Attention reads every key and value from the paged cache, the new tokens'
// included (KV_WRITE of the layer runs first), so one code path serves a
// fresh prompt, a chunk of a long prompt and a decode step. Sequence b's n
// new tokens are the last n of its context_lens[b] positions.
//
//===----------------------------------------------------------------------===//
#include "ref.h"

#include <algorithm>
#include <cmath>

namespace llmc::ref {
namespace {

// Position j of sequence b lives in block tables[b][j / block_size], at
// offset j % block_size, of the layer's pool.
int64_t slotOf(const Step &step, int64_t layer, int64_t b, int64_t j) {
  int64_t bs = step.cache->desc.block_size;
  int32_t block = step.blockTables(layer)[b * step.args.max_blocks + j / bs];
  return block * bs + j % bs;
}

// With a sink (gpt-oss) one more logit joins the denominator; its own
// probability is dropped.
void softmax(float *x, int64_t n, const float *sink) {
  float max = x[0];
  for (int64_t i = 1; i < n; ++i)
    max = std::max(max, x[i]);
  if (sink)
    max = std::max(max, *sink);
  float sum = sink ? std::exp(*sink - max) : 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  for (int64_t i = 0; i < n; ++i)
    x[i] /= sum;
}

// The `count` new query rows of sequence b, starting at row `first` of q,
// attend over the sequence's `len` cached positions.
void attendSequence(const AttentionShape &s, Step &step, const Matrix &q,
                    const Matrix &out, int64_t b, int64_t first, int64_t count,
                    int64_t len, const float *sinks) {
  KvCache &cache = *step.cache;
  int64_t kvCols = s.kvHeads * s.headDim;
  std::vector<float> keys(size_t(len * kvCols)), values(size_t(len * kvCols));
  for (int64_t j = 0; j < len; ++j) {
    const int64_t slot = slotOf(step, s.layer, b, j);
    loadKvRow(cache, cache.k[s.layer], slot, &keys[j * kvCols]);
    loadKvRow(cache, cache.v[s.layer], slot, &values[j * kvCols]);
  }

  int64_t group = s.heads / s.kvHeads; // query heads per kv head (GQA)
  std::vector<float> scores(static_cast<size_t>(len));
  for (int64_t i = 0; i < count; ++i) {
    int64_t pos = len - count + i;
    // Causal, and with a sliding window only the last `window` positions.
    int64_t lo = s.window > 0 ? std::max<int64_t>(0, pos - s.window + 1) : 0;
    int64_t n = pos - lo + 1;
    for (int64_t h = 0; h < s.heads; ++h) {
      const float *qh = q.row(first + i) + h * s.headDim;
      int64_t kvOffset = (h / group) * s.headDim;
      for (int64_t j = 0; j < n; ++j) {
        const float *k = &keys[(lo + j) * kvCols + kvOffset];
        float dot = 0.0f;
        for (int64_t d = 0; d < s.headDim; ++d)
          dot += qh[d] * k[d];
        scores[j] = dot * s.scale;
        // Gemma 2 caps every score before the mask: c * tanh(s / c).
        if (s.softcap > 0)
          scores[j] = s.softcap * std::tanh(scores[j] / s.softcap);
      }
      softmax(scores.data(), n, sinks ? sinks + h : nullptr);
      float *oh = out.row(first + i) + h * s.headDim;
      for (int64_t d = 0; d < s.headDim; ++d)
        oh[d] = 0.0f;
      for (int64_t j = 0; j < n; ++j) {
        const float *v = &values[(lo + j) * kvCols + kvOffset];
        for (int64_t d = 0; d < s.headDim; ++d)
          oh[d] += scores[j] * v[d];
      }
    }
  }
}

} // namespace

// KV_WRITE. in: k, v [T, kv_heads * head_dim]. i0 = layer.
void runKvWrite(const llmc_op_desc &op, Step &step) {
  KvCache &cache = step.kv();
  Matrix k = step.operand(op, 0), v = step.operand(op, 1);
  int64_t layer = op.i[0];
  expectCacheFits(cache.desc, {layer, 0, cache.desc.kv_heads,
                               cache.desc.head_dim, 0, 0.0f, 0.0f});
  expectCols(k.cols, cache.rowElements(), "k");
  expectRows(k, step.args.num_tokens, "k");
  expectRows(v, step.args.num_tokens, "v");
  const int32_t *slots = step.slots(layer);
  for (int64_t t = 0; t < k.rows; ++t) {
    storeKvRow(cache, cache.k[layer], slots[t], k.row(t));
    storeKvRow(cache, cache.v[layer], slots[t], v.row(t));
  }
}

// PREFILL_ATTENTION, DECODE_ATTENTION. in: q [rows, heads * head_dim].
// i0 layer, i1 heads, i2 kv_heads, i3 head_dim, i4 window; f0 scale,
// f1 logit soft-cap (0: none).
// Operand 1, when present: the sinks, one logit per head.
static std::vector<float> sinksOf(const llmc_op_desc &op, Step &step,
                                  int64_t heads) {
  if (op.num_operands < 2)
    return {};
  std::vector<float> sinks(static_cast<size_t>(heads));
  loadWeight(step.weight(op, 1), 0, heads, sinks.data());
  return sinks;
}

void runPrefillAttention(const llmc_op_desc &op, Step &step) {
  AttentionShape s = common::expectAttentionStep(op, step, false);
  Matrix q = step.operand(op, 0), out = step.result(op, 0);
  const std::vector<float> sinks = sinksOf(op, step, s.heads);
  const int32_t *start = step.args.query_start;
  for (int64_t b = 0; b < step.args.num_seqs; ++b)
    attendSequence(s, step, q, out, b, start[b], start[b + 1] - start[b],
                   step.args.context_lens[b],
                   sinks.empty() ? nullptr : sinks.data());
}

void runDecodeAttention(const llmc_op_desc &op, Step &step) {
  AttentionShape s = common::expectAttentionStep(op, step, true);
  Matrix q = step.operand(op, 0), out = step.result(op, 0);
  const std::vector<float> sinks = sinksOf(op, step, s.heads);
  for (int64_t b = 0; b < step.args.num_seqs; ++b)
    attendSequence(s, step, q, out, b, b, 1, step.args.context_lens[b],
                   sinks.empty() ? nullptr : sinks.data());
}

} // namespace llmc::ref
