//===- spm_tokenizer.h - SentencePiece tokenizer.model ----------*- C++ -*-===//
#pragma once

#include "llmc/tokenizer/tokenizer.h"

namespace llmc::tok::detail {

/// Encodes with the sentencepiece library; added tokens from
/// tokenizer_config.json's added_tokens_decoder are matched first, and each
/// piece of text between them gets its own dummy prefix (transformers'
/// legacy Llama behaviour). Decodes like transformers: special pieces print
/// as their text unless skipped, and the first leading space is dropped.
std::unique_ptr<Tokenizer> loadSentencePiece(std::string_view modelBytes,
                                             std::string_view configText,
                                             const std::string &origin,
                                             const std::string &configOrigin);

} // namespace llmc::tok::detail
