//===- decoder.h - tokenizer.json "decoder" ---------------------*- C++ -*-===//
//
// Turns token strings back into bytes. Supported: ByteLevel, Metaspace,
// Replace, ByteFallback, Fuse, Strip, Sequence. The result is raw bytes
// (ByteFallback may leave partial UTF-8); callers sanitize.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "json.h"

#include <memory>
#include <string>
#include <vector>

namespace llmc::tok::detail {

class Decoder {
public:
  virtual ~Decoder() = default;
  /// `atStart`: the first token begins the text (start-of-text stripping
  /// applies); false when decoding one token in the middle of a stream.
  virtual void apply(std::vector<std::string> &tokens, bool atStart) const = 0;
};

/// Null JSON gives nullptr (tokens are concatenated). Throws llmc::Error
/// "<origin>: unsupported decoder 'X'".
std::unique_ptr<Decoder> makeDecoder(const json &spec,
                                     const std::string &origin);

} // namespace llmc::tok::detail
