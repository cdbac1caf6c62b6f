//===- byte_level.h - GPT-2's byte <-> printable character map --*- C++ -*-===//
//
// Byte-level BPE vocabularies spell every byte as a printable code point
// ('Ġ' for a space) so that merges never see whitespace or control bytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace llmc::tok::detail {

/// Appends the byte-level spelling of every byte of `bytes`.
void appendByteLevel(std::string &out, std::string_view bytes);

/// Maps a byte-level spelled string back to bytes. A character outside the
/// byte alphabet (e.g. in an added token) is copied as its own UTF-8.
std::string fromByteLevel(std::string_view text);

} // namespace llmc::tok::detail
