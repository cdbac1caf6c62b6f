//===- vocab_tokenizer.h - What every tokenizer kind shares -----*- C++ -*-===//
//
// The id <-> text tables, added-token splitting, BOS/EOS handling and the
// decode plumbing are the same for tokenizer.json, tokenizer.model and GGUF;
// a kind only supplies how plain text becomes ids and how ids become bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "added_tokens.h"
#include "llmc/tokenizer/tokenizer.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace llmc::tok::detail {

class VocabTokenizer : public Tokenizer {
public:
  std::vector<int32_t> encode(std::string_view text,
                              bool addSpecial) const override;
  std::string decode(const std::vector<int32_t> &ids,
                     bool skipSpecial) const override;
  std::string decodeBytes(const std::vector<int32_t> &ids,
                          bool skipSpecial) const override;
  std::string tokenBytes(int32_t id) const override;
  std::string tokenText(int32_t id) const override;
  int32_t vocabSize() const override;
  std::optional<int32_t> tokenId(std::string_view text) const override;
  bool isSpecial(int32_t id) const override;

protected:
  /// Registers a vocabulary entry; a later entry for the same id wins.
  void setToken(int32_t id, std::string text, bool special);
  /// Registers an added token (also as a vocabulary entry).
  void addAddedToken(const AddedToken &token);
  bool hasToken(int32_t id) const {
    return id >= 0 && static_cast<size_t>(id) < texts_.size() && present_[id];
  }
  /// Resolves bos/eos from token texts (unknown texts are ignored).
  void setBosEos(const std::optional<std::string> &bosText,
                 const std::optional<std::string> &eosText);

  /// Appends the ids of plain text (no added tokens in it). `startOfText` is
  /// true when the segment begins the input.
  virtual void encodeText(std::string_view text, bool startOfText,
                          std::vector<int32_t> &out) const = 0;
  /// Bytes of known, not skipped ids; `atStart` when they begin the text.
  virtual std::string decodeKnown(const std::vector<int32_t> &ids,
                                  bool atStart) const = 0;
  /// What encode(addSpecial) puts around the text; the default is BOS/EOS
  /// per addBos/addEos.
  virtual void specialAround(std::vector<int32_t> &prefix,
                             std::vector<int32_t> &suffix) const;

  std::vector<std::string> texts_;
  std::vector<uint8_t> present_, special_;
  std::unordered_map<std::string, int32_t> idOfText_;
  AddedTokenMatcher added_;
};

} // namespace llmc::tok::detail
