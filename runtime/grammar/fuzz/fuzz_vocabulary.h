//===- fuzz_vocabulary.h - What the grammar fuzzers mask over ---*- C++ -*-===//
//
// Every byte (token id = the byte), then pieces of a JSON text of 2 to 6
// bytes (a quote with what follows it, words with their space, digits,
// URIs, cut UTF-8): trie subtrees big enough for the mask walk's shortcuts
// (a string's content as a chain of states, whole subtrees), whose masks
// the fuzzers check against asking every token. EOS last.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/grammar/matcher.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace llmc::grammar::fuzz {

inline std::shared_ptr<const TokenVocabulary> vocabulary() {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b)
    tokens.emplace_back(1, static_cast<char>(b));
  const std::string text =
      R"({"name": "Ada Lovelace", "tags": ["x-1", "y_2"], "n": -12.5e3, )"
      R"("ok": true, "url": "https://example.com/a/b?q=1#f", "when": )"
      R"("2024-01-02T03:04:05Z", "id": "AB-12cd", "note": null, )"
      "\"\xC3\xA9\": \"\xE6\x97\xA5\xE6\x9C\xAC text\", "
      R"("esc": "a\"b\\c\u00e9", "list": [{"k": 1}, {}]})";
  std::set<std::string> seen;
  for (size_t i = 0; i < text.size(); ++i)
    for (size_t n = 2; n <= 6 && i + n <= text.size(); ++n)
      if (seen.insert(text.substr(i, n)).second)
        tokens.push_back(text.substr(i, n));
  tokens.emplace_back(); // EOS
  return std::make_shared<TokenVocabulary>(std::move(tokens));
}

/// Traps unless `mask` (m's) holds exactly the tokens m allows.
inline void checkMaskIsExact(Matcher &m, const TokenMask &mask, int32_t eos) {
  for (int32_t t = 0; t < mask.size(); ++t)
    if (mask.test(t) != (t == eos ? m.canEnd() : m.allows(t)))
      __builtin_trap(); // the mask and the walk disagree on token t
}

} // namespace llmc::grammar::fuzz
