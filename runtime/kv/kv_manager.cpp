//===- kv_manager.cpp - Sequences over the paged KV cache -----------------===//
#include "llmc/runtime/kv_manager.h"

#include "llmc/support/error.h"

#include <algorithm>
#include <cstdint>

namespace llmc {

KvManager::KvManager(Options options)
    : options_(options), pool_(options.numBlocks) {
  if (options.blockSize <= 0)
    throw Error("the KV block size must be positive, got " +
                std::to_string(options.blockSize));
  if (options.slidingBlocks > 0) {
    if (options.slidingBlocks < 2 || options.window <= 0)
      throw Error("internal error: a sliding KV pool needs a window and two "
                  "blocks or more");
    sliding_.emplace(options.slidingBlocks);
    // Block 0 stands for every freed block: held for good.
    if (sliding_->allocate() != kNullSlidingBlock)
      throw Error("internal error: the sliding pool's first block is not 0");
  }
}

KvManager::Sequence &KvManager::at(int32_t seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    throw Error("internal error: no KV sequence " + std::to_string(seq));
  return it->second;
}

const KvManager::Sequence &KvManager::at(int32_t seq) const {
  return const_cast<KvManager *>(this)->at(seq);
}

int32_t KvManager::create() {
  int32_t id = next_++;
  seqs_[id] = Sequence{};
  return id;
}

int32_t KvManager::fork(int32_t seq) {
  Sequence copy = at(seq);
  for (int32_t b : copy.blocks)
    pool_.retain(b);
  for (int32_t b : copy.sliding)
    if (b != kNullSlidingBlock)
      sliding_->retain(b);
  int32_t id = next_++;
  seqs_[id] = std::move(copy);
  return id;
}

void KvManager::release(int32_t seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return;
  // Last block first: with prefix caching the tail of a prompt is the least
  // likely to be shared, so it is the first to be evicted.
  const std::vector<int32_t> &blocks = it->second.blocks;
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b)
    pool_.release(*b);
  const std::vector<int32_t> &sliding = it->second.sliding;
  for (auto b = sliding.rbegin(); b != sliding.rend(); ++b)
    if (*b != kNullSlidingBlock)
      sliding_->release(*b);
  seqs_.erase(it);
}

int32_t KvManager::slot(int32_t seq, int64_t pos, bool sliding) const {
  const Sequence &s = at(seq);
  const int64_t bs = options_.blockSize;
  const std::vector<int32_t> &table = sliding ? s.sliding : s.blocks;
  return table.at(static_cast<size_t>(pos / bs)) * options_.blockSize +
         static_cast<int32_t>(pos % bs);
}

size_t KvManager::firstInWindow(int64_t pos) const {
  return static_cast<size_t>(
      firstBlockInWindow(pos, options_.window, options_.blockSize));
}

bool KvManager::lostWindow(int32_t seq) const {
  const Sequence &s = at(seq);
  for (size_t i = firstInWindow(static_cast<int64_t>(s.tokens.size()));
       i < s.sliding.size(); ++i)
    if (s.sliding[i] == kNullSlidingBlock)
      return true;
  return false;
}

void KvManager::dropOutsideWindow(Sequence &s) {
  const int64_t keepFrom =
      static_cast<int64_t>(s.tokens.size()) - kSlidingSlackTokens;
  // Held entries are a suffix of the table (freed ones never come back
  // but by a recompute from 0): walk back from the window's edge to the
  // first freed one.
  for (size_t i = std::min(firstInWindow(keepFrom), s.sliding.size());
       i-- > 0 && s.sliding[i] != kNullSlidingBlock;) {
    sliding_->release(s.sliding[i]);
    s.sliding[i] = kNullSlidingBlock;
  }
}

KvBlocks KvManager::available() const {
  return {pool_.availableBlocks(),
          sliding_ ? sliding_->availableBlocks() : INT64_MAX};
}

void KvManager::clearCache() {
  pool_.clearCache();
  if (sliding_)
    sliding_->clearCache();
}

void KvManager::truncate(int32_t seq, int64_t length) {
  Sequence &s = at(seq);
  const auto have = static_cast<int64_t>(s.tokens.size());
  if (length < 0 || length > have)
    throw Error("cannot truncate a sequence of " + std::to_string(have) +
                " tokens to " + std::to_string(length));
  const int64_t bs = options_.blockSize;
  const auto keep = static_cast<size_t>((length + bs - 1) / bs);
  auto cut = [&](BlockPool &pool, std::vector<int32_t> &table, int32_t null) {
    while (table.size() > keep) {
      if (table.back() != null)
        pool.release(table.back());
      table.pop_back();
    }
    // A kept block that is no longer full will be written again: if this
    // sequence alone holds it, its cache key no longer describes it (a
    // shared one is copied before the write and keeps its key).
    if (length % bs != 0 && !table.empty() && table.back() != null &&
        pool.refcount(table.back()) == 1)
      pool.unregister(table.back());
  };
  cut(pool_, s.blocks, -1);
  if (sliding_)
    cut(*sliding_, s.sliding, kNullSlidingBlock);
  s.tokens.resize(static_cast<size_t>(length));
  if (length == 0)
    s.variant = 0;
  s.hashes.resize(std::min(s.hashes.size(), static_cast<size_t>(length / bs)));
}

void KvManager::setVariant(int32_t seq, uint64_t variant) {
  Sequence &s = at(seq);
  if (!s.tokens.empty())
    throw Error("internal error: a KV sequence's variant is set while it is "
                "empty");
  s.variant = variant;
}

BlockKey KvManager::keyOf(const Sequence &s, size_t block) const {
  const auto bs = static_cast<size_t>(options_.blockSize);
  BlockKey key;
  key.parent = block > 0 ? s.hashes[block - 1] : s.variant;
  key.tokens.assign(s.tokens.begin() + static_cast<std::ptrdiff_t>(block * bs),
                    s.tokens.begin() +
                        static_cast<std::ptrdiff_t>((block + 1) * bs));
  return key;
}

namespace {

/// The keys of the full blocks of `prompt` a cached prefix may cover (the
/// block holding the last token excluded), in order.
std::vector<BlockKey> prefixKeys(std::span<const int32_t> prompt,
                                 int32_t blockSize, uint64_t variant) {
  std::vector<BlockKey> keys;
  if (prompt.empty())
    return keys;
  const size_t bs = static_cast<size_t>(blockSize);
  const size_t blocks = (prompt.size() - 1) / bs;
  uint64_t parent = variant;
  for (size_t i = 0; i < blocks; ++i) {
    BlockKey key;
    key.parent = parent;
    key.tokens.assign(prompt.begin() + static_cast<std::ptrdiff_t>(i * bs),
                      prompt.begin() +
                          static_cast<std::ptrdiff_t>((i + 1) * bs));
    parent = key.hash();
    keys.push_back(std::move(key));
  }
  return keys;
}

} // namespace

size_t KvManager::shareable(const std::vector<BlockKey> &keys) const {
  size_t n = 0;
  while (n < keys.size() && pool_.contains(keys[n]))
    ++n;
  if (!sliding_)
    return n;
  // The sliding pool must still hold the blocks the next token's window
  // reaches; a shorter prefix may need fewer of them.
  for (; n > 0; --n) {
    size_t i = firstInWindow(static_cast<int64_t>(n) * options_.blockSize);
    while (i < n && sliding_->contains(keys[i]))
      ++i;
    if (i == n)
      break;
  }
  return n;
}

int64_t KvManager::cachedPrefixLength(std::span<const int32_t> prompt,
                                      uint64_t variant) const {
  if (!options_.prefixCaching)
    return 0;
  return static_cast<int64_t>(
             shareable(prefixKeys(prompt, options_.blockSize, variant))) *
         options_.blockSize;
}

int64_t KvManager::attachCachedPrefix(int32_t seq,
                                      std::span<const int32_t> prompt) {
  Sequence &s = at(seq);
  if (!s.tokens.empty())
    throw Error("internal error: a cached prefix is attached to an empty "
                "sequence only");
  if (!options_.prefixCaching)
    return 0;
  std::vector<BlockKey> keys =
      prefixKeys(prompt, options_.blockSize, s.variant);
  const size_t n = shareable(keys);
  const size_t window =
      firstInWindow(static_cast<int64_t>(n) * options_.blockSize);
  for (size_t i = 0; i < n; ++i) {
    const BlockKey &key = keys[i];
    s.blocks.push_back(*pool_.lookup(key));
    if (sliding_)
      s.sliding.push_back(i < window ? kNullSlidingBlock
                                     : *sliding_->lookup(key));
    s.hashes.push_back(key.hash());
    s.tokens.insert(s.tokens.end(), key.tokens.begin(), key.tokens.end());
  }
  return static_cast<int64_t>(s.tokens.size());
}

KvBlocks KvManager::blocksNeeded(int32_t seq, int64_t n) const {
  const Sequence &s = at(seq);
  const int64_t bs = options_.blockSize;
  const auto length = static_cast<int64_t>(s.tokens.size());
  const int64_t fresh = std::max<int64_t>(
      0, (length + n + bs - 1) / bs - static_cast<int64_t>(s.blocks.size()));
  // The copy of a shared, partly filled block.
  auto copy = [&](const BlockPool &pool, const std::vector<int32_t> &table) {
    return n > 0 && length % bs != 0 &&
                   pool.refcount(table[static_cast<size_t>(length / bs)]) > 1
               ? 1
               : 0;
  };
  KvBlocks need{fresh + copy(pool_, s.blocks), 0};
  if (sliding_)
    need.sliding = fresh + copy(*sliding_, s.sliding);
  return need;
}

bool KvManager::reserve(int32_t seq, int64_t n,
                        std::vector<BlockCopy> &copies) {
  if (!blocksNeeded(seq, n).fitsIn(available()))
    return false;
  Sequence &s = at(seq);
  const int64_t bs = options_.blockSize;
  const auto length = static_cast<int64_t>(s.tokens.size());
  auto grow = [&](BlockPool &pool, std::vector<int32_t> &table, bool sliding) {
    if (n > 0 && length % bs != 0) {
      int32_t &b = table[static_cast<size_t>(length / bs)];
      if (pool.refcount(b) > 1) {
        int32_t fresh = *pool.allocate();
        copies.push_back({b, fresh, sliding});
        pool.release(b);
        b = fresh;
      }
    }
    while (static_cast<int64_t>(table.size()) * bs < length + n)
      table.push_back(*pool.allocate());
  };
  grow(pool_, s.blocks, false);
  if (sliding_)
    grow(*sliding_, s.sliding, true);
  return true;
}

void KvManager::append(int32_t seq, std::span<const int32_t> tokens) {
  Sequence &s = at(seq);
  const size_t bs = static_cast<size_t>(options_.blockSize);
  if (s.tokens.size() + tokens.size() > s.blocks.size() * bs)
    throw Error("internal error: appending " + std::to_string(tokens.size()) +
                " tokens to a KV sequence without room reserved for them");
  s.tokens.insert(s.tokens.end(), tokens.begin(), tokens.end());
  if (options_.prefixCaching)
    for (size_t j = s.hashes.size(); j < s.tokens.size() / bs; ++j) {
      BlockKey key = keyOf(s, j);
      s.hashes.push_back(key.hash());
      // A block already in the cache (shared from a prefix, or the same
      // tokens prefilled twice) keeps the first registration.
      if (sliding_ && s.sliding[j] != kNullSlidingBlock)
        sliding_->registerBlock(s.sliding[j], key);
      pool_.registerBlock(s.blocks[j], std::move(key));
    }
  if (sliding_)
    dropOutsideWindow(s);
}

void KvManager::checkIdle() const {
  if (!seqs_.empty())
    throw Error(std::to_string(seqs_.size()) +
                " KV sequences are still live (first: " +
                std::to_string(seqs_.begin()->first) + ")");
  if (pool_.usedBlocks() != 0)
    throw Error(std::to_string(pool_.usedBlocks()) +
                " KV blocks are held with no sequence live (leaked)");
  if (usedSlidingBlocks() != 0)
    throw Error(std::to_string(usedSlidingBlocks()) +
                " sliding KV blocks are held with no sequence live (leaked)");
}

} // namespace llmc
