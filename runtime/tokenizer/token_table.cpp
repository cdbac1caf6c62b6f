//===- token_table.cpp - Building, storing and viewing flat tables --------===//
#include "token_table.h"

#include "llmc/support/error.h"

#include <algorithm>
#include <cstring>

namespace llmc::tok::detail {
namespace {

constexpr uint32_t kMagic = 0x4b4f544c; // "LTOK"
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderWords = 7;
constexpr int32_t kMaxEntries = 1 << 24;

uint64_t textHash(std::string_view s) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return h ^ (h >> 32);
}

uint64_t pairHash(int32_t a, int32_t b) {
  uint64_t x = (uint64_t(uint32_t(a)) << 32) | uint32_t(b);
  x += 0x9e3779b97f4a7c15ull; // splitmix64
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The smallest power of two at least `n` * 5 / 4 + 1: a table never fills,
/// so a probe always meets an empty slot.
uint32_t slotsFor(size_t n) {
  uint32_t s = 16;
  while (s < n + n / 4 + 1)
    s <<= 1;
  return s;
}

size_t words(size_t bytes) { return (bytes + 3) / 4; }

} // namespace

std::optional<int32_t> TokenTable::find(std::string_view text) const {
  if (!slots_)
    return std::nullopt;
  for (uint32_t i = uint32_t(textHash(text)) & mask_;; i = (i + 1) & mask_) {
    int32_t id = slots_[i];
    if (id < 0)
      return std::nullopt;
    if (this->text(id) == text)
      return id;
  }
}

void TokenTableBuilder::set(int32_t id, std::string_view text, bool special,
                            bool findable) {
  if (id < 0 || id >= kMaxEntries)
    return;
  if (size_t(id) >= entries_.size())
    entries_.resize(size_t(id) + 1);
  entries_[size_t(id)] = {std::string(text), true, special};
  if (findable)
    lookup_.emplace_back(std::string(text), id);
}

TokenTable TokenTableBuilder::build() {
  const size_t V = entries_.size();
  size_t chars = 0;
  for (const Entry &e : entries_)
    chars += e.text.size();
  const uint32_t slots = slotsFor(lookup_.size());
  // One allocation in the serialized layout's order, so that building and
  // viewing give the same object.
  auto store = std::make_shared<std::vector<uint32_t>>((V + 1) + words(V) +
                                                       words(chars) + slots);
  uint32_t *offsets = store->data();
  auto *flags = reinterpret_cast<uint8_t *>(offsets + V + 1);
  char *text = reinterpret_cast<char *>(offsets + V + 1 + words(V));
  auto *slotArray =
      reinterpret_cast<int32_t *>(offsets + V + 1 + words(V) + words(chars));
  uint32_t at = 0;
  for (size_t id = 0; id < V; ++id) {
    offsets[id] = at;
    const Entry &e = entries_[id];
    std::memcpy(text + at, e.text.data(), e.text.size());
    at += uint32_t(e.text.size());
    flags[id] = uint8_t((e.present ? TokenTable::kPresent : 0) |
                        (e.special ? TokenTable::kSpecial : 0));
  }
  offsets[V] = at;
  std::fill(slotArray, slotArray + slots, -1);
  TokenTable t;
  t.size_ = int32_t(V);
  t.offsets_ = offsets;
  t.flags_ = flags;
  t.chars_ = text;
  t.slots_ = slotArray;
  t.mask_ = slots - 1;
  for (const auto &[s, id] : lookup_) {
    // An id whose text was replaced afterwards is found by its last text
    // only where that text was registered.
    if (t.text(id) != s)
      continue;
    uint32_t i = uint32_t(textHash(s)) & t.mask_;
    bool taken = false;
    for (; slotArray[i] >= 0; i = (i + 1) & t.mask_)
      if (t.text(slotArray[i]) == s) {
        taken = true; // the first registration wins
        break;
      }
    if (!taken)
      slotArray[i] = id;
  }
  t.storage_ = std::move(store);
  entries_.clear();
  lookup_.clear();
  return t;
}

MergeTable
MergeTable::build(const std::vector<std::array<int32_t, 3>> &merges) {
  const uint32_t slots = slotsFor(merges.size());
  auto store = std::make_shared<std::vector<uint32_t>>(merges.size() +
                                                       size_t(slots) * 3);
  auto *merged = reinterpret_cast<int32_t *>(store->data());
  int32_t *slotArray = merged + merges.size();
  std::fill(slotArray, slotArray + size_t(slots) * 3, -1);
  MergeTable m;
  m.mask_ = slots - 1;
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto &[a, b, ab] = merges[r];
    merged[r] = ab;
    uint32_t i = uint32_t(pairHash(a, b)) & m.mask_;
    bool taken = false;
    for (; slotArray[3 * i] >= 0; i = (i + 1) & m.mask_)
      if (slotArray[3 * i] == a && slotArray[3 * i + 1] == b) {
        taken = true; // a repeated pair keeps its first rank
        break;
      }
    if (!taken) {
      slotArray[3 * i] = a;
      slotArray[3 * i + 1] = b;
      slotArray[3 * i + 2] = int32_t(r);
    }
  }
  m.count_ = int32_t(merges.size());
  m.merged_ = merged;
  m.slots_ = slotArray;
  m.storage_ = std::move(store);
  return m;
}

std::optional<MergeTable::Merge> MergeTable::find(int32_t left,
                                                  int32_t right) const {
  if (!slots_ || left < 0)
    return std::nullopt;
  for (uint32_t i = uint32_t(pairHash(left, right)) & mask_;;
       i = (i + 1) & mask_) {
    const int32_t *s = slots_ + 3 * size_t(i);
    if (s[0] < 0)
      return std::nullopt;
    if (s[0] == left && s[1] == right)
      return Merge{s[2], merged_[s[2]]};
  }
}

/// The serialized layout, shared by writing and viewing.
struct TableCodec {
  static std::string write(const TokenTable &t, const MergeTable &m) {
    const uint32_t V = uint32_t(t.size_), chars = t.offsets_[V];
    const uint32_t tokenSlots = t.mask_ + 1, M = uint32_t(m.count_),
                   mergeSlots = m.slots_ ? m.mask_ + 1 : 0;
    std::vector<uint32_t> out = {kMagic,     kVersion, V,         chars,
                                 tokenSlots, M,        mergeSlots};
    auto append = [&](const void *p, size_t bytes) {
      if (bytes == 0)
        return;
      size_t at = out.size();
      out.resize(at + words(bytes), 0);
      std::memcpy(out.data() + at, p, bytes);
    };
    append(t.offsets_, (size_t(V) + 1) * 4);
    append(t.flags_, V);
    append(t.chars_, chars);
    append(t.slots_, size_t(tokenSlots) * 4);
    append(m.merged_, size_t(M) * 4);
    append(m.slots_, size_t(mergeSlots) * 12);
    return std::string(reinterpret_cast<const char *>(out.data()),
                       out.size() * 4);
  }

  static void view(const uint32_t *w, size_t n,
                   std::shared_ptr<const void> owner, const std::string &origin,
                   TokenTable &t, MergeTable &m) {
    auto bad = [&](const std::string &what) {
      return Error(origin + ": corrupted tokenizer tables: " + what);
    };
    if (n < kHeaderWords || w[0] != kMagic)
      throw bad("bad magic");
    if (w[1] != kVersion)
      throw bad("version " + std::to_string(w[1]) + ", expected " +
                std::to_string(kVersion));
    const uint64_t V = w[2], chars = w[3], tokenSlots = w[4], M = w[5],
                   mergeSlots = w[6];
    auto pow2 = [](uint64_t x) { return x && !(x & (x - 1)); };
    if (V > uint64_t(kMaxEntries) || M > uint64_t(kMaxEntries) ||
        !pow2(tokenSlots) || tokenSlots > (uint64_t(1) << 26) ||
        (mergeSlots && !pow2(mergeSlots)) || mergeSlots > (uint64_t(1) << 26))
      throw bad("sizes out of range");
    const uint64_t need = kHeaderWords + (V + 1) + words(V) + words(chars) +
                          tokenSlots + M + 3 * mergeSlots;
    if (need != n)
      throw bad(std::to_string(n * 4) + " bytes, its sizes make " +
                std::to_string(need * 4));
    const uint32_t *p = w + kHeaderWords;
    const uint32_t *offsets = p;
    p += V + 1;
    const auto *flags = reinterpret_cast<const uint8_t *>(p);
    p += words(V);
    const auto *text = reinterpret_cast<const char *>(p);
    p += words(chars);
    const auto *tslots = reinterpret_cast<const int32_t *>(p);
    p += tokenSlots;
    const auto *merged = reinterpret_cast<const int32_t *>(p);
    p += M;
    const auto *mslots = reinterpret_cast<const int32_t *>(p);

    if (offsets[0] != 0 || offsets[V] != chars)
      throw bad("text offsets do not span the text");
    for (uint64_t i = 0; i < V; ++i)
      if (offsets[i + 1] < offsets[i])
        throw bad("text offsets go backwards at id " + std::to_string(i));
    bool empty = false;
    for (uint64_t i = 0; i < tokenSlots; ++i) {
      if (tslots[i] < 0) {
        empty = empty || tslots[i] == -1;
        if (tslots[i] != -1)
          throw bad("token slot " + std::to_string(i));
      } else if (uint64_t(tslots[i]) >= V ||
                 !(flags[tslots[i]] & TokenTable::kPresent)) {
        throw bad("token slot " + std::to_string(i) + " names id " +
                  std::to_string(tslots[i]));
      }
    }
    if (!empty)
      throw bad("the token table has no empty slot");
    for (uint64_t r = 0; r < M; ++r)
      if (merged[r] < 0 || uint64_t(merged[r]) >= V)
        throw bad("merge " + std::to_string(r) + " makes id " +
                  std::to_string(merged[r]));
    empty = mergeSlots == 0;
    for (uint64_t i = 0; i < mergeSlots; ++i) {
      const int32_t *s = mslots + 3 * i;
      if (s[0] == -1) {
        empty = true;
        continue;
      }
      if (s[0] < 0 || uint64_t(s[0]) >= V || s[1] < 0 || uint64_t(s[1]) >= V ||
          s[2] < 0 || uint64_t(s[2]) >= M)
        throw bad("merge slot " + std::to_string(i));
    }
    if (!empty)
      throw bad("the merge table has no empty slot");

    t.size_ = int32_t(V);
    t.offsets_ = offsets;
    t.flags_ = flags;
    t.chars_ = text;
    t.slots_ = tslots;
    t.mask_ = uint32_t(tokenSlots - 1);
    t.storage_ = owner;
    m.count_ = int32_t(M);
    m.merged_ = merged;
    m.slots_ = mergeSlots ? mslots : nullptr;
    m.mask_ = mergeSlots ? uint32_t(mergeSlots - 1) : 0;
    m.storage_ = std::move(owner);
  }
};

std::string serializeTables(const TokenTable &tokens,
                            const MergeTable &merges) {
  return TableCodec::write(tokens, merges);
}

void viewTables(std::string_view blob, std::shared_ptr<const void> owner,
                const std::string &origin, TokenTable &tokens,
                MergeTable &merges) {
  if (blob.size() % 4 != 0)
    throw Error(origin +
                ": corrupted tokenizer tables: " + std::to_string(blob.size()) +
                " bytes, not a whole number of words");
  if (!owner || reinterpret_cast<uintptr_t>(blob.data()) % 4 != 0) {
    auto copy = std::make_shared<std::vector<uint32_t>>(blob.size() / 4);
    if (!blob.empty()) // an empty view may have no address
      std::memcpy(copy->data(), blob.data(), blob.size());
    TableCodec::view(copy->data(), copy->size(), copy, origin, tokens, merges);
    return;
  }
  TableCodec::view(reinterpret_cast<const uint32_t *>(blob.data()),
                   blob.size() / 4, std::move(owner), origin, tokens, merges);
}

} // namespace llmc::tok::detail
