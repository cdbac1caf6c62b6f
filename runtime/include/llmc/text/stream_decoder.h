//===- stream_decoder.h - Incremental detokenization ------------*- C++ -*-===//
//
// Generated tokens arrive one at a time, and one character may span several
// tokens (byte-level pieces, <0xXX> byte fallback). StreamDecoder holds back
// bytes until they form whole characters, so every push returns valid UTF-8
// and the concatenation of all pushes plus flush() equals decode(ids).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/tokenizer/tokenizer.h"

namespace llmc::text {

using tok::Tokenizer;

class StreamDecoder {
public:
  /// The tokenizer must outlive the decoder. With skipSpecial, special tokens
  /// contribute nothing (as in decode(ids, true)).
  explicit StreamDecoder(const Tokenizer &tokenizer, bool skipSpecial = false);

  /// Complete UTF-8 text made available by `id`; bytes that cannot become
  /// valid come out as U+FFFD right away.
  std::string push(int32_t id);
  /// The held-back tail (an unfinished character) as U+FFFD; resets the
  /// decoder for a new text.
  std::string flush();

private:
  const Tokenizer &tokenizer_;
  bool skipSpecial_;
  bool atStart_ = true;
  std::string pending_;
};

} // namespace llmc::text
