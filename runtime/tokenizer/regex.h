//===- regex.h - PCRE2 patterns for pre-tokenizer splits --------*- C++ -*-===//
//
// Pre-tokenizer patterns use Unicode classes (\p{L}, \p{N}) and lookahead, so
// they run on PCRE2 in UTF + UCP mode (JIT-compiled when available). Input
// may be invalid UTF-8: invalid bytes never match and end up between matches.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmc::tok::detail {

class Regex {
public:
  /// Throws llmc::Error naming `origin` if the pattern does not compile.
  /// `literal` matches the pattern text as is.
  Regex(const std::string &pattern, bool literal, const std::string &origin);
  ~Regex();
  Regex(const Regex &) = delete;
  Regex &operator=(const Regex &) = delete;

  /// Non-empty, non-overlapping matches as [begin, end) byte ranges.
  std::vector<std::pair<size_t, size_t>> findAll(std::string_view text) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The split patterns of well-known byte-level tokenizers.
extern const char *const kGpt2Pattern;
extern const char *const kLlama3Pattern;
extern const char *const kQwen2Pattern;

} // namespace llmc::tok::detail
