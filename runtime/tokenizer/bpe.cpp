#include "bpe.h"

#include "llmc/support/utf8.h"

#include <cstdio>
#include <queue>

namespace llmc::tok::detail {

namespace {
constexpr size_t kCacheEntries = 1 << 16;
constexpr size_t kCacheMaxWordBytes = 256;

struct Symbol {
  int32_t id;
  int32_t prev, next;
};

struct Candidate {
  int32_t rank, left, leftId, rightId, merged;
  bool operator>(const Candidate &o) const {
    return rank != o.rank ? rank > o.rank : left > o.left;
  }
};
} // namespace

BpeModel::BpeModel(const TokenTable &vocab, MergeTable merges,
                   BpeOptions options)
    : vocab_(vocab), merges_(std::move(merges)), options_(options) {
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    byteIds_[b] = vocab_.find(name).value_or(-1);
  }
}

// As Hugging Face's byte fallback: a character falls back to its bytes when
// every one of them has a token, else to unk.
bool BpeModel::haveBytesOf(std::string_view ch) const {
  for (char c : ch)
    if (byteIds_[static_cast<uint8_t>(c)] < 0)
      return false;
  return true;
}

void BpeModel::encodeWord(std::string_view word,
                          std::vector<int32_t> &out) const {
  if (word.empty())
    return;
  if (options_.ignoreMerges)
    if (auto id = find(word)) {
      out.push_back(*id);
      return;
    }
  bool cacheable = word.size() <= kCacheMaxWordBytes;
  std::string key;
  if (cacheable) {
    key.assign(word);
    std::lock_guard<std::mutex> lock(cacheMutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids;
  mergeWord(word, ids);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    if (cache_.size() >= kCacheEntries)
      cache_.clear();
    cache_.emplace(std::move(key), std::move(ids));
  }
}

void BpeModel::mergeWord(std::string_view word,
                         std::vector<int32_t> &out) const {
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  bool lastWasUnk = false;
  auto push = [&](int32_t id) {
    int32_t index = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, index - 1, -1});
  };
  for (size_t pos = 0; pos < word.size();) {
    size_t n = utf8::charLength(word, pos);
    std::string_view ch = word.substr(pos, n);
    pos += n;
    if (std::optional<int32_t> id = vocab_.find(ch)) {
      push(*id);
      lastWasUnk = false;
    } else if (options_.byteFallback && haveBytesOf(ch)) {
      for (char c : ch)
        push(byteIds_[static_cast<uint8_t>(c)]);
      lastWasUnk = false;
    } else if (options_.unk) {
      if (!(options_.fuseUnk && lastWasUnk))
        push(*options_.unk);
      lastWasUnk = true;
    }
    // Without unk or byte fallback the character is dropped, as in
    // Hugging Face tokenizers.
  }
  for (size_t i = 0; i + 1 < symbols.size(); ++i)
    symbols[i].next = static_cast<int32_t>(i + 1);

  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto consider = [&](int32_t left) {
    if (left < 0 || symbols[left].next < 0)
      return;
    const Symbol &l = symbols[left], &r = symbols[l.next];
    if (std::optional<MergeTable::Merge> m = merges_.find(l.id, r.id))
      heap.push({m->rank, left, l.id, r.id, m->merged});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i)
    consider(i);
  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    Symbol &l = symbols[c.left];
    // Stale entries: the left symbol changed or lost its right neighbour.
    if (l.id != c.leftId || l.next < 0 || symbols[l.next].id != c.rightId)
      continue;
    int32_t right = l.next;
    l.id = c.merged;
    l.next = symbols[right].next;
    if (l.next >= 0)
      symbols[l.next].prev = c.left;
    symbols[right].id = -1; // dead
    consider(l.prev);
    consider(c.left);
  }
  for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next)
    out.push_back(symbols[i].id);
}

} // namespace llmc::tok::detail
