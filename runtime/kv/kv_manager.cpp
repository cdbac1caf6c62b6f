//===- kv_manager.cpp - Sequences over the paged KV cache -----------------===//
#include "llmc/runtime/kv_manager.h"

#include "llmc/support/error.h"

namespace llmc {

KvManager::KvManager(Options options)
    : options_(options), pool_(options.numBlocks) {
  if (options.blockSize <= 0)
    throw Error("the KV block size must be positive, got " +
                std::to_string(options.blockSize));
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
  seqs_.erase(it);
}

int32_t KvManager::slot(int32_t seq, int64_t pos) const {
  const Sequence &s = at(seq);
  const int64_t bs = options_.blockSize;
  return s.blocks.at(static_cast<size_t>(pos / bs)) * options_.blockSize +
         static_cast<int32_t>(pos % bs);
}

void KvManager::truncate(int32_t seq, int64_t length) {
  Sequence &s = at(seq);
  const auto have = static_cast<int64_t>(s.tokens.size());
  if (length < 0 || length > have)
    throw Error("cannot truncate a sequence of " + std::to_string(have) +
                " tokens to " + std::to_string(length));
  const int64_t bs = options_.blockSize;
  const auto keep = static_cast<size_t>((length + bs - 1) / bs);
  while (s.blocks.size() > keep) {
    pool_.release(s.blocks.back());
    s.blocks.pop_back();
  }
  // A kept block that is no longer full will be written again: if this
  // sequence alone holds it, its cache key no longer describes it (a shared
  // one is copied before the write and keeps its key).
  if (length % bs != 0 && !s.blocks.empty() &&
      pool_.refcount(s.blocks.back()) == 1)
    pool_.unregister(s.blocks.back());
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

int64_t KvManager::cachedPrefixLength(std::span<const int32_t> prompt,
                                      uint64_t variant) const {
  if (!options_.prefixCaching)
    return 0;
  int64_t covered = 0;
  for (const BlockKey &key : prefixKeys(prompt, options_.blockSize, variant)) {
    if (!pool_.contains(key))
      break;
    covered += options_.blockSize;
  }
  return covered;
}

int64_t KvManager::attachCachedPrefix(int32_t seq,
                                      std::span<const int32_t> prompt) {
  Sequence &s = at(seq);
  if (!s.tokens.empty())
    throw Error("internal error: a cached prefix is attached to an empty "
                "sequence only");
  if (!options_.prefixCaching)
    return 0;
  for (BlockKey &key : prefixKeys(prompt, options_.blockSize, s.variant)) {
    std::optional<int32_t> b = pool_.lookup(key);
    if (!b)
      break;
    s.blocks.push_back(*b);
    s.hashes.push_back(key.hash());
    s.tokens.insert(s.tokens.end(), key.tokens.begin(), key.tokens.end());
  }
  return static_cast<int64_t>(s.tokens.size());
}

int32_t KvManager::blocksNeeded(int32_t seq, int64_t n) const {
  const Sequence &s = at(seq);
  const int64_t bs = options_.blockSize;
  const auto length = static_cast<int64_t>(s.tokens.size());
  int64_t need =
      (length + n + bs - 1) / bs - static_cast<int64_t>(s.blocks.size());
  if (need < 0)
    need = 0;
  if (n > 0 && length % bs != 0 &&
      pool_.refcount(s.blocks[static_cast<size_t>(length / bs)]) > 1)
    need += 1; // the copy of the shared, partly filled block
  return static_cast<int32_t>(need);
}

bool KvManager::reserve(int32_t seq, int64_t n,
                        std::vector<BlockCopy> &copies) {
  if (blocksNeeded(seq, n) > pool_.availableBlocks())
    return false;
  Sequence &s = at(seq);
  const int64_t bs = options_.blockSize;
  const auto length = static_cast<int64_t>(s.tokens.size());
  if (n > 0 && length % bs != 0) {
    int32_t &b = s.blocks[static_cast<size_t>(length / bs)];
    if (pool_.refcount(b) > 1) {
      int32_t fresh = *pool_.allocate();
      copies.push_back({b, fresh});
      pool_.release(b);
      b = fresh;
    }
  }
  while (static_cast<int64_t>(s.blocks.size()) * bs < length + n)
    s.blocks.push_back(*pool_.allocate());
  return true;
}

void KvManager::append(int32_t seq, std::span<const int32_t> tokens) {
  Sequence &s = at(seq);
  const size_t bs = static_cast<size_t>(options_.blockSize);
  if (s.tokens.size() + tokens.size() > s.blocks.size() * bs)
    throw Error("internal error: appending " + std::to_string(tokens.size()) +
                " tokens to a KV sequence without room reserved for them");
  s.tokens.insert(s.tokens.end(), tokens.begin(), tokens.end());
  if (!options_.prefixCaching)
    return;
  for (size_t j = s.hashes.size(); j < s.tokens.size() / bs; ++j) {
    BlockKey key = keyOf(s, j);
    s.hashes.push_back(key.hash());
    // A block already in the cache (shared from a prefix, or the same
    // tokens prefilled twice) keeps the first registration.
    pool_.registerBlock(s.blocks[j], std::move(key));
  }
}

void KvManager::checkIdle() const {
  if (!seqs_.empty())
    throw Error(std::to_string(seqs_.size()) +
                " KV sequences are still live (first: " +
                std::to_string(seqs_.begin()->first) + ")");
  if (pool_.usedBlocks() != 0)
    throw Error(std::to_string(pool_.usedBlocks()) +
                " KV blocks are held with no sequence live (leaked)");
}

} // namespace llmc
