#include "added_tokens.h"

#include <algorithm>

namespace llmc::tok::detail {

namespace {
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}
// Word characters for single_word: ASCII alphanumerics, '_' and any
// non-ASCII byte (letters of other scripts).
bool isWordByte(char c) {
  auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') ||
         (u >= 'A' && u <= 'Z') || u == '_';
}
} // namespace

void AddedTokenMatcher::add(const AddedToken &token) {
  if (token.content.empty())
    return;
  // Gemma 3 has 6415 added tokens: no scan of them per token added.
  if (auto it = index_.find(token.content); it != index_.end()) {
    tokens_[it->second] = token;
    return;
  }
  index_.emplace(token.content, tokens_.size());
  tokens_.push_back(token);
  // Longest first; among equal lengths, in the order added.
  auto &bucket = byFirstByte_[static_cast<uint8_t>(token.content[0])];
  const size_t length = token.content.size();
  bucket.insert(std::upper_bound(bucket.begin(), bucket.end(), length,
                                 [&](size_t n, uint32_t i) {
                                   return n > tokens_[i].content.size();
                                 }),
                static_cast<uint32_t>(tokens_.size() - 1));
}

std::vector<Segment> AddedTokenMatcher::split(std::string_view text) const {
  std::vector<Segment> out;
  size_t textStart = 0; // start of the pending plain text
  auto emitText = [&](size_t end) {
    if (end > textStart)
      out.push_back({text.substr(textStart, end - textStart), textStart, -1});
  };
  for (size_t pos = 0; pos < text.size() && !tokens_.empty(); ++pos) {
    const AddedToken *match = nullptr;
    for (uint32_t index : byFirstByte_[static_cast<uint8_t>(text[pos])]) {
      const AddedToken &t = tokens_[index];
      if (text.compare(pos, t.content.size(), t.content) != 0)
        continue;
      size_t end = pos + t.content.size();
      if (t.singleWord && ((pos > 0 && isWordByte(text[pos - 1])) ||
                           (end < text.size() && isWordByte(text[end]))))
        continue;
      match = &t;
      break;
    }
    if (!match)
      continue;
    size_t start = pos, end = pos + match->content.size();
    if (match->lstrip)
      while (start > textStart && isSpace(text[start - 1]))
        --start;
    if (match->rstrip)
      while (end < text.size() && isSpace(text[end]))
        ++end;
    emitText(start);
    out.push_back({text.substr(start, end - start), start, match->id});
    textStart = end;
    pos = end - 1;
  }
  emitText(text.size());
  return out;
}

} // namespace llmc::tok::detail
