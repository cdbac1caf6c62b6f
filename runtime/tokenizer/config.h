//===- config.h - What tokenizer_config.json says ---------------*- C++ -*-===//
#pragma once

#include "added_tokens.h"
#include "json.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmc::tok::detail {

struct TokenizerConfig {
  std::optional<std::string> bosToken, eosToken, unkToken;
  std::optional<bool> addBos, addEos;  ///< only when the file says so
  std::vector<AddedToken> addedTokens; ///< from added_tokens_decoder
};

/// An added token as tokenizer.json's added_tokens and tokenizer_config.json's
/// added_tokens_decoder write it ({"content": ..., "special": ...}); its id
/// is `id` when given (the decoder's key), else the entry's "id". Throws
/// llmc::Error naming `where`.
AddedToken addedTokenOf(const json &entry, std::optional<int64_t> id,
                        const std::string &where);

/// Empty text or "{}" give an empty config. Throws llmc::Error naming
/// `origin` on malformed JSON.
TokenizerConfig parseTokenizerConfig(std::string_view text,
                                     const std::string &origin);

/// Adds bos/eos/unk/pad entries from special_tokens_map.json text to the
/// tokenizer_config.json text where they are missing; returns the JSON.
std::string mergeSpecialTokensMap(std::string_view configText,
                                  std::string_view mapText,
                                  const std::string &configOrigin,
                                  const std::string &mapOrigin);

} // namespace llmc::tok::detail
