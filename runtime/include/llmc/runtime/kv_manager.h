//===- kv_manager.h - Sequences over the paged KV cache ---------*- C++ -*-===//
//
// Each sequence has a block table (which pool block holds which block_size
// positions) and a length. Forks share every block; a shared, partly filled
// last block is copied before the first write into it (copy-on-write): the
// copy is reported to the caller, who copies on the device before the step
// that writes. With prefix caching on, every block a sequence fills is
// registered in the pool under its tokens, and a new sequence can start by
// sharing the cached blocks its prompt begins with (attachCachedPrefix).
// A sequence's variant (0 unless set) salts its keys: blocks of the same
// tokens computed differently (LongRoPE's two tables) are never shared.
//
// Reservations are all-or-nothing: reserve() either makes room for all the
// new tokens or changes nothing and returns false, so a scheduler can try
// another plan (preempt someone) without undoing half a step.
//
// Not thread-safe: the engine's thread owns it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/block_pool.h"

#include <cstdint>
#include <map>
#include <span>
#include <vector>

namespace llmc {

/// Copy block `src` to `dst` on the device before the step runs.
struct BlockCopy {
  int32_t src, dst;
};

class KvManager {
public:
  struct Options {
    int32_t numBlocks = 1;
    int32_t blockSize = 16;
    bool prefixCaching = false;
  };
  explicit KvManager(Options options);

  /// A new, empty sequence.
  int32_t create();
  /// A new sequence sharing all of `seq`'s blocks and tokens.
  int32_t fork(int32_t seq);
  /// Gives the sequence's blocks back (cached ones stay in the cache).
  void release(int32_t seq);
  bool contains(int32_t seq) const { return seqs_.count(seq) != 0; }
  int64_t length(int32_t seq) const { return at(seq).tokens.size(); }
  const std::vector<int32_t> &blockTable(int32_t seq) const {
    return at(seq).blocks;
  }
  /// The tokens whose K/V the sequence holds.
  const std::vector<int32_t> &tokens(int32_t seq) const {
    return at(seq).tokens;
  }
  /// Where position `pos` of `seq` lives: block * block_size + offset.
  int32_t slot(int32_t seq, int64_t pos) const;

  /// Drops every token at position >= `length` and frees the blocks past it;
  /// at 0 the variant goes back to 0. Throws llmc::Error if `length` is
  /// negative or beyond the sequence.
  void truncate(int32_t seq, int64_t length);
  /// How an empty sequence's K/V will be computed; its cache keys carry it.
  void setVariant(int32_t seq, uint64_t variant);
  uint64_t variant(int32_t seq) const { return at(seq).variant; }

  /// For an empty sequence: shares the cached full blocks `prompt` starts
  /// with, up to and excluding the block holding its last token (whose
  /// logits the caller needs), and returns how many tokens that covers.
  /// 0 without prefix caching.
  int64_t attachCachedPrefix(int32_t seq, std::span<const int32_t> prompt);
  /// How many of `prompt`'s leading tokens attachCachedPrefix would cover
  /// now for a sequence of `variant`, without attaching anything.
  int64_t cachedPrefixLength(std::span<const int32_t> prompt,
                             uint64_t variant = 0) const;

  /// Blocks that appending `n` tokens to `seq` takes from the pool, the
  /// copy of a shared last block included (an upper bound when forks that
  /// share that block append in the same step).
  int32_t blocksNeeded(int32_t seq, int64_t n) const;
  /// Makes room for `n` more tokens of `seq`, all or nothing; appends the
  /// copy-on-write copies to `copies`. False: the pool lacks blocks and
  /// nothing changed.
  bool reserve(int32_t seq, int64_t n, std::vector<BlockCopy> &copies);
  /// The step ran: `seq` now holds `tokens` after its previous length
  /// (room for them was reserved). Blocks they fill are registered in the
  /// prefix cache.
  void append(int32_t seq, std::span<const int32_t> tokens);

  int32_t blockSize() const { return options_.blockSize; }
  int32_t numBlocks() const { return pool_.numBlocks(); }
  /// Blocks a reservation can take: free plus cached (evictable).
  int32_t availableBlocks() const { return pool_.availableBlocks(); }
  int32_t cachedBlocks() const { return pool_.cachedBlocks(); }
  int32_t usedBlocks() const { return pool_.usedBlocks(); }
  bool prefixCaching() const { return options_.prefixCaching; }
  int32_t refcount(int32_t block) const { return pool_.refcount(block); }
  /// Live sequences.
  size_t sequences() const { return seqs_.size(); }

  /// Throws llmc::Error naming what leaked unless no sequence is live and
  /// every block is free or cached: the check tests run after each run.
  void checkIdle() const;
  /// Frees the cached blocks (prefix cache emptied).
  void clearCache() { pool_.clearCache(); }

private:
  struct Sequence {
    std::vector<int32_t> blocks;
    std::vector<int32_t> tokens;
    std::vector<uint64_t>
        hashes; // of its registered-or-registrable full blocks
    uint64_t variant = 0;
  };
  Sequence &at(int32_t seq);
  const Sequence &at(int32_t seq) const;
  BlockKey keyOf(const Sequence &s, size_t block) const;

  Options options_;
  BlockPool pool_;
  std::map<int32_t, Sequence> seqs_;
  int32_t next_ = 0;
};

} // namespace llmc
