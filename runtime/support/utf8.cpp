#include "llmc/support/utf8.h"

namespace llmc::utf8 {

namespace {
inline uint8_t byteAt(std::string_view s, size_t i) {
  return static_cast<uint8_t>(s[i]);
}

// Per RFC 3629: the allowed range of the second byte depends on the first;
// the others are plain continuation bytes.
struct LeadInfo {
  size_t length;
  uint8_t lo, hi;
};

LeadInfo leadInfo(uint8_t b) {
  if (b < 0x80)
    return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF)
    return {2, 0x80, 0xBF};
  if (b == 0xE0)
    return {3, 0xA0, 0xBF};
  if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF)
    return {3, 0x80, 0xBF};
  if (b == 0xED)
    return {3, 0x80, 0x9F};
  if (b == 0xF0)
    return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3)
    return {4, 0x80, 0xBF};
  if (b == 0xF4)
    return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// Number of bytes at s[pos] that form a valid (possibly incomplete) prefix of
// a UTF-8 sequence, and the full length that sequence needs.
std::pair<size_t, size_t> validPrefix(std::string_view s, size_t pos) {
  LeadInfo info = leadInfo(byteAt(s, pos));
  if (info.length <= 1)
    return {info.length, info.length};
  size_t got = 1;
  while (got < info.length && pos + got < s.size()) {
    uint8_t b = byteAt(s, pos + got);
    uint8_t lo = got == 1 ? info.lo : 0x80, hi = got == 1 ? info.hi : 0xBF;
    if (b < lo || b > hi)
      break;
    ++got;
  }
  return {got, info.length};
}
} // namespace

size_t validSequenceLength(std::string_view s, size_t pos) {
  if (pos >= s.size())
    return 0;
  auto [got, need] = validPrefix(s, pos);
  return got == need ? need : 0;
}

void appendCodePoint(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

uint32_t decodeCodePoint(std::string_view s, size_t pos, size_t n) {
  static constexpr uint8_t kLeadMask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  uint32_t cp = byteAt(s, pos) & kLeadMask[n];
  for (size_t i = 1; i < n; ++i)
    cp = (cp << 6) | (byteAt(s, pos + i) & 0x3F);
  return cp;
}

std::string sanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) {
    auto [got, need] = validPrefix(s, pos);
    if (got == need && need > 0) {
      out.append(s.substr(pos, need));
      pos += need;
    } else {
      out += kReplacementChar;
      pos += got ? got : 1;
    }
  }
  return out;
}

bool isValidUtf8(std::string_view s) {
  for (size_t pos = 0; pos < s.size();) {
    size_t n = validSequenceLength(s, pos);
    if (!n)
      return false;
    pos += n;
  }
  return true;
}

size_t emittablePrefix(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    auto [got, need] = validPrefix(s, pos);
    if (got == need && need > 0) {
      pos += need;
      continue;
    }
    // A valid start cut off by the end of s may still be completed.
    if (got > 0 && pos + got == s.size())
      return pos;
    pos += got ? got : 1;
  }
  return pos;
}

std::optional<uint32_t> nextCodePoint(std::string_view s, size_t &pos) {
  const size_t n = validSequenceLength(s, pos);
  if (n == 0)
    return std::nullopt;
  const uint32_t cp = decodeCodePoint(s, pos, n);
  pos += n;
  return cp;
}

} // namespace llmc::utf8
