// KvManager: sequences over the pool: all-or-nothing reservations, forks and
// copy-on-write, truncation, prefix caching, and the leak check.
#include "llmc/runtime/kv_manager.h"
#include "llmc/support/error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

namespace llmc {
namespace {

std::vector<int32_t> iota(int32_t n, int32_t from = 100) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

/// Reserves and appends, as an engine step does.
void feed(KvManager &kv, int32_t seq, const std::vector<int32_t> &tokens,
          std::vector<BlockCopy> *copies = nullptr) {
  std::vector<BlockCopy> local;
  ASSERT_TRUE(kv.reserve(seq, static_cast<int64_t>(tokens.size()),
                         copies ? *copies : local));
  kv.append(seq, tokens);
}

TEST(KvManager, BlocksFollowTheLength) {
  KvManager kv({8, 4, false});
  int32_t s = kv.create();
  EXPECT_EQ(kv.blocksNeeded(s, 5).full, 2);
  feed(kv, s, iota(5));
  EXPECT_EQ(kv.length(s), 5);
  EXPECT_EQ(kv.blockTable(s), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(kv.slot(s, 4), 1 * 4 + 0);
  EXPECT_EQ(kv.blocksNeeded(s, 3).full, 0);
  EXPECT_EQ(kv.blocksNeeded(s, 4).full, 1);
  EXPECT_EQ(kv.usedBlocks(), 2);
  kv.release(s);
  kv.checkIdle();
}

TEST(KvManager, ReservationIsAllOrNothing) {
  KvManager kv({3, 4, false});
  int32_t a = kv.create(), b = kv.create();
  feed(kv, a, iota(8)); // 2 blocks
  std::vector<BlockCopy> copies;
  EXPECT_FALSE(kv.reserve(b, 5, copies)); // needs 2, 1 left
  EXPECT_EQ(kv.blockTable(b).size(), 0u);
  EXPECT_EQ(kv.availableBlocks(), 1);
  EXPECT_TRUE(kv.reserve(b, 4, copies));
  EXPECT_TRUE(copies.empty());
  EXPECT_THROW(kv.append(b, iota(5)), Error); // room for 4 only
  kv.append(b, iota(4));
  kv.release(a);
  kv.release(b);
  kv.checkIdle();
}

TEST(KvManager, ForksShareBlocksAndCopyOnWrite) {
  KvManager kv({8, 4, false});
  int32_t p = kv.create();
  feed(kv, p, iota(6)); // blocks 0 (full), 1 (2 of 4)
  int32_t f = kv.fork(p);
  EXPECT_EQ(kv.blockTable(f), kv.blockTable(p));
  EXPECT_EQ(kv.refcount(0), 2);
  EXPECT_EQ(kv.refcount(1), 2);
  // Writing into the shared, partly filled block copies it first.
  EXPECT_EQ(kv.blocksNeeded(f, 1).full, 1);
  std::vector<BlockCopy> copies;
  feed(kv, f, {7}, &copies);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].src, 1);
  int32_t fresh = copies[0].dst;
  EXPECT_EQ(kv.blockTable(f), (std::vector<int32_t>{0, fresh}));
  EXPECT_EQ(kv.refcount(1), 1);
  EXPECT_EQ(kv.refcount(0), 2);
  // The parent, now sole owner of block 1, writes in place.
  copies.clear();
  feed(kv, p, {8}, &copies);
  EXPECT_TRUE(copies.empty());
  kv.release(p);
  EXPECT_EQ(kv.refcount(0), 1);
  kv.release(f);
  kv.checkIdle();
}

TEST(KvManager, TruncateFreesBlocksPastTheLength) {
  KvManager kv({8, 4, false});
  int32_t s = kv.create();
  feed(kv, s, iota(10)); // 3 blocks
  kv.truncate(s, 5);
  EXPECT_EQ(kv.length(s), 5);
  EXPECT_EQ(kv.blockTable(s).size(), 2u);
  EXPECT_EQ(kv.usedBlocks(), 2);
  EXPECT_EQ(kv.tokens(s), iota(5));
  EXPECT_THROW(kv.truncate(s, 6), Error);
  EXPECT_THROW(kv.truncate(s, -1), Error);
  kv.truncate(s, 0);
  EXPECT_EQ(kv.usedBlocks(), 0);
  kv.release(s);
  kv.checkIdle();
}

TEST(KvManager, PrefixCacheSharesFullBlocksOfTheSamePrompt) {
  KvManager kv({8, 4, true});
  std::vector<int32_t> prompt = iota(10); // blocks: [0..4) [4..8) [8..10)
  int32_t a = kv.create();
  feed(kv, a, prompt);
  // Only full blocks are cached, and never the one holding the last token.
  EXPECT_EQ(kv.cachedPrefixLength(prompt), 8);
  std::vector<int32_t> shorter(prompt.begin(), prompt.begin() + 8);
  EXPECT_EQ(kv.cachedPrefixLength(shorter), 4);
  int32_t b = kv.create();
  EXPECT_EQ(kv.attachCachedPrefix(b, prompt), 8);
  EXPECT_EQ(kv.length(b), 8);
  EXPECT_EQ(kv.blockTable(b),
            (std::vector<int32_t>{kv.blockTable(a)[0], kv.blockTable(a)[1]}));
  EXPECT_EQ(kv.refcount(kv.blockTable(a)[0]), 2);
  // A different second block shares only the first.
  std::vector<int32_t> other = prompt;
  other[5] = 1;
  EXPECT_EQ(kv.cachedPrefixLength(other), 4);
  kv.release(a);
  kv.release(b);
  // Released blocks stay cached (and count as available) until needed.
  EXPECT_EQ(kv.cachedBlocks(), 2);
  EXPECT_EQ(kv.availableBlocks(), 8);
  EXPECT_EQ(kv.cachedPrefixLength(prompt), 8);
  kv.checkIdle();
  int32_t c = kv.create();
  EXPECT_EQ(kv.attachCachedPrefix(c, prompt), 8);
  EXPECT_EQ(kv.cachedBlocks(), 0);
  kv.release(c);
  // Without prefix caching nothing is shared.
  KvManager off({8, 4, false});
  int32_t x = off.create();
  feed(off, x, prompt);
  off.release(x);
  EXPECT_EQ(off.cachedPrefixLength(prompt), 0);
  EXPECT_EQ(off.cachedBlocks(), 0);
}

// Blocks of the same tokens computed another way (LongRoPE's long table)
// are cached apart: a sequence shares only those of its own variant.
TEST(KvManager, VariantsCacheTheirBlocksApart) {
  KvManager kv({8, 4, true});
  std::vector<int32_t> prompt = iota(10);
  int32_t a = kv.create();
  kv.setVariant(a, 1);
  feed(kv, a, prompt);
  EXPECT_EQ(kv.cachedPrefixLength(prompt), 0);
  EXPECT_EQ(kv.cachedPrefixLength(prompt, 1), 8);
  EXPECT_THROW(kv.setVariant(a, 0), Error); // not empty
  int32_t f = kv.fork(a);
  EXPECT_EQ(kv.variant(f), 1u);
  int32_t b = kv.create();
  EXPECT_EQ(kv.attachCachedPrefix(b, prompt), 0);
  int32_t c = kv.create();
  kv.setVariant(c, 1);
  EXPECT_EQ(kv.attachCachedPrefix(c, prompt), 8);
  // Cut to nothing, a sequence starts over as variant 0.
  kv.truncate(a, 0);
  EXPECT_EQ(kv.variant(a), 0u);
  for (int32_t s : {a, b, c, f})
    kv.release(s);
  kv.checkIdle();
}

TEST(KvManager, EvictionMakesRoomForNewSequences) {
  KvManager kv({4, 4, true});
  int32_t a = kv.create();
  feed(kv, a, iota(16)); // all 4 blocks
  kv.release(a);
  EXPECT_EQ(kv.cachedBlocks(), 4);
  int32_t b = kv.create();
  feed(kv, b, iota(12, 500)); // evicts 3 cached blocks, the tail first
  EXPECT_EQ(kv.cachedBlocks(), 1);
  EXPECT_EQ(kv.cachedPrefixLength(iota(16)), 4);
  kv.release(b);
  kv.checkIdle();
}

TEST(KvManager, TruncatingIntoACachedBlockForgetsItsKey) {
  KvManager kv({8, 4, true});
  std::vector<int32_t> prompt = iota(9);
  int32_t a = kv.create();
  feed(kv, a, prompt); // blocks 0 and 1 full and registered
  kv.truncate(a, 6);   // block 1 will be rewritten
  feed(kv, a, {1, 2, 3});
  kv.release(a);
  // Block 1 now holds other tokens: only block 0 may be shared.
  EXPECT_EQ(kv.cachedPrefixLength(prompt), 4);
  std::vector<int32_t> rewritten = iota(6);
  rewritten.insert(rewritten.end(), {1, 2, 3});
  EXPECT_EQ(kv.cachedPrefixLength(rewritten), 8);
}

TEST(KvManager, CheckIdleNamesWhatLeaked) {
  KvManager kv({4, 4, false});
  int32_t s = kv.create();
  feed(kv, s, iota(3));
  try {
    kv.checkIdle();
    FAIL() << "a live sequence was not reported";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(),
                ::testing::HasSubstr("1 KV sequences are still live"));
  }
  kv.release(s);
  kv.checkIdle();
  EXPECT_THROW(KvManager({4, 0, false}), Error);
}

} // namespace
} // namespace llmc

namespace llmc {
namespace {

// The sliding pool: window 8 over blocks of 4, slack kSlidingSlackTokens
// (16). A block is freed once it lies wholly before position
// length - 16 - 8 + 1.
KvManager slidingKv(int32_t slidingBlocks = 20, bool prefixCaching = false) {
  KvManager::Options o{64, 4, prefixCaching};
  o.slidingBlocks = slidingBlocks;
  o.window = 8;
  return KvManager(o);
}

int64_t held(const KvManager &kv, int32_t seq) {
  const std::vector<int32_t> &t = kv.slidingTable(seq);
  return std::count_if(t.begin(), t.end(),
                       [](int32_t b) { return b != kNullSlidingBlock; });
}

TEST(KvManagerSliding, BlocksLeaveTheWindowAndReturnToThePool) {
  KvManager kv = slidingKv();
  EXPECT_EQ(kv.numSlidingBlocks(), 19); // block 0 is never handed out
  int32_t s = kv.create();
  feed(kv, s, iota(24));
  // 24 - 16 - 8 + 1 = 1: nothing before block 0 yet.
  EXPECT_EQ(held(kv, s), 6);
  for (int i = 0; i < 16; ++i)
    feed(kv, s, {7});
  // 40 tokens: blocks before (40 - 23) / 4 = 4 are free.
  EXPECT_EQ(kv.blockTable(s).size(), 10u);
  EXPECT_EQ(kv.slidingTable(s).size(), 10u);
  EXPECT_EQ(held(kv, s), 6);
  EXPECT_EQ(kv.usedSlidingBlocks(), 6);
  EXPECT_EQ(held(kv, s), slidingBlocksHeld(40, 8, 4));
  EXPECT_EQ(kv.slot(s, 39, true), kv.slidingTable(s)[9] * 4 + 3);
  EXPECT_FALSE(kv.lostWindow(s));
  // A step takes blocks of both pools.
  EXPECT_EQ(kv.blocksNeeded(s, 4).full, 1);
  EXPECT_EQ(kv.blocksNeeded(s, 4).sliding, 1);
  // A fork shares the held ones; release gives everything back.
  int32_t f = kv.fork(s);
  EXPECT_EQ(kv.refcount(kv.blockTable(s)[9]), 2);
  kv.release(s);
  EXPECT_EQ(kv.usedSlidingBlocks(), 6);
  kv.release(f);
  EXPECT_EQ(kv.usedSlidingBlocks(), 0);
  kv.checkIdle();
}

TEST(KvManagerSliding, CutBackPastTheSlackLosesTheWindow) {
  KvManager kv = slidingKv();
  int32_t s = kv.create();
  feed(kv, s, iota(40));
  kv.truncate(s, 28); // within the slack: the window is whole
  EXPECT_FALSE(kv.lostWindow(s));
  kv.truncate(s, 12); // the window of position 12 reads blocks 1 and 2
  EXPECT_TRUE(kv.lostWindow(s));
  kv.truncate(s, 0);
  EXPECT_FALSE(kv.lostWindow(s));
  kv.release(s);
  kv.checkIdle();
}

TEST(KvManagerSliding, AReservationNeedsBothPools) {
  KvManager kv = slidingKv(4); // 3 usable sliding blocks
  int32_t s = kv.create();
  std::vector<BlockCopy> copies;
  EXPECT_FALSE(kv.reserve(s, 16, copies)); // 4 sliding blocks at once
  EXPECT_EQ(kv.usedBlocks(), 0);           // and nothing changed
  EXPECT_TRUE(kv.reserve(s, 12, copies));
  kv.append(s, iota(12));
  kv.release(s);
  kv.checkIdle();
}

TEST(KvManagerSliding, PrefixSharesTheWindowItStillHas) {
  KvManager kv = slidingKv(20, true);
  std::vector<int32_t> prompt = iota(41);
  int32_t a = kv.create();
  feed(kv, a, prompt);
  kv.release(a); // every full block cached; sliding 4.. cached, 0..3 freed
  // The 40 tokens before the last: block 10's window reaches back to
  // position 33 (block 8); blocks 8 and 9 are cached.
  EXPECT_EQ(kv.cachedPrefixLength(prompt), 40);
  int32_t b = kv.create();
  EXPECT_EQ(kv.attachCachedPrefix(b, prompt), 40);
  EXPECT_EQ(kv.slidingTable(b)[0], kNullSlidingBlock);
  EXPECT_NE(kv.slidingTable(b)[9], kNullSlidingBlock);
  EXPECT_FALSE(kv.lostWindow(b));
  kv.release(b);
  // Evict the sliding pool's cache: the full blocks alone share nothing.
  kv.clearCache();
  EXPECT_EQ(kv.cachedPrefixLength(prompt), 0);
  kv.checkIdle();
}

} // namespace
} // namespace llmc
