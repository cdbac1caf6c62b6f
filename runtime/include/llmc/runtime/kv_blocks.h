//===- kv_blocks.h - The paged KV cache's block bookkeeping ----*- C++ -*-===//
//
// The host side of the paged KV cache: a free list of fixed-size blocks with
// reference counts (so beams and parallel samples can share prefix blocks,
// copy-on-write), and each sequence's block table and length. The K/V bytes
// themselves live in the backend's llmc_kv_cache.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <vector>

namespace llmc {

class BlockAllocator {
public:
  explicit BlockAllocator(int32_t numBlocks);
  /// A free block with refcount 1; throws llmc::Error when none is left,
  /// saying how many blocks of how many tokens exist.
  int32_t allocate(int32_t blockSize);
  void retain(int32_t block);
  void release(int32_t block);
  int32_t refcount(int32_t block) const { return refs_.at(block); }
  int32_t freeBlocks() const { return static_cast<int32_t>(free_.size()); }
  int32_t numBlocks() const { return static_cast<int32_t>(refs_.size()); }

private:
  std::vector<int32_t> free_;
  std::vector<int32_t> refs_;
};

struct SequenceState {
  std::vector<int32_t> blocks;
  int64_t length = 0; // tokens in the cache
};

} // namespace llmc
