//===- added_tokens.h - Matching added tokens in raw text -------*- C++ -*-===//
//
// Added tokens (special ones like "<|endoftext|>" and user-defined ones) are
// cut out of the text before normalization and BPE, as Hugging Face does:
// leftmost match first, longest at the same position.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llmc::tok::detail {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false;     ///< also swallows whitespace on its left
  bool rstrip = false;     ///< also swallows whitespace on its right
  bool singleWord = false; ///< only matches between non-word characters
};

/// A piece of the input: either text to tokenize or one added token.
struct Segment {
  std::string_view text;
  size_t offset = 0; ///< where `text` starts in the input
  int32_t addedId = -1;
};

class AddedTokenMatcher {
public:
  /// Empty contents are ignored; a later duplicate content replaces the
  /// earlier one.
  void add(const AddedToken &token);
  const std::vector<AddedToken> &tokens() const { return tokens_; }
  bool contains(const std::string &content) const {
    return index_.count(content) != 0;
  }
  std::vector<Segment> split(std::string_view text) const;

private:
  std::vector<AddedToken> tokens_;
  std::unordered_map<std::string, size_t> index_; // content -> tokens_
  // Token indices by first byte, longest content first.
  std::vector<std::vector<uint32_t>> byFirstByte_ =
      std::vector<std::vector<uint32_t>>(256);
};

} // namespace llmc::tok::detail
