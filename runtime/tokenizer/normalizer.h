//===- normalizer.h - tokenizer.json "normalizer" ---------------*- C++ -*-===//
//
// Supported: Replace (String or Regex pattern), Prepend, Append, Strip,
// Lowercase, Sequence, and NFC/NFD/NFKC/NFKD when built with ICU. Anything
// else is rejected at load time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "json.h"

#include <memory>
#include <string>
#include <string_view>

namespace llmc::tok::detail {

class Normalizer {
public:
  virtual ~Normalizer() = default;
  virtual std::string apply(std::string_view text) const = 0;
};

/// Null JSON gives nullptr (no normalization). Throws llmc::Error
/// "<origin>: unsupported normalizer 'X'".
std::unique_ptr<Normalizer> makeNormalizer(const json &spec,
                                           const std::string &origin);

/// Replaces every occurrence of `from` (non-empty) with `to`.
std::string replaceAll(std::string_view text, std::string_view from,
                       std::string_view to);

} // namespace llmc::tok::detail
