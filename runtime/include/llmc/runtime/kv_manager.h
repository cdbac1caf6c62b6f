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
// Sliding-window layers may keep their K/V in a pool of their own (Options::
// slidingBlocks): each sequence then has a second table over it, block for
// block beside the first. Once a block lies wholly before the window of
// every query still to come (`window` keys back from the sequence's end,
// less kSlidingSlackTokens positions a rollback may return to), its sliding
// block goes back to that pool and its entry becomes kNullSlidingBlock,
// which no sequence owns. docs/kv-cache.md has the design.
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
#include <optional>
#include <span>
#include <vector>

namespace llmc {

/// Copy block `src` to `dst` (of the sliding pool if `sliding`) on the
/// device before the step runs.
struct BlockCopy {
  int32_t src, dst;
  bool sliding = false;
};

/// Blocks of each pool: what a step needs, or what the pools have left.
struct KvBlocks {
  int64_t full = 0, sliding = 0;
  KvBlocks &operator+=(const KvBlocks &o) {
    full += o.full;
    sliding += o.sliding;
    return *this;
  }
  friend KvBlocks operator+(KvBlocks a, const KvBlocks &b) { return a += b; }
  bool fitsIn(const KvBlocks &available) const {
    return full <= available.full && sliding <= available.sliding;
  }
};

/// The sliding table entry of a block that left the window.
inline constexpr int32_t kNullSlidingBlock = 0;

/// How far back before a sequence's end its sliding blocks are kept, so
/// that a rollback (speculative decoding's rejected drafts, at most
/// spec::kMaxSpeculativeTokens) never cuts into a freed one.
inline constexpr int64_t kSlidingSlackTokens = 16;

/// The first block of `blockSize` a query at position `pos` or later may
/// read over a window of `window` keys.
inline int64_t firstBlockInWindow(int64_t pos, int64_t window,
                                  int64_t blockSize) {
  return (pos - window + 1 > 0 ? pos - window + 1 : 0) / blockSize;
}

/// The sliding blocks a sequence of `tokens` holds after its last step
/// (slack kSlidingSlackTokens).
inline int64_t slidingBlocksHeld(int64_t tokens, int64_t window,
                                 int64_t blockSize) {
  const int64_t blocks = (tokens + blockSize - 1) / blockSize;
  const int64_t freed =
      firstBlockInWindow(tokens - kSlidingSlackTokens, window, blockSize);
  return blocks - (freed < blocks ? freed : blocks);
}

class KvManager {
public:
  struct Options {
    int32_t numBlocks = 1;
    int32_t blockSize = 16;
    bool prefixCaching = false;
    /// The sliding pool's blocks (block 0 included, never handed out); 0:
    /// no sliding pool.
    int32_t slidingBlocks = 0;
    /// The largest window of the layers in the sliding pool.
    int64_t window = 0;
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
  /// Its table in the sliding pool (as long as blockTable; empty without
  /// a sliding pool).
  const std::vector<int32_t> &slidingTable(int32_t seq) const {
    return at(seq).sliding;
  }
  /// The tokens whose K/V the sequence holds.
  const std::vector<int32_t> &tokens(int32_t seq) const {
    return at(seq).tokens;
  }
  /// Where position `pos` of `seq` lives: block * block_size + offset (in
  /// the sliding pool if `sliding`).
  int32_t slot(int32_t seq, int64_t pos, bool sliding = false) const;
  /// Whether a sliding block the next token's window reaches was freed (the
  /// sequence was cut back further than kSlidingSlackTokens): it must be
  /// recomputed.
  bool lostWindow(int32_t seq) const;

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
  KvBlocks blocksNeeded(int32_t seq, int64_t n) const;
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
  /// Both pools (a pool that is absent never runs short).
  KvBlocks available() const;
  bool hasSlidingPool() const { return sliding_.has_value(); }
  int64_t slidingWindow() const { return options_.window; }
  /// The sliding pool's blocks that can hold K/V (block 0 excluded), and
  /// those sequences hold.
  int32_t numSlidingBlocks() const {
    return sliding_ ? sliding_->numBlocks() - 1 : 0;
  }
  int32_t usedSlidingBlocks() const {
    return sliding_ ? sliding_->usedBlocks() - 1 : 0;
  }
  bool prefixCaching() const { return options_.prefixCaching; }
  int32_t refcount(int32_t block) const { return pool_.refcount(block); }
  /// Live sequences.
  size_t sequences() const { return seqs_.size(); }

  /// Throws llmc::Error naming what leaked unless no sequence is live and
  /// every block is free or cached: the check tests run after each run.
  void checkIdle() const;
  /// Frees the cached blocks (prefix cache emptied).
  void clearCache();

private:
  struct Sequence {
    std::vector<int32_t> blocks;
    std::vector<int32_t> tokens;
    std::vector<uint64_t>
        hashes; // of its registered-or-registrable full blocks
    uint64_t variant = 0;
    std::vector<int32_t> sliding; // beside `blocks`, with a sliding pool
  };
  Sequence &at(int32_t seq);
  const Sequence &at(int32_t seq) const;
  BlockKey keyOf(const Sequence &s, size_t block) const;
  /// The first block a query at `pos` (or later) may read in a sliding
  /// layer.
  size_t firstInWindow(int64_t pos) const;
  /// How many leading blocks of `keys` a new sequence can share: cached in
  /// the full pool, and in the sliding pool as far as the window reaches.
  size_t shareable(const std::vector<BlockKey> &keys) const;
  /// Returns the sliding blocks that left every window to the pool.
  void dropOutsideWindow(Sequence &s);

  Options options_;
  BlockPool pool_;
  std::optional<BlockPool> sliding_;
  std::map<int32_t, Sequence> seqs_;
  int32_t next_ = 0;
};

} // namespace llmc
