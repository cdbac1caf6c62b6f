#include "py_string.h"

#include "llmc/support/utf8.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace llmc::tmpl::py {

std::uint32_t decodeAt(std::string_view s, std::size_t &i) {
  auto b0 = static_cast<unsigned char>(s[i]);
  int len = b0 < 0x80         ? 1
            : (b0 >> 5) == 6  ? 2
            : (b0 >> 4) == 14 ? 3
            : (b0 >> 3) == 30 ? 4
                              : 0;
  if (len == 1) {
    ++i;
    return b0;
  }
  if (len == 0 || i + len > s.size()) {
    ++i;
    return 0xDC00 + b0; // like Python's surrogateescape: a stray byte
  }
  std::uint32_t cp = b0 & (0x7F >> len);
  for (int k = 1; k < len; ++k) {
    auto b = static_cast<unsigned char>(s[i + k]);
    if ((b >> 6) != 2) {
      ++i;
      return 0xDC00 + b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  i += len;
  return cp;
}

void appendUtf8(std::string &out, std::uint32_t cp) {
  if (cp >= 0xDC80 && cp <= 0xDCFF) // a stray byte, see decodeAt
    out += static_cast<char>(cp - 0xDC00);
  else
    utf8::appendCodePoint(out, cp);
}

bool isAscii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80)
      return false;
  return true;
}

std::vector<std::size_t> codePointOffsets(std::string_view s) {
  std::vector<std::size_t> offsets;
  offsets.reserve(s.size() + 1);
  for (std::size_t i = 0; i < s.size();) {
    offsets.push_back(i);
    decodeAt(s, i);
  }
  offsets.push_back(s.size());
  return offsets;
}

std::size_t length(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n)
    decodeAt(s, i);
  return n;
}

bool isSpace(std::uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) ||
         cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

namespace {

struct CodePoint {
  std::uint32_t cp;
  std::size_t begin, end;
};

std::vector<CodePoint> decodeAll(std::string_view s) {
  std::vector<CodePoint> out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t b = i;
    std::uint32_t cp = decodeAt(s, i);
    out.push_back({cp, b, i});
  }
  return out;
}

// Simple case mappings for the scripts chat text commonly uses: ASCII,
// Latin-1, Latin Extended-A, Greek and Cyrillic.
std::uint32_t toUpperCp(std::uint32_t c) {
  if (c >= 'a' && c <= 'z')
    return c - 32;
  if (c < 0x80)
    return c;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7) ||
      (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) || (c >= 0x430 && c <= 0x44F))
    return c - 32;
  if (c == 0xFF)
    return 0x178;
  if (c == 0xB5)
    return 0x39C;
  if (c == 0x3C2)
    return 0x3A3;
  if (c >= 0x450 && c <= 0x45F)
    return c - 0x50;
  if (c == 0x131) // dotless i
    return 'I';
  if (c == 0x130)
    return c;
  if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
    return c & ~1u;
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
    return (c & 1) ? c : c - 1;
  return c;
}

std::uint32_t toLowerCp(std::uint32_t c) {
  if (c >= 'A' && c <= 'Z')
    return c + 32;
  if (c < 0x80)
    return c;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7) ||
      (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) || (c >= 0x410 && c <= 0x42F))
    return c + 32;
  if (c == 0x178)
    return 0xFF;
  if (c >= 0x400 && c <= 0x40F)
    return c + 0x50;
  if (c == 0x130 || c == 0x131) // dotted/dotless i have no simple pair
    return c;
  if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
    return c | 1u;
  if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
    return (c & 1) ? c + 1 : c;
  return c;
}

bool isCased(std::uint32_t c) {
  return c == 0xDF || toUpperCp(c) != c || toLowerCp(c) != c;
}

void appendMapped(std::string &out, std::string_view s, const CodePoint &p,
                  std::uint32_t mapped) {
  if (mapped == p.cp)
    out.append(s.substr(p.begin, p.end - p.begin));
  else
    appendUtf8(out, mapped);
}

void appendUpper(std::string &out, std::string_view s, const CodePoint &p) {
  if (p.cp == 0xDF)
    out += "SS";
  else
    appendMapped(out, s, p, toUpperCp(p.cp));
}

bool inSet(std::uint32_t cp, const std::vector<CodePoint> &set) {
  for (const auto &c : set)
    if (c.cp == cp)
      return true;
  return false;
}

} // namespace

std::string strip(std::string_view s, const std::optional<std::string> &chars,
                  bool left, bool right) {
  auto cps = decodeAll(s);
  std::vector<CodePoint> set;
  if (chars)
    set = decodeAll(*chars);
  auto strippable = [&](std::uint32_t cp) {
    return chars ? inSet(cp, set) : isSpace(cp);
  };
  std::size_t b = 0, e = cps.size();
  if (left)
    while (b < e && strippable(cps[b].cp))
      ++b;
  if (right)
    while (e > b && strippable(cps[e - 1].cp))
      --e;
  if (b == e)
    return {};
  return std::string(s.substr(cps[b].begin, cps[e - 1].end - cps[b].begin));
}

std::vector<std::string> split(std::string_view s,
                               const std::optional<std::string> &sep,
                               std::int64_t maxsplit, bool fromRight) {
  std::vector<std::string> out;
  if (sep) {
    if (!fromRight) {
      std::size_t start = 0;
      while (maxsplit < 0 || static_cast<std::int64_t>(out.size()) < maxsplit) {
        std::size_t at = s.find(*sep, start);
        if (at == std::string_view::npos)
          break;
        out.emplace_back(s.substr(start, at - start));
        start = at + sep->size();
      }
      out.emplace_back(s.substr(start));
    } else {
      std::size_t end = s.size();
      std::vector<std::string> rev;
      while (maxsplit < 0 || static_cast<std::int64_t>(rev.size()) < maxsplit) {
        if (end < sep->size())
          break;
        std::size_t at = s.rfind(*sep, end - sep->size());
        if (at == std::string_view::npos)
          break;
        rev.emplace_back(s.substr(at + sep->size(), end - at - sep->size()));
        end = at;
      }
      rev.emplace_back(s.substr(0, end));
      out.assign(rev.rbegin(), rev.rend());
    }
    return out;
  }
  auto cps = decodeAll(s);
  std::size_t n = cps.size();
  if (!fromRight) {
    std::size_t i = 0;
    while (true) {
      while (i < n && isSpace(cps[i].cp))
        ++i;
      if (i == n)
        break;
      if (maxsplit >= 0 && static_cast<std::int64_t>(out.size()) == maxsplit) {
        out.emplace_back(s.substr(cps[i].begin)); // keeps trailing space
        break;
      }
      std::size_t j = i;
      while (j < n && !isSpace(cps[j].cp))
        ++j;
      out.emplace_back(s.substr(cps[i].begin, cps[j - 1].end - cps[i].begin));
      i = j;
    }
    return out;
  }
  std::size_t e = n;
  std::vector<std::string> rev;
  while (true) {
    while (e > 0 && isSpace(cps[e - 1].cp))
      --e;
    if (e == 0)
      break;
    if (maxsplit >= 0 && static_cast<std::int64_t>(rev.size()) == maxsplit) {
      rev.emplace_back(s.substr(0, cps[e - 1].end)); // keeps leading space
      break;
    }
    std::size_t b = e;
    while (b > 0 && !isSpace(cps[b - 1].cp))
      --b;
    rev.emplace_back(s.substr(cps[b].begin, cps[e - 1].end - cps[b].begin));
    e = b;
  }
  out.assign(rev.rbegin(), rev.rend());
  return out;
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  std::vector<std::string> out;
  auto cps = decodeAll(s);
  std::size_t lineStart = 0;
  for (std::size_t i = 0; i < cps.size(); ++i) {
    std::uint32_t c = cps[i].cp;
    bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C ||
               (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 ||
               c == 0x2029;
    if (!brk)
      continue;
    std::size_t endContent = cps[i].begin;
    std::size_t endBreak = cps[i].end;
    if (c == '\r' && i + 1 < cps.size() && cps[i + 1].cp == '\n') {
      ++i;
      endBreak = cps[i].end;
    }
    out.emplace_back(
        s.substr(lineStart, (keepends ? endBreak : endContent) - lineStart));
    lineStart = endBreak;
  }
  if (lineStart < s.size())
    out.emplace_back(s.substr(lineStart));
  return out;
}

std::string replace(std::string_view s, std::string_view from,
                    std::string_view to, std::int64_t count) {
  std::string out;
  if (from.empty()) {
    auto cps = decodeAll(s);
    std::int64_t done = 0;
    for (const auto &p : cps) {
      if (count < 0 || done < count) {
        out += to;
        ++done;
      }
      out.append(s.substr(p.begin, p.end - p.begin));
    }
    if (count < 0 || done < count)
      out += to;
    return out;
  }
  std::size_t start = 0;
  std::int64_t done = 0;
  while (count < 0 || done < count) {
    std::size_t at = s.find(from, start);
    if (at == std::string_view::npos)
      break;
    out.append(s.substr(start, at - start));
    out.append(to);
    start = at + from.size();
    ++done;
  }
  out.append(s.substr(start));
  return out;
}

std::string upper(std::string_view s) {
  std::string out;
  for (const auto &p : decodeAll(s))
    appendUpper(out, s, p);
  return out;
}

std::string lower(std::string_view s) {
  std::string out;
  for (const auto &p : decodeAll(s))
    appendMapped(out, s, p, toLowerCp(p.cp));
  return out;
}

std::string title(std::string_view s) {
  std::string out;
  bool prevCased = false;
  for (const auto &p : decodeAll(s)) {
    if (prevCased)
      appendMapped(out, s, p, toLowerCp(p.cp));
    else
      appendUpper(out, s, p);
    prevCased = isCased(p.cp);
  }
  return out;
}

std::string capitalize(std::string_view s) {
  std::string out;
  bool first = true;
  for (const auto &p : decodeAll(s)) {
    if (first)
      appendUpper(out, s, p);
    else
      appendMapped(out, s, p, toLowerCp(p.cp));
    first = false;
  }
  return out;
}

std::string jinjaTitle(std::string_view s) {
  std::string out;
  bool wordStart = true;
  for (const auto &p : decodeAll(s)) {
    bool sep = isSpace(p.cp) || p.cp == '-' || p.cp == '(' || p.cp == '{' ||
               p.cp == '[' || p.cp == '<';
    if (sep) {
      out.append(s.substr(p.begin, p.end - p.begin));
      wordStart = true;
    } else if (wordStart) {
      appendUpper(out, s, p);
      wordStart = false;
    } else {
      appendMapped(out, s, p, toLowerCp(p.cp));
    }
  }
  return out;
}

std::int64_t count(std::string_view s, std::string_view sub) {
  if (sub.empty())
    return static_cast<std::int64_t>(length(s)) + 1;
  std::int64_t n = 0;
  for (std::size_t at = s.find(sub); at != std::string_view::npos;
       at = s.find(sub, at + sub.size()))
    ++n;
  return n;
}

std::int64_t find(std::string_view s, std::string_view sub, bool fromRight) {
  std::size_t at = fromRight ? s.rfind(sub) : s.find(sub);
  if (at == std::string_view::npos)
    return -1;
  return static_cast<std::int64_t>(length(s.substr(0, at)));
}

namespace {

bool isPrintable(std::uint32_t c) {
  if (c < 0x20 || (c >= 0x7F && c <= 0xA0) || c == 0xAD)
    return false;
  if ((c >= 0x600 && c <= 0x605) || c == 0x61C || c == 0x6DD || c == 0x70F ||
      c == 0x1680 || c == 0x180E || (c >= 0x2000 && c <= 0x200F) ||
      (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x206F) ||
      c == 0x3000 || (c >= 0xD800 && c <= 0xF8FF) || c == 0xFEFF ||
      (c >= 0xFFF9 && c <= 0xFFFB) || c >= 0xE0000)
    return false;
  return true;
}

void appendHex(std::string &out, std::uint32_t v, int digits) {
  static const char *hex = "0123456789abcdef";
  for (int k = digits - 1; k >= 0; --k)
    out += hex[(v >> (4 * k)) & 0xF];
}

} // namespace

std::string repr(std::string_view s) {
  char quote = '\'';
  if (s.find('\'') != std::string_view::npos &&
      s.find('"') == std::string_view::npos)
    quote = '"';
  std::string out(1, quote);
  for (const auto &p : decodeAll(s)) {
    std::uint32_t c = p.cp;
    if (c == static_cast<std::uint32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c >= 0xDC80 && c <= 0xDCFF) {
      out += "\\udc";
      appendHex(out, c & 0xFF, 2);
    } else if (isPrintable(c)) {
      out.append(s.substr(p.begin, p.end - p.begin));
    } else if (c < 0x100) {
      out += "\\x";
      appendHex(out, c, 2);
    } else if (c < 0x10000) {
      out += "\\u";
      appendHex(out, c, 4);
    } else {
      out += "\\U";
      appendHex(out, c, 8);
    }
  }
  out += quote;
  return out;
}

std::string formatFloat(double d) {
  if (std::isnan(d))
    return "nan";
  if (std::isinf(d))
    return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto res =
      std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  std::size_t e = sci.find('e');
  std::string digits;
  for (std::size_t i = 0; i < e; ++i)
    if (sci[i] != '.')
      digits += sci[i];
  int exp = std::stoi(sci.substr(e + 1));
  int decpt = exp + 1;
  int n = static_cast<int>(digits.size());
  std::string out = sign;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {
      out += "0." + std::string(-decpt, '0') + digits;
    } else if (decpt >= n) {
      out += digits + std::string(decpt - n, '0') + ".0";
    } else {
      out += digits.substr(0, decpt) + "." + digits.substr(decpt);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (n > 1)
    out += "." + digits.substr(1);
  out += exp < 0 ? "e-" : "e+";
  int a = exp < 0 ? -exp : exp;
  if (a < 10)
    out += '0';
  out += std::to_string(a);
  return out;
}

} // namespace llmc::tmpl::py
