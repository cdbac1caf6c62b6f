//===- block_pool.cpp - The KV cache's blocks and the prefix cache --------===//
#include "llmc/runtime/block_pool.h"

#include "llmc/support/error.h"

namespace llmc {

uint64_t BlockKey::hash() const {
  // FNV-1a over the parent hash and the tokens, then a final mix (splitmix64)
  // so that nearby keys spread over the table. Equality is still checked on
  // the tokens themselves.
  uint64_t h = 1469598103934665603ull ^ parent;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  for (int32_t t : tokens)
    mix(static_cast<uint32_t>(t));
  h += 0x9e3779b97f4a7c15ull;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

BlockPool::BlockPool(int32_t numBlocks) : blocks_(numBlocks) {
  if (numBlocks <= 0)
    throw Error("the KV cache needs at least one block, got " +
                std::to_string(numBlocks));
  free_.reserve(static_cast<size_t>(numBlocks));
  // Hand out low block numbers first: easier to read in --explain output.
  for (int32_t b = numBlocks - 1; b >= 0; --b)
    free_.push_back(b);
}

void BlockPool::unlinkCached(int32_t b) {
  Block &k = blocks_[b];
  (k.prev >= 0 ? blocks_[k.prev].next : oldest_) = k.next;
  (k.next >= 0 ? blocks_[k.next].prev : newest_) = k.prev;
  k.prev = k.next = -1;
  k.cached = false;
  --cachedCount_;
}

void BlockPool::dropKey(int32_t b) {
  Block &k = blocks_[b];
  if (!k.hasKey)
    return;
  auto [lo, hi] = byHash_.equal_range(k.hash);
  for (auto it = lo; it != hi; ++it)
    if (it->second == b) {
      byHash_.erase(it);
      break;
    }
  k.hasKey = false;
  k.key = BlockKey{};
}

std::optional<int32_t> BlockPool::allocate() {
  int32_t b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else if (oldest_ >= 0) {
    b = oldest_;
    unlinkCached(b);
    dropKey(b);
  } else {
    return std::nullopt;
  }
  blocks_[b].refs = 1;
  return b;
}

void BlockPool::retain(int32_t block) {
  Block &k = blocks_.at(block);
  if (k.refs <= 0)
    throw Error("internal error: KV block " + std::to_string(block) +
                " retained while not held");
  ++k.refs;
}

void BlockPool::release(int32_t block) {
  Block &k = blocks_.at(block);
  if (k.refs <= 0)
    throw Error("internal error: KV block " + std::to_string(block) +
                " released twice");
  if (--k.refs > 0)
    return;
  if (!k.hasKey) {
    free_.push_back(block);
    return;
  }
  k.cached = true;
  k.prev = newest_;
  k.next = -1;
  (newest_ >= 0 ? blocks_[newest_].next : oldest_) = block;
  newest_ = block;
  ++cachedCount_;
}

bool BlockPool::registerBlock(int32_t block, BlockKey key) {
  Block &k = blocks_.at(block);
  if (k.refs <= 0 || k.hasKey || contains(key))
    return false;
  k.hash = key.hash();
  k.key = std::move(key);
  k.hasKey = true;
  byHash_.emplace(k.hash, block);
  return true;
}

void BlockPool::unregister(int32_t block) {
  Block &k = blocks_.at(block);
  if (k.cached) {
    unlinkCached(block);
    free_.push_back(block);
  }
  dropKey(block);
}

bool BlockPool::contains(const BlockKey &key) const {
  auto [lo, hi] = byHash_.equal_range(key.hash());
  for (auto it = lo; it != hi; ++it)
    if (blocks_[it->second].key == key)
      return true;
  return false;
}

std::optional<int32_t> BlockPool::lookup(const BlockKey &key) {
  auto [lo, hi] = byHash_.equal_range(key.hash());
  for (auto it = lo; it != hi; ++it) {
    int32_t b = it->second;
    Block &k = blocks_[b];
    if (k.key != key)
      continue;
    if (k.cached)
      unlinkCached(b);
    ++k.refs;
    return b;
  }
  return std::nullopt;
}

void BlockPool::clearCache() {
  while (oldest_ >= 0) {
    int32_t b = oldest_;
    unlinkCached(b);
    dropKey(b);
    free_.push_back(b);
  }
}

} // namespace llmc
