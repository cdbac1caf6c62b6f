//===- ref_attention_test.cpp - Paged attention on ref vs doubles
//----------===//
//
// Sequences live in blocks scattered over the pool; the reference below
// never sees blocks, only each sequence's positions, so a paging mistake
// shows up as a wrong number.
//
//===----------------------------------------------------------------------===//
#include "op_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace llmc::testing {
namespace {

struct Setup {
  int heads, kvHeads, headDim, window, blockSize;
  llmc_dtype kvDtype;
  std::vector<int> lengths; // final context length of each sequence
};

constexpr int kLayers = 2, kLayer = 1; // layer 1, so layer offsets matter

class Attention {
public:
  Attention(const BackendInstance &backend, Setup s)
      : backend_(backend), s_(std::move(s)) {
    std::mt19937 rng(99);
    int total = 0, blocks = 0;
    for (int len : s_.lengths) {
      base_.push_back(total);
      total += len;
      blocks += (len + s_.blockSize - 1) / s_.blockSize;
    }
    maxBlocks_ = 0;
    for (int len : s_.lengths)
      maxBlocks_ =
          std::max(maxBlocks_, (len + s_.blockSize - 1) / s_.blockSize);
    numBlocks_ = blocks + 3; // spare blocks nobody uses
    qCols_ = s_.heads * s_.headDim;
    kvCols_ = s_.kvHeads * s_.headDim;
    q_ = randomVector(rng, size_t(total * qCols_), -2, 2);
    k_ = randomVector(rng, size_t(total * kvCols_), -2, 2);
    v_ = randomVector(rng, size_t(total * kvCols_));

    // Deal the pool out in shuffled order so no sequence is contiguous.
    std::vector<int32_t> pool(static_cast<size_t>(numBlocks_));
    for (int i = 0; i < numBlocks_; ++i)
      pool[i] = i;
    std::shuffle(pool.begin(), pool.end(), rng);
    tables_.assign(s_.lengths.size() * maxBlocks_, -1);
    size_t next = 0;
    for (size_t b = 0; b < s_.lengths.size(); ++b)
      for (int j = 0; j < (s_.lengths[b] + s_.blockSize - 1) / s_.blockSize;
           ++j)
        tables_[b * maxBlocks_ + j] = pool[next++];

    llmc_kv_cache_desc desc = {kLayers,
                               uint32_t(s_.kvHeads),
                               uint32_t(s_.headDim),
                               uint32_t(s_.kvDtype),
                               uint32_t(s_.blockSize),
                               uint32_t(numBlocks_),
                               0,
                               nullptr};
    cache_ = std::make_unique<DeviceKvCache>(backend_.createKvCache(desc));
  }

  /// Runs one step in which sequence b gets positions [from[b], to[b]) as
  /// new tokens; returns the attention output rows.
  std::vector<float> step(bool decode, const std::vector<int> &from,
                          const std::vector<int> &to,
                          bool withQueryStart = true) {
    OpGraph g;
    uint32_t q = g.feed(q_, qCols_), k = g.feed(k_, kvCols_),
             v = g.feed(v_, kvCols_);
    uint32_t out = g.buffer(decode ? rowsB() : rowsT(), qCols_);
    g.add(makeOp(LLMC_OP_KV_WRITE, {buf(k), buf(v)}, {}, {kLayer}));
    g.add(makeOp(decode ? LLMC_OP_DECODE_ATTENTION : LLMC_OP_PREFILL_ATTENTION,
                 {buf(q)}, {out},
                 {kLayer, s_.heads, s_.kvHeads, s_.headDim, s_.window},
                 {1.0 / std::sqrt(double(s_.headDim))}));
    StepData d;
    d.numSeqs = int32_t(from.size());
    d.queryStart = {0};
    for (size_t b = 0; b < from.size(); ++b) {
      for (int p = from[b]; p < to[b]; ++p) {
        d.tokens.push_back(base_[b] + p);
        d.positions.push_back(p);
        d.slots.push_back(slot(b, p));
      }
      d.queryStart.push_back(int32_t(d.tokens.size()));
      d.contextLens.push_back(to[b]);
    }
    if (!withQueryStart)
      d.queryStart.clear();
    d.blockTables = tables_;
    d.maxBlocks = maxBlocks_;
    d.numLogits = int32_t(d.tokens.size());
    return runGraph(backend_, g, out, d, cache_.get());
  }

  /// The expected output of the same step, in double over the sequences'
  /// positions (K and V rounded to the cache dtype, with their scales).
  std::vector<double> reference(const std::vector<int> &from,
                                const std::vector<int> &to) const {
    std::vector<double> out;
    const std::vector<float> keys = roundKv(s_.kvDtype, k_, s_.headDim),
                             values = roundKv(s_.kvDtype, v_, s_.headDim);
    int group = s_.heads / s_.kvHeads;
    double scale = 1.0 / std::sqrt(double(s_.headDim));
    for (size_t b = 0; b < from.size(); ++b) {
      for (int p = from[b]; p < to[b]; ++p) {
        int lo = s_.window > 0 ? std::max(0, p - s_.window + 1) : 0;
        for (int h = 0; h < s_.heads; ++h) {
          const float *q =
              &q_[size_t((base_[b] + p) * qCols_ + h * s_.headDim)];
          int kv = (h / group) * s_.headDim;
          std::vector<double> w;
          double max = -INFINITY, sum = 0;
          for (int j = lo; j <= p; ++j) {
            double dot = 0;
            for (int d = 0; d < s_.headDim; ++d)
              dot += double(q[d]) *
                     keys[size_t((base_[b] + j) * kvCols_ + kv + d)];
            w.push_back(dot * scale);
            max = std::max(max, w.back());
          }
          for (double &x : w)
            sum += (x = std::exp(x - max));
          for (int d = 0; d < s_.headDim; ++d) {
            double acc = 0;
            for (int j = lo; j <= p; ++j)
              acc += w[size_t(j - lo)] / sum *
                     values[size_t((base_[b] + j) * kvCols_ + kv + d)];
            out.push_back(acc);
          }
        }
      }
    }
    return out;
  }

  int32_t slot(size_t b, int p) const {
    return tables_[b * maxBlocks_ + p / s_.blockSize] * s_.blockSize +
           p % s_.blockSize;
  }

private:
  const BackendInstance &backend_;
  Setup s_;
  std::vector<int> base_;
  int maxBlocks_ = 0, numBlocks_ = 0, qCols_ = 0, kvCols_ = 0;
  std::vector<float> q_, k_, v_;
  std::vector<int32_t> tables_;
  std::unique_ptr<DeviceKvCache> cache_;
};

constexpr double kTol = 2e-6;

class RefAttention : public ::testing::Test {
protected:
  BackendInstance backend = openBackend("ref");
};

TEST_F(RefAttention, PrefillOneSequenceMha) {
  Attention a(backend, {4, 4, 16, 0, 16, LLMC_F32, {7}});
  EXPECT_LT(maxRelativeError(a.step(false, {0}, {7}), a.reference({0}, {7})),
            kTol);
}

TEST_F(RefAttention, PrefillTwoSequencesGqaBlockSize4) {
  Attention a(backend, {8, 2, 8, 0, 4, LLMC_F32, {5, 9}});
  EXPECT_LT(maxRelativeError(a.step(false, {0, 0}, {5, 9}),
                             a.reference({0, 0}, {5, 9})),
            kTol);
}

TEST_F(RefAttention, PrefillSlidingWindow) {
  Attention a(backend, {4, 2, 8, 3, 4, LLMC_F32, {10, 6}});
  EXPECT_LT(maxRelativeError(a.step(false, {0, 0}, {10, 6}),
                             a.reference({0, 0}, {10, 6})),
            kTol);
}

TEST_F(RefAttention, ChunkedPrefillAttendsOverTheCachedPrefix) {
  // 5 tokens cached by an earlier step, then 3 new ones.
  for (int blockSize : {4, 16}) {
    Attention a(backend, {4, 2, 8, 0, blockSize, LLMC_F32, {8}});
    EXPECT_LT(maxRelativeError(a.step(false, {0}, {5}), a.reference({0}, {5})),
              kTol);
    EXPECT_LT(maxRelativeError(a.step(false, {5}, {8}), a.reference({5}, {8})),
              kTol)
        << "block size " << blockSize;
  }
}

TEST_F(RefAttention, MixedBatchOfChunkAndFreshPrompt) {
  Attention a(backend, {6, 3, 8, 0, 4, LLMC_BF16, {8, 4}});
  a.step(false, {0, 0}, {5, 0});
  EXPECT_LT(maxRelativeError(a.step(false, {5, 0}, {8, 4}),
                             a.reference({5, 0}, {8, 4})),
            kTol);
}

TEST_F(RefAttention, DecodeOverScatteredBlocks) {
  for (int blockSize : {4, 16}) {
    for (llmc_dtype kv :
         {LLMC_F32, LLMC_BF16, LLMC_F16, LLMC_I8, LLMC_FP8_E4M3}) {
      SCOPED_TRACE(::testing::Message()
                   << "block size " << blockSize << " kv dtype " << kv);
      Attention a(backend, {8, 2, 16, 0, blockSize, kv, {1, 6, 17, 33}});
      a.step(false, {0, 0, 0, 0}, {0, 5, 16, 32});
      EXPECT_LT(maxRelativeError(a.step(true, {0, 5, 16, 32}, {1, 6, 17, 33}),
                                 a.reference({0, 5, 16, 32}, {1, 6, 17, 33})),
                kTol);
    }
  }
}

TEST_F(RefAttention, DecodeWithWindowAndNoQueryStart) {
  Attention a(backend, {4, 1, 8, 5, 4, LLMC_F32, {12, 3}});
  a.step(false, {0, 0}, {11, 2});
  EXPECT_LT(maxRelativeError(a.step(true, {11, 2}, {12, 3}, false),
                             a.reference({11, 2}, {12, 3})),
            kTol);
}

TEST_F(RefAttention, CopiedBlockReadsTheSame) {
  // Sequence 0 fills its first block; copying it over sequence 1's first
  // block makes sequence 1 see sequence 0's keys and values (and, for i8
  // and fp8, their scales).
  for (llmc_dtype dtype : {LLMC_F32, LLMC_I8, LLMC_FP8_E4M3}) {
    SCOPED_TRACE(dtype);
    int bs = 4;
    std::mt19937 rng(5);
    auto kv = randomVector(rng, 8 * 8);
    auto q = randomVector(rng, 8 * 8);
    auto graph = [&](OpGraph &g, bool write) {
      uint32_t qi = g.feed(q, 8), ki = g.feed(kv, 8);
      uint32_t out = g.buffer(rowsT(), 8);
      if (write)
        g.add(makeOp(LLMC_OP_KV_WRITE, {buf(ki), buf(ki)}, {}, {0}));
      g.add(makeOp(LLMC_OP_PREFILL_ATTENTION, {buf(qi)}, {out}, {0, 1, 1, 8, 0},
                   {0.3}));
      return out;
    };
    DeviceKvCache cache =
        backend.createKvCache({1, 1, 8, dtype, uint32_t(bs), 4, 0, nullptr});
    StepData step = StepData::simple(4, 4);
    step.blockTables = {2};
    step.maxBlocks = 1;
    step.slots = {8, 9, 10, 11};
    OpGraph writer, reader;
    uint32_t wout = graph(writer, true), rout = graph(reader, false);
    auto a = runGraph(backend, writer, wout, step, &cache);
    cache.copyBlock(2, 3);
    // The same queries over block 3, which only the copy filled.
    step.blockTables = {3};
    auto b = runGraph(backend, reader, rout, step, &cache);
    EXPECT_EQ(a, b);
    EXPECT_THROW(cache.copyBlock(0, 4), BackendError);
  }
}

TEST_F(RefAttention, ScaledKvPrefillChunkedAndGqa) {
  // Per-row scales across a chunk boundary, two sequences and GQA; the
  // reference rounds each (token, kv head) row with its own scale.
  for (llmc_dtype kv : {LLMC_I8, LLMC_FP8_E4M3}) {
    SCOPED_TRACE(kv);
    Attention a(backend, {6, 2, 16, 0, 4, kv, {11, 7}});
    EXPECT_LT(maxRelativeError(a.step(false, {0, 0}, {6, 3}),
                               a.reference({0, 0}, {6, 3})),
              kTol);
    EXPECT_LT(maxRelativeError(a.step(false, {6, 3}, {11, 7}),
                               a.reference({6, 3}, {11, 7})),
              kTol);
  }
}

TEST_F(RefAttention, ScaledKvNeedsAlignedScales) {
  // block_size x kv_heads x head_dim = 3 x 1 x 5: the f32 scales after the
  // bytes would be misaligned, so such a pool is refused with the reason.
  try {
    backend.createKvCache({1, 1, 5, LLMC_I8, 3, 4, 0, nullptr});
    FAIL() << "an int8 cache of 15-byte blocks was accepted";
  } catch (const BackendError &e) {
    EXPECT_NE(std::string(e.what()).find("divisible by 4"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(backend.createKvCache({1, 1, 8, 99, 4, 4, 0, nullptr}),
               BackendError);
}

} // namespace
} // namespace llmc::testing
