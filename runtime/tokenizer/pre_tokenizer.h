//===- pre_tokenizer.h - tokenizer.json "pre_tokenizer" ---------*- C++ -*-===//
//
// Splits normalized text into the words BPE runs on. Supported: ByteLevel
// (add_prefix_space, use_regex), Split (String/Regex pattern, every
// behavior, invert), Metaspace (replacement, prepend_scheme / legacy
// add_prefix_space, split), Digits, Whitespace, WhitespaceSplit,
// Punctuation, Sequence.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "json.h"

#include <memory>
#include <string>
#include <vector>

namespace llmc::tok::detail {

class PreTokenizer {
public:
  virtual ~PreTokenizer() = default;
  /// Rewrites `words` in place. `startOfText`: the segment begins the input
  /// (Metaspace prepend_scheme "first").
  virtual void apply(std::vector<std::string> &words,
                     bool startOfText) const = 0;
};

/// Null JSON gives nullptr (the whole segment is one word). Throws
/// llmc::Error "<origin>: unsupported pre_tokenizer 'X'".
std::unique_ptr<PreTokenizer> makePreTokenizer(const json &spec,
                                               const std::string &origin);

/// A split by a regex with Hugging Face's SplitDelimiterBehavior.
enum class SplitBehavior {
  Removed,
  Isolated,
  MergedWithPrevious,
  MergedWithNext,
  Contiguous
};
class Regex;
std::unique_ptr<PreTokenizer> makeRegexSplit(std::shared_ptr<Regex> regex,
                                             SplitBehavior behavior,
                                             bool invert);
/// GPT-2 style: optional regex split, then bytes spelled as characters.
std::unique_ptr<PreTokenizer>
makeByteLevel(std::shared_ptr<Regex> regex /* null: no split */,
              bool addPrefixSpace);

} // namespace llmc::tok::detail
