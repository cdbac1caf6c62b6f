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
