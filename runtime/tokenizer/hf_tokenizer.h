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

} // namespace llmc::tok::detail
