//===- bpe.h - BPE by merge rank --------------------------------*- C++ -*-===//
//
// The Hugging Face / GPT-2 BPE: a word starts as one symbol per character and
// the adjacent pair with the lowest merge rank is merged until none is left.
// A heap keyed by (rank, position) makes a word O(n log n); results for
// repeated words come from a bounded cache.
//
//===----------------------------------------------------------------------===//
#pragma once

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
  /// `merges` are (left id, right id, merged id), highest priority first.
  BpeModel(std::unordered_map<std::string, int32_t> vocab,
           const std::vector<std::array<int32_t, 3>> &merges,
           BpeOptions options);

  /// Appends the ids of one pre-tokenized word.
  void encodeWord(std::string_view word, std::vector<int32_t> &out) const;
  std::optional<int32_t> find(std::string_view text) const;

private:
  void mergeWord(std::string_view word, std::vector<int32_t> &out) const;

  std::unordered_map<std::string, int32_t> vocab_;
  struct Merge {
    int32_t rank, merged;
  };
  std::unordered_map<uint64_t, Merge> merges_;
  BpeOptions options_;
  std::array<int32_t, 256> byteIds_{};
  bool haveAllBytes_ = false;

  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

} // namespace llmc::tok::detail
