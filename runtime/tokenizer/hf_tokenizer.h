//===- hf_tokenizer.h - Hugging Face tokenizer.json -------------*- C++ -*-===//
#pragma once

#include "llmc/tokenizer/tokenizer.h"

namespace llmc::tok::detail {

/// Model BPE only (byte-level or SentencePiece-style); see normalizer.h,
/// pre_tokenizer.h and decoder.h for the components understood.
std::unique_ptr<Tokenizer> loadHFTokenizer(std::string_view jsonText,
                                           std::string_view configText,
                                           const std::string &origin,
                                           const std::string &configOrigin);

/// tokenizer.json in the form plans store: the JSON without the vocabulary
/// and merges, then both as flat tables (token_table.h). Throws what
/// loading the file would.
std::string compileHFTokenizer(std::string_view jsonText,
                               const std::string &origin);
bool isCompiledHFTokenizer(std::string_view bytes);
/// Whether two compiled tokenizers tokenize alike (tokenizer.h's
/// sameTokenizer).
/// tokenizer_config.json without the added_tokens_decoder entries whose
/// content the compiled tokenizer's added_tokens already define: loading
/// skips those, and they are most of a large vocabulary's config.
std::string compactHFTokenizerConfig(std::string_view configText,
                                     std::string_view compiled,
                                     const std::string &configOrigin);
bool sameCompiledHFTokenizer(std::string_view a, std::string_view b);
/// Loads compileHFTokenizer's bytes, viewing the tables in place where the
/// bytes are 4-byte aligned and `owner` keeps them alive (else copying).
std::unique_ptr<Tokenizer>
loadCompiledHFTokenizer(std::string_view bytes,
                        std::shared_ptr<const void> owner,
                        std::string_view configText, const std::string &origin,
                        const std::string &configOrigin);

} // namespace llmc::tok::detail
