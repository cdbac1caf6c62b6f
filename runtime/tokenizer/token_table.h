//===- token_table.h - Vocabularies and merges as flat tables --*- C++ -*-===//
//
// A tokenizer's vocabulary (texts by id, ids by text) and BPE merges held
// in a few flat arrays of 32-bit values: a text blob with offsets, and two
// open-addressing hash tables whose slots were filled when the tables were
// built. They are built once from a tokenizer file, written into a plan
// (serializeTables) and used in place when the plan loads (viewTables): no
// parsing, hashing or allocation per token at load, so a 256k vocabulary
// loads in milliseconds. Read-only after construction: any thread may look
// up at once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmc::tok::detail {

/// Texts by id, and ids by text among the entries registered for lookup.
class TokenTable {
public:
  int32_t size() const { return size_; }
  bool present(int32_t id) const {
    return id >= 0 && id < size_ && (flags_[id] & kPresent);
  }
  bool special(int32_t id) const {
    return present(id) && (flags_[id] & kSpecial);
  }
  /// The text of `id`; empty for an id with no entry.
  std::string_view text(int32_t id) const {
    return present(id) ? std::string_view(chars_ + offsets_[id],
                                          offsets_[id + 1] - offsets_[id])
                       : std::string_view();
  }
  /// The first id registered for lookup with this text.
  std::optional<int32_t> find(std::string_view text) const;

  static constexpr uint8_t kPresent = 1, kSpecial = 2;

private:
  friend class TokenTableBuilder;
  friend struct TableCodec;
  int32_t size_ = 0;
  const uint32_t *offsets_ = nullptr; // [size + 1] into chars_
  const uint8_t *flags_ = nullptr;    // [size]
  const char *chars_ = nullptr;
  const int32_t *slots_ = nullptr; // [mask + 1] ids, -1 empty
  uint32_t mask_ = 0;
  std::shared_ptr<const void> storage_; // what the pointers point into
};

class TokenTableBuilder {
public:
  /// Sets the text of `id` (a later call for the same id replaces it);
  /// with `findable`, the text also finds the id, unless an earlier entry
  /// already took that text.
  void set(int32_t id, std::string_view text, bool special, bool findable);
  TokenTable build();

private:
  struct Entry {
    std::string text;
    bool present = false, special = false;
  };
  std::vector<Entry> entries_;
  std::vector<std::pair<std::string, int32_t>> lookup_;
};

/// BPE merges: the rank (priority, lower first) and result of merging two
/// adjacent ids.
class MergeTable {
public:
  struct Merge {
    int32_t rank, merged;
  };
  /// `merges` are (left, right, merged), highest priority first; a repeated
  /// pair keeps its first rank.
  static MergeTable build(const std::vector<std::array<int32_t, 3>> &merges);
  std::optional<Merge> find(int32_t left, int32_t right) const;
  int32_t size() const { return count_; }

private:
  friend struct TableCodec;
  int32_t count_ = 0;
  const int32_t *merged_ = nullptr; // [count] by rank
  const int32_t *slots_ = nullptr;  // [mask + 1] x {left, right, rank}
  uint32_t mask_ = 0;
  std::shared_ptr<const void> storage_;
};

/// The tables as one blob of little-endian 32-bit words (tokenizer plans).
std::string serializeTables(const TokenTable &tokens, const MergeTable &merges);

/// Views the tables of a serializeTables blob in place when `blob` is
/// 4-byte aligned and `owner` keeps it alive, else copies it. Every offset,
/// id and slot is checked against the sizes: a corrupted blob throws
/// llmc::Error naming `origin`, never reads out of bounds.
void viewTables(std::string_view blob, std::shared_ptr<const void> owner,
                const std::string &origin, TokenTable &tokens,
                MergeTable &merges);

} // namespace llmc::tok::detail
