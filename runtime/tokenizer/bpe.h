//===- bpe.h - BPE by merge rank --------------------------------*- C++ -*-===//
//
// The Hugging Face / GPT-2 BPE: a word starts as one symbol per character and
// the adjacent pair with the lowest merge rank is merged until none is left.
// A heap keyed by (rank, position) makes a word O(n log n); results for
// repeated words come from a bounded cache.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "token_table.h"

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llmc::tok::detail {

struct BpeOptions {
  std::optional<int32_t> unk; ///< for characters outside the vocabulary
  bool fuseUnk = false;       ///< consecutive unknowns become one unk
  bool byteFallback = false;  ///< unknown characters become <0xXX> tokens
  bool ignoreMerges = false;  ///< a word in the vocabulary is one token
};

class BpeModel {
public:
  /// `vocab` (the model's vocabulary: what a character or word is looked up
  /// in) must outlive the model; `merges` are by rank.
  BpeModel(const TokenTable &vocab, MergeTable merges, BpeOptions options);

  /// Appends the ids of one pre-tokenized word.
  void encodeWord(std::string_view word, std::vector<int32_t> &out) const;
  std::optional<int32_t> find(std::string_view text) const {
    return vocab_.find(text);
  }
  const MergeTable &merges() const { return merges_; }

private:
  void mergeWord(std::string_view word, std::vector<int32_t> &out) const;
  bool haveBytesOf(std::string_view ch) const;

  const TokenTable &vocab_;
  MergeTable merges_;
  BpeOptions options_;
  std::array<int32_t, 256> byteIds_{}; // -1: no <0xXX> token

  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

} // namespace llmc::tok::detail
