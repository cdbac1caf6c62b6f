//===- spm_style.h - Decoding SentencePiece-style vocabularies --*- C++ -*-===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmc::tok::detail {

/// How one token of a SentencePiece-style vocabulary turns into bytes.
enum class PieceKind : uint8_t { Normal, Byte, Verbatim };

/// Concatenates the pieces: Normal ones with '▁' as a space, Byte ones
/// (<0xXX>) as that byte, Verbatim ones (control, user-defined) as is. With
/// `stripLeadingSpace` (the dummy prefix, at the start of the text) one
/// leading space of the result is dropped.
std::string decodeSpmPieces(const std::vector<std::string_view> &pieces,
                            const std::vector<PieceKind> &kinds,
                            bool stripLeadingSpace);

/// The byte a "<0xXX>" piece stands for, or -1.
int parseBytePiece(const std::string &piece);

inline constexpr const char *kSpmSpace = "\xE2\x96\x81"; // U+2581 '▁'

} // namespace llmc::tok::detail
