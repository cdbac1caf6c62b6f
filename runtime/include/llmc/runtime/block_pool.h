//===- block_pool.h - The KV cache's blocks and the prefix cache -*- C++
//-*-===//
//
// The host side of the paged KV cache's memory: a fixed number of blocks of
// block_size token slots, each with a reference count (beams, parallel
// samples and requests with a common prefix share blocks; a shared block is
// copied before it is written). Allocation answers "no" (nullopt) instead of
// throwing, so a scheduler can decide what to give up.
//
// Prefix caching (vLLM's automatic prefix caching): a *full* block can be
// registered under a key made of its parent block's hash and its tokens.
// When its last holder releases it, a registered block is not freed but kept
// as *cached*, least recently released first, until its memory is needed:
// allocate() then evicts the oldest cached block. A later sequence whose
// prompt starts with the same tokens finds the chain of blocks by key and
// shares them instead of prefilling them. Keys carry the tokens, not only a
// hash, so a hash collision can never hand out another prompt's K/V.
//
// Not thread-safe: the engine's thread owns the pool.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace llmc {

/// The identity of a full block: its parent's hash (0 for the first block)
/// and its tokens.
struct BlockKey {
  uint64_t parent = 0;
  std::vector<int32_t> tokens;
  /// A hash of both; what the next block uses as its parent.
  uint64_t hash() const;
  bool operator==(const BlockKey &) const = default;
};

class BlockPool {
public:
  explicit BlockPool(int32_t numBlocks);

  /// A block with reference count 1: a free one, else the least recently
  /// released cached one (evicted). nullopt when every block is held.
  std::optional<int32_t> allocate();
  void retain(int32_t block);
  /// Drops one reference; at zero the block is cached if it is registered,
  /// else freed. Throws llmc::Error on a block that is not held.
  void release(int32_t block);
  int32_t refcount(int32_t block) const { return blocks_.at(block).refs; }

  /// Registers a full, held block under `key`; returns false (and registers
  /// nothing) if another block already has that key.
  bool registerBlock(int32_t block, BlockKey key);
  /// Forgets a block's key (it is about to be written again).
  void unregister(int32_t block);
  bool registered(int32_t block) const { return blocks_.at(block).hasKey; }
  /// The block registered under `key`, now held once more (taken back from
  /// the cached list if no one held it), or nullopt.
  std::optional<int32_t> lookup(const BlockKey &key);
  /// Whether `key` is registered, without touching anything.
  bool contains(const BlockKey &key) const;

  int32_t numBlocks() const { return static_cast<int32_t>(blocks_.size()); }
  /// Blocks allocate() can hand out: free plus cached.
  int32_t availableBlocks() const {
    return static_cast<int32_t>(free_.size()) + cachedCount_;
  }
  int32_t cachedBlocks() const { return cachedCount_; }
  /// Blocks some sequence holds.
  int32_t usedBlocks() const { return numBlocks() - availableBlocks(); }
  /// Drops every cached block (keys and all): what --no-prefix-cache and
  /// tests that count free blocks want.
  void clearCache();

private:
  struct Block {
    int32_t refs = 0;
    bool hasKey = false;
    bool cached = false;          // refs == 0 and kept for its key
    int32_t prev = -1, next = -1; // the cached list, oldest first
    BlockKey key;
    uint64_t hash = 0;
  };
  void unlinkCached(int32_t b);
  void dropKey(int32_t b);

  std::vector<Block> blocks_;
  std::vector<int32_t> free_;
  int32_t cachedCount_ = 0;
  int32_t oldest_ = -1, newest_ = -1;
  std::unordered_multimap<uint64_t, int32_t> byHash_;
};

} // namespace llmc
