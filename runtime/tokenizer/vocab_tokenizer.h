//===- vocab_tokenizer.h - What every tokenizer kind shares -----*- C++ -*-===//
//
// The id <-> text tables, added-token splitting, BOS/EOS handling and the
// decode plumbing are the same for tokenizer.json, tokenizer.model and GGUF;
// a kind only supplies how plain text becomes ids and how ids become bytes.
// The model's own vocabulary is a TokenTable (flat, mapped from a plan where
// it can be); added tokens, a few thousand at most, sit beside it and win
// over it for their ids and texts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "added_tokens.h"
#include "llmc/tokenizer/tokenizer.h"
#include "token_table.h"

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
  /// The model's vocabulary, built or viewed by the kind before anything
  /// is looked up.
  TokenTable vocab_;
  /// Registers an added token: its text finds its id and its id decodes to
  /// its text, over the vocabulary's entries.
  void addAddedToken(const AddedToken &token);
  bool hasToken(int32_t id) const {
    return vocab_.present(id) || addedText_.count(id);
  }
  /// The text of a known id (an added token's, else the vocabulary's).
  std::string_view textOf(int32_t id) const;
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

  AddedTokenMatcher added_;

private:
  std::unordered_map<int32_t, std::string> addedText_;
  std::unordered_map<int32_t, bool> addedSpecial_;
  std::unordered_map<std::string, int32_t> addedIds_;
};

} // namespace llmc::tok::detail
