// BlockPool: reference counts, "no" instead of a throw when full, and the
// prefix cache (keys with tokens, least recently released evicted first).
#include "llmc/runtime/block_pool.h"
#include "llmc/support/error.h"

#include <gtest/gtest.h>

namespace llmc {
namespace {

BlockKey key(uint64_t parent, std::vector<int32_t> tokens) {
  return BlockKey{parent, std::move(tokens)};
}

TEST(BlockPool, AllocatesLowBlocksFirstAndSaysNoWhenFull) {
  BlockPool pool(3);
  EXPECT_EQ(pool.allocate(), 0);
  EXPECT_EQ(pool.allocate(), 1);
  EXPECT_EQ(pool.allocate(), 2);
  EXPECT_EQ(pool.allocate(), std::nullopt);
  EXPECT_EQ(pool.availableBlocks(), 0);
  pool.release(1);
  EXPECT_EQ(pool.availableBlocks(), 1);
  EXPECT_EQ(pool.allocate(), 1);
}

TEST(BlockPool, RefcountsAndDoubleRelease) {
  BlockPool pool(2);
  int32_t b = *pool.allocate();
  pool.retain(b);
  EXPECT_EQ(pool.refcount(b), 2);
  pool.release(b);
  EXPECT_EQ(pool.usedBlocks(), 1);
  pool.release(b);
  EXPECT_EQ(pool.usedBlocks(), 0);
  EXPECT_THROW(pool.release(b), Error);
  EXPECT_THROW(pool.retain(b), Error);
  EXPECT_THROW(BlockPool(0), Error);
}

TEST(BlockPool, RegisteredBlocksAreCachedAndFoundAgain) {
  BlockPool pool(2);
  int32_t b = *pool.allocate();
  ASSERT_TRUE(pool.registerBlock(b, key(0, {1, 2})));
  // The same key twice is refused; the first registration stays.
  int32_t c = *pool.allocate();
  EXPECT_FALSE(pool.registerBlock(c, key(0, {1, 2})));
  pool.release(c);
  pool.release(b);
  EXPECT_EQ(pool.cachedBlocks(), 1);
  EXPECT_EQ(pool.availableBlocks(), 2);
  EXPECT_TRUE(pool.contains(key(0, {1, 2})));
  // Same hash inputs but other tokens, or another parent: not the block.
  EXPECT_EQ(pool.lookup(key(0, {1, 3})), std::nullopt);
  EXPECT_EQ(pool.lookup(key(7, {1, 2})), std::nullopt);
  EXPECT_EQ(pool.lookup(key(0, {1, 2})), b);
  EXPECT_EQ(pool.refcount(b), 1);
  EXPECT_EQ(pool.cachedBlocks(), 0);
  // A held, registered block is shared by a second lookup.
  EXPECT_EQ(pool.lookup(key(0, {1, 2})), b);
  EXPECT_EQ(pool.refcount(b), 2);
}

TEST(BlockPool, EvictsTheLeastRecentlyReleasedCachedBlock) {
  BlockPool pool(3);
  int32_t a = *pool.allocate(), b = *pool.allocate(), c = *pool.allocate();
  pool.registerBlock(a, key(0, {1}));
  pool.registerBlock(b, key(0, {2}));
  pool.registerBlock(c, key(0, {3}));
  pool.release(b);
  pool.release(a);
  pool.release(c);
  EXPECT_EQ(pool.cachedBlocks(), 3);
  // Free list empty: allocation evicts b (released first), then a.
  EXPECT_EQ(pool.allocate(), b);
  EXPECT_FALSE(pool.contains(key(0, {2})));
  EXPECT_TRUE(pool.contains(key(0, {1})));
  EXPECT_EQ(pool.allocate(), a);
  EXPECT_EQ(pool.cachedBlocks(), 1);
  EXPECT_EQ(pool.lookup(key(0, {3})), c);
  EXPECT_EQ(pool.allocate(), std::nullopt);
}

TEST(BlockPool, UnregisterAndClearCache) {
  BlockPool pool(2);
  int32_t a = *pool.allocate(), b = *pool.allocate();
  pool.registerBlock(a, key(0, {1}));
  pool.registerBlock(b, key(0, {2}));
  pool.unregister(a); // held: just forgets its key
  EXPECT_FALSE(pool.registered(a));
  pool.release(a);
  EXPECT_EQ(pool.cachedBlocks(), 0);
  pool.release(b);
  EXPECT_EQ(pool.cachedBlocks(), 1);
  pool.clearCache();
  EXPECT_EQ(pool.cachedBlocks(), 0);
  EXPECT_EQ(pool.availableBlocks(), 2);
  EXPECT_FALSE(pool.contains(key(0, {2})));
}

TEST(BlockKey, HashChainsParents) {
  BlockKey first = key(0, {5, 6});
  BlockKey second = key(first.hash(), {7, 8});
  EXPECT_NE(first.hash(), second.hash());
  EXPECT_EQ(second.hash(), key(first.hash(), {7, 8}).hash());
  EXPECT_NE(second.hash(), key(first.hash() + 1, {7, 8}).hash());
}

} // namespace
} // namespace llmc
