//===- utf8.h - UTF-8 helpers for text that may be invalid ------*- C++ -*-===//
//
// Tokenizer input, token bytes and template strings are arbitrary bytes:
// every helper here accepts invalid UTF-8 and never reads past the end.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace llmc::utf8 {

/// Length of the well-formed UTF-8 sequence at s[pos], or 0 if the bytes there
/// do not start one (a lone byte, an overlong form, a surrogate, or a sequence
/// cut off by the end of s).
size_t validSequenceLength(std::string_view s, size_t pos);

/// Length of the character at s[pos] for splitting text into symbols: the
/// valid sequence length, or 1 for an invalid byte.
inline size_t charLength(std::string_view s, size_t pos) {
  size_t n = validSequenceLength(s, pos);
  return n ? n : 1;
}

/// Appends the UTF-8 encoding of a code point (must be <= 0x10FFFF).
void appendCodePoint(std::string &out, uint32_t cp);

/// Decodes the valid sequence of length n at s[pos].
uint32_t decodeCodePoint(std::string_view s, size_t pos, size_t n);

/// The code point at s[pos], moving pos past it; nullopt (pos unchanged)
/// when the bytes there do not start a valid sequence.
std::optional<uint32_t> nextCodePoint(std::string_view s, size_t &pos);

/// Copies s, replacing each maximal invalid subpart with U+FFFD.
std::string sanitizeUtf8(std::string_view s);

/// True when s is well-formed UTF-8.
bool isValidUtf8(std::string_view s);

/// Length of the longest prefix of s that may be emitted now: every complete
/// character, plus invalid bytes that no later byte can repair. What remains
/// is the start of a character that later bytes could still complete.
size_t emittablePrefix(std::string_view s);

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

} // namespace llmc::utf8
