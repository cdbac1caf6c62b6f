//===- byte_tokenizer.h - Bytes as tokens, for tests without a model -*- C++
//-*-===//
#pragma once

#include "llmc/tokenizer/tokenizer.h"

namespace llmc::test {

/// Token id = byte value (vocabulary 256): text round-trips, any id decodes.
class ByteTokenizer : public tok::Tokenizer {
public:
  std::vector<int32_t> encode(std::string_view text, bool) const override {
    std::vector<int32_t> ids;
    for (unsigned char c : text)
      ids.push_back(c);
    return ids;
  }
  std::string decode(const std::vector<int32_t> &ids, bool) const override {
    std::string s;
    for (int32_t id : ids)
      s += static_cast<char>(id);
    return s;
  }
  std::string tokenBytes(int32_t id) const override {
    return std::string(1, static_cast<char>(id));
  }
  std::string tokenText(int32_t id) const override { return tokenBytes(id); }
  int32_t vocabSize() const override { return 256; }
  std::optional<int32_t> tokenId(std::string_view) const override {
    return std::nullopt;
  }
};

} // namespace llmc::test
