#include "byte_level.h"

#include "llmc/support/utf8.h"

#include <array>
#include <unordered_map>

namespace llmc::tok::detail {

namespace {
struct Tables {
  std::array<std::string, 256> spelling;
  std::unordered_map<uint32_t, char> byteOf;

  Tables() {
    // Printable Latin-1 bytes spell themselves; the rest take code points
    // from 256 upward in byte order (GPT-2's bytes_to_unicode).
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
                       (b >= 0xAE && b <= 0xFF);
      uint32_t cp = printable ? b : next++;
      utf8::appendCodePoint(spelling[b], cp);
      byteOf[cp] = static_cast<char>(b);
    }
  }
};

const Tables &tables() {
  static const Tables t;
  return t;
}
} // namespace

void appendByteLevel(std::string &out, std::string_view bytes) {
  const Tables &t = tables();
  for (char c : bytes)
    out += t.spelling[static_cast<uint8_t>(c)];
}

std::string fromByteLevel(std::string_view text) {
  const Tables &t = tables();
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    size_t n = utf8::validSequenceLength(text, pos);
    if (!n) {
      out += text[pos++];
      continue;
    }
    auto it = t.byteOf.find(utf8::decodeCodePoint(text, pos, n));
    if (it != t.byteOf.end())
      out += it->second;
    else
      out.append(text.substr(pos, n));
    pos += n;
  }
  return out;
}

} // namespace llmc::tok::detail
