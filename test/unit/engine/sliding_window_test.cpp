//===- sliding_window_test.cpp - Sliding layers hold only their window ----===//
//
// gemma3-text (layers 0-4 slide over 8 positions, layer 5 reads them all)
// and mistral-swa (every layer slides over 16): the sliding layers' blocks
// go back to their pool once every window has passed them, and nothing a
// sequence computes changes: grown one token at a time beside another
// sequence that takes the freed blocks, or cut back past its window and
// recomputed, it ends with the logits of one fresh prefill.
//
//===----------------------------------------------------------------------===//

#include "llmc/runtime/engine.h"
#include "llmc/runtime/scheduler.h"
#include "llmc/support/error.h"

#include "../compiled_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace llmc {
namespace {

using test::maxAbsDiff;

/// Token ids of a long made-up prompt (below every vocabulary's size).
std::vector<int32_t> prompt(size_t n, int32_t salt) {
  std::vector<int32_t> p(n);
  for (size_t i = 0; i < n; ++i)
    p[i] =
        static_cast<int32_t>((i * 37 + static_cast<size_t>(salt) * 11) % 1000) +
        3;
  return p;
}

constexpr float kTolerance = 1e-4f;

template <typename Derived>
class SlidingWindow : public test::CompiledPlanBackendTest<Derived> {
protected:
  using Base = test::CompiledPlanTest<Derived>;
  using test::CompiledPlanBackendTest<Derived>::GetParam;
  EngineOptions options(bool prefixCaching = false) {
    EngineOptions o;
    o.backend = GetParam();
    o.threads = 2;
    o.contextLength = 256;
    o.maxSequences = 2;
    o.maxStepTokens = 64;
    o.prefillChunk = 64;
    o.prefixCaching = prefixCaching;
    return o;
  }
  std::unique_ptr<Engine> engine(bool prefixCaching = false) {
    return std::make_unique<Engine>(*Base::plan_, *Base::registry_,
                                    options(prefixCaching));
  }
  std::vector<float> fresh(std::span<const int32_t> tokens) {
    return test::freshPrefillLogits(*Base::plan_, *Base::registry_, options(),
                                    tokens);
  }

  void expectPoolSplit(int64_t slidingLayers, int64_t window) {
    auto e = engine();
    const KvPoolPlan &p = e->kvPool();
    EXPECT_EQ(p.sliding.count(), slidingLayers);
    EXPECT_EQ(p.sliding.window, window);
    EXPECT_TRUE(e->kv().hasSlidingPool());
    // Two sequences' windows, the rollback slack and one 64-token step.
    EXPECT_LT(e->kv().numSlidingBlocks(), e->numBlocks());
    EXPECT_LT(p.bytesFor(200),
              p.fullBlockBytes * 13 + p.slidingBlockBytes * 13);
  }

  // A --kv-cache-memory budget is spent, not exceeded, however the layers
  // split between the pools.
  void expectBudgetSpent() {
    for (int64_t budget : {int64_t(1) << 20, int64_t(8) << 20}) {
      EngineOptions o = options();
      o.kvCacheBytes = budget;
      Engine e(*Base::plan_, *Base::registry_, o);
      EXPECT_LE(e.kvPoolBytes(), budget);
      EXPECT_GT(e.kvPoolBytes(), budget * 9 / 10);
      EXPECT_TRUE(e.kv().hasSlidingPool());
    }
  }

  // Two sequences grow one decode step at a time, far past the window:
  // each holds only its window's sliding blocks (freed ones go to the
  // other), and each ends where one prefill of its tokens does.
  void expectDecodeFreesAndAgrees() {
    auto e = engine();
    const int64_t bs = e->blockSize(), window = e->kvPool().sliding.window;
    const std::vector<int32_t> a = prompt(120, 1), b = prompt(120, 2);
    std::vector<float> la(static_cast<size_t>(e->vocabSize())), lb(la.size()),
        both(2 * la.size());
    int32_t sa = e->newSequence(), sb = e->newSequence();
    e->prefill(sa, std::span(a).first(4), la.data());
    e->prefill(sb, std::span(b).first(4), lb.data());
    for (size_t i = 4; i < a.size(); ++i) {
      int32_t seqs[2] = {sa, sb}, toks[2] = {a[i], b[i]};
      e->decode(seqs, toks, both.data());
      const int64_t len = static_cast<int64_t>(i) + 1;
      const int64_t held = static_cast<int64_t>(std::count_if(
          e->kv().slidingTable(sa).begin(), e->kv().slidingTable(sa).end(),
          [](int32_t blk) { return blk != kNullSlidingBlock; }));
      ASSERT_LE(held, (window + 16 + bs - 1) / bs + 1) << "at " << len;
      EXPECT_EQ(static_cast<int64_t>(e->kv().blockTable(sa).size()),
                (len + bs - 1) / bs);
    }
    EXPECT_LE(e->kv().usedSlidingBlocks(),
              2 * ((window + 16 + bs - 1) / bs + 1));
    std::copy(both.begin(), both.begin() + static_cast<long>(la.size()),
              la.begin());
    std::copy(both.begin() + static_cast<long>(la.size()), both.end(),
              lb.begin());
    EXPECT_LT(maxAbsDiff(la, fresh(a)), kTolerance);
    EXPECT_LT(maxAbsDiff(lb, fresh(b)), kTolerance);
    e->releaseSequence(sa);
    e->releaseSequence(sb);
    // Every block is back: the sliding pool's too.
    EXPECT_EQ(e->kv().usedSlidingBlocks(), 0);
    e->checkIdle();
  }

  // Cut back further than the slack, a sequence has lost blocks its window
  // reads: the next step recomputes it.
  void expectCutBackRecomputes() {
    auto e = engine();
    // Longer than the sliding pool holds at once (2 windows and a 64-token
    // step): the prefill and the recompute go in chunks that fit.
    ASSERT_LT(e->kv().numSlidingBlocks() * e->blockSize(), 240);
    const std::vector<int32_t> a = prompt(250, 3);
    std::vector<float> logits(static_cast<size_t>(e->vocabSize()));
    int32_t seq = e->newSequence();
    e->prefill(seq, a, logits.data());
    EXPECT_LT(maxAbsDiff(logits, fresh(a)), kTolerance);
    e->truncate(seq, 200);
    EXPECT_TRUE(e->kv().lostWindow(seq));
    int32_t t = a[200];
    e->decode(std::span(&seq, 1), std::span(&t, 1), logits.data());
    EXPECT_FALSE(e->kv().lostWindow(seq));
    EXPECT_LT(maxAbsDiff(logits, fresh(std::span(a).first(201))), kTolerance);
    e->releaseSequence(seq);
    e->checkIdle();
  }

  // A released sequence's blocks stay cached, the sliding ones of its last
  // window too: a prompt that extends it shares the whole prefix.
  void expectPrefixCacheKeepsWindow() {
    auto e = engine(true);
    const std::vector<int32_t> a = prompt(100, 4);
    std::vector<float> logits(static_cast<size_t>(e->vocabSize()));
    int32_t first = e->newSequence();
    e->prefill(first, a, logits.data());
    e->releaseSequence(first);
    std::vector<int32_t> longer = a;
    longer.push_back(5);
    int32_t second = e->newSequence();
    const int64_t shared = e->attachCachedPrefix(second, longer);
    EXPECT_EQ(shared, 96);
    e->prefill(second, std::span(longer).subspan(size_t(shared)),
               logits.data());
    EXPECT_LT(maxAbsDiff(logits, fresh(longer)), kTolerance);
    e->releaseSequence(second);
    e->checkIdle();
  }

  // A request whose sequences' windows the sliding pool cannot hold is
  // refused up front, naming the pool, not left waiting forever.
  void expectTooManyWindowsRefused() {
    EngineOptions o;
    o.backend = GetParam();
    o.contextLength = 256;
    o.maxSequences = 2; // windows for 2 sequences, full blocks for 25
    o.maxStepTokens = 64;
    o.kvCacheBlocks = 400;
    auto e = std::make_unique<Engine>(*Base::plan_, *Base::registry_, o);
    SchedulerOptions so;
    so.maxNumSeqs = 16;
    Scheduler s(*e, nullptr, so);
    ScheduledRequest r;
    r.prompt = prompt(200, 5);
    r.n = 16;
    r.options.maxNewTokens = 4;
    try {
      s.add(std::move(r));
      FAIL() << "16 windows fit a pool sized for 2";
    } catch (const Error &err) {
      EXPECT_NE(std::string(err.what()).find("sliding-window layers' KV pool"),
                std::string::npos)
          << err.what();
    }
  }
};

class Gemma3Sliding : public SlidingWindow<Gemma3Sliding> {
public:
  static constexpr const char *kModel = "gemma3-text";
};
class MistralSliding : public SlidingWindow<MistralSliding> {
public:
  static constexpr const char *kModel = "mistral-swa";
};

TEST_P(Gemma3Sliding, FiveOfSixLayersSlide) { expectPoolSplit(5, 8); }
TEST_P(MistralSliding, EveryLayerSlides) { expectPoolSplit(2, 16); }
TEST_P(Gemma3Sliding, BudgetIsSpent) { expectBudgetSpent(); }
TEST_P(MistralSliding, BudgetIsSpent) { expectBudgetSpent(); }
TEST_P(Gemma3Sliding, DecodeFreesBlocksAndAgrees) {
  expectDecodeFreesAndAgrees();
}
TEST_P(MistralSliding, DecodeFreesBlocksAndAgrees) {
  expectDecodeFreesAndAgrees();
}
TEST_P(Gemma3Sliding, CutBackPastTheWindowRecomputes) {
  expectCutBackRecomputes();
}
TEST_P(MistralSliding, CutBackPastTheWindowRecomputes) {
  expectCutBackRecomputes();
}
TEST_P(Gemma3Sliding, PrefixCacheKeepsTheWindow) {
  expectPrefixCacheKeepsWindow();
}
TEST_P(MistralSliding, PrefixCacheKeepsTheWindow) {
  expectPrefixCacheKeepsWindow();
}
TEST_P(Gemma3Sliding, TooManyWindowsAreRefused) {
  expectTooManyWindowsRefused();
}

INSTANTIATE_TEST_SUITE_P(Backends, Gemma3Sliding,
                         ::testing::Values("ref", "cpu", "cuda"));
INSTANTIATE_TEST_SUITE_P(Backends, MistralSliding,
                         ::testing::Values("ref", "cpu", "cuda"));

} // namespace
} // namespace llmc
