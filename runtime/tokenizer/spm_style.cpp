#include "spm_style.h"

#include "normalizer.h"

namespace llmc::tok::detail {

int parseBytePiece(const std::string &piece) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    return -1;
  };
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>')
    return -1;
  int hi = hex(piece[3]), lo = hex(piece[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string decodeSpmPieces(const std::vector<std::string_view> &pieces,
                            const std::vector<PieceKind> &kinds,
                            bool stripLeadingSpace) {
  std::string out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::string piece(pieces[i]);
    switch (kinds[i]) {
    case PieceKind::Normal:
      out += replaceAll(piece, kSpmSpace, " ");
      break;
    case PieceKind::Byte: {
      int b = parseBytePiece(piece);
      if (b >= 0)
        out += static_cast<char>(b);
      break;
    }
    case PieceKind::Verbatim:
      out += piece;
      break;
    }
  }
  if (stripLeadingSpace && !out.empty() && out[0] == ' ')
    out.erase(0, 1);
  return out;
}

} // namespace llmc::tok::detail
