//===- fuzz_tokenizer.h - A fuzz input through a loader ----*- C++ -*-===//
//
// What each tokenizer fuzzer does with its bytes: load them as `kind`, and
// if they load, encode and decode without crashing. llmc::Error is the only
// way to refuse.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/support/error.h"
#include "llmc/tokenizer/tokenizer.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

inline int fuzzTokenizer(llmc::tok::TokenizerKind kind, const uint8_t *data,
                         size_t size, const char *name) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  try {
    auto tokenizer = llmc::tok::loadTokenizerFromBytes(kind, bytes, "{}", name);
    auto ids = tokenizer->encode("Hello, world! <|endoftext|> 123 caf\xC3\xA9 "
                                 "\xF0\x9F\x98\x80 \xFF",
                                 true);
    tokenizer->decode(ids);
    tokenizer->decode({-1, 0, 1, 2, 1 << 30}, true);
    for (int32_t id = 0; id < 4; ++id)
      tokenizer->tokenBytes(id);
  } catch (const llmc::Error &) {
  }
  return 0;
}
