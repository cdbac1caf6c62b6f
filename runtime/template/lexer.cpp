#include "lexer.h"

#include "py_string.h"

#include "llmc/template/jinja.h"

#include <algorithm>
#include <cstring>

namespace llmc::tmpl {

void failAt(Pos pos, const std::string &message) {
  throw TemplateError("chat template line " + std::to_string(pos.line) + ":" +
                      std::to_string(pos.col) + ": " + message);
}

namespace {

bool isWs(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isNameChar(char c) { return isNameStart(c) || isDigit(c); }

class Lexer {
public:
  explicit Lexer(std::string_view source) {
    // Jinja splits on \r\n, \r and \n, rejoins with \n and drops one final
    // newline (keep_trailing_newline=False).
    src_.reserve(source.size());
    for (std::size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\r') {
        src_ += '\n';
        if (i + 1 < source.size() && source[i + 1] == '\n')
          ++i;
      } else {
        src_ += source[i];
      }
    }
    if (!src_.empty() && src_.back() == '\n')
      src_.pop_back();
    lineStarts_.push_back(0);
    for (std::size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n')
        lineStarts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    const std::size_t n = src_.size();
    std::size_t pos = 0;
    bool lineStarting = true;
    while (pos < n) {
      std::size_t start = findTagStart(pos);
      if (start == std::string::npos) {
        emitText(src_.substr(pos), pos);
        break;
      }
      char kind = src_[start + 1];
      std::size_t p = start + 2;
      char sign = 0;
      if (p < n && (src_[p] == '-' || src_[p] == '+'))
        sign = src_[p++];
      std::string text = src_.substr(pos, start - pos);
      if (sign == '-') {
        while (!text.empty() && isWs(text.back()))
          text.pop_back();
      } else if (sign != '+' && kind != '{') {
        lstrip(text, lineStarting);
      }
      emitText(std::move(text), pos);

      if (kind == '#') {
        std::size_t end = src_.find("#}", p);
        if (end == std::string::npos)
          failAt(posOf(start), "missing end of comment tag");
        char endSign = end > p && (src_[end - 1] == '-' || src_[end - 1] == '+')
                           ? src_[end - 1]
                           : 0;
        pos = afterTag(end + 2, endSign, true);
        lineStarting = src_[pos - 1] == '\n';
        continue;
      }
      if (kind == '%') {
        std::size_t afterRaw = matchRawBegin(p);
        if (afterRaw != std::string::npos) {
          pos = lexRaw(start, afterRaw);
          lineStarting = src_[pos - 1] == '\n';
          continue;
        }
      }
      bool block = kind == '%';
      tokens_.push_back(
          {block ? Tok::BlockBegin : Tok::VarBegin, "", posOf(start)});
      std::vector<char> balance;
      std::size_t end;
      char endSign = 0;
      while (true) {
        while (p < n && isWs(src_[p]))
          ++p;
        if (p >= n)
          failAt(posOf(start), std::string("unexpected end of template, '") +
                                   (block ? "{%" : "{{") + "' is not closed");
        if (balance.empty()) {
          const char *close = block ? "%}" : "}}";
          if (src_.compare(p, 2, close) == 0) {
            end = p + 2;
            break;
          }
          if ((src_[p] == '-' || (block && src_[p] == '+')) &&
              src_.compare(p + 1, 2, close) == 0) {
            endSign = src_[p];
            end = p + 3;
            break;
          }
        }
        p = lexToken(p, balance);
      }
      tokens_.push_back(
          {block ? Tok::BlockEnd : Tok::VarEnd, "", posOf(end - 2)});
      pos = afterTag(end, endSign, block);
      lineStarting = src_[pos - 1] == '\n';
    }
    tokens_.push_back({Tok::Eof, "", posOf(n)});
    return std::move(tokens_);
  }

private:
  Pos posOf(std::size_t offset) const {
    auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
    std::size_t line = static_cast<std::size_t>(it - lineStarts_.begin());
    return {static_cast<int>(line),
            static_cast<int>(offset - lineStarts_[line - 1] + 1)};
  }

  std::size_t findTagStart(std::size_t from) const {
    for (std::size_t i = src_.find('{', from); i != std::string::npos;
         i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() &&
          (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#'))
        return i;
    }
    return std::string::npos;
  }

  // lstrip_blocks: drop spaces and tabs between the start of a line and a
  // block tag. Without a newline in the text, only when the previous tag ended
  // a line.
  static void lstrip(std::string &text, bool lineStarting) {
    std::size_t lpos = text.rfind('\n');
    lpos = lpos == std::string::npos ? 0 : lpos + 1;
    if (lpos == 0 && !lineStarting)
      return;
    for (std::size_t i = lpos; i < text.size(); ++i)
      if (!isWs(text[i]))
        return;
    text.resize(lpos);
  }

  // What follows a tag's end: '-' eats all whitespace, trim_blocks one
  // newline after block tags and comments.
  std::size_t afterTag(std::size_t pos, char endSign, bool trims) const {
    if (endSign == '-') {
      while (pos < src_.size() && isWs(src_[pos]))
        ++pos;
    } else if (trims && endSign != '+' && pos < src_.size() &&
               src_[pos] == '\n') {
      ++pos;
    }
    return pos;
  }

  void emitText(std::string text, std::size_t offset) {
    if (!text.empty())
      tokens_.push_back({Tok::Text, std::move(text), posOf(offset)});
  }

  bool matchWord(std::size_t &p, const char *word) const {
    std::size_t len = std::strlen(word);
    if (src_.compare(p, len, word) != 0)
      return false;
    if (p + len < src_.size() && isNameChar(src_[p + len]))
      return false;
    p += len;
    return true;
  }

  void skipWs(std::size_t &p) const {
    while (p < src_.size() && isWs(src_[p]))
      ++p;
  }

  // "{% raw %}": returns the offset after the tag, or npos if not a raw tag.
  std::size_t matchRawBegin(std::size_t p) const {
    skipWs(p);
    if (!matchWord(p, "raw"))
      return std::string::npos;
    skipWs(p);
    if (src_.compare(p, 3, "-%}") == 0) {
      p += 3;
      skipWs(p);
      return p;
    }
    if (src_.compare(p, 2, "%}") == 0)
      return p + 2;
    return std::string::npos;
  }

  std::size_t lexRaw(std::size_t start, std::size_t bodyStart) {
    for (std::size_t i = src_.find("{%", bodyStart); i != std::string::npos;
         i = src_.find("{%", i + 1)) {
      std::size_t p = i + 2;
      char sign = 0;
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+'))
        sign = src_[p++];
      skipWs(p);
      if (!matchWord(p, "endraw"))
        continue;
      skipWs(p);
      char endSign = 0;
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+'))
        endSign = src_[p++];
      if (src_.compare(p, 2, "%}") != 0)
        continue;
      std::string body = src_.substr(bodyStart, i - bodyStart);
      if (sign == '-') {
        while (!body.empty() && isWs(body.back()))
          body.pop_back();
      } else if (sign != '+') {
        lstrip(body, src_[bodyStart - 1] == '\n');
      }
      emitText(std::move(body), bodyStart);
      return afterTag(p + 2, endSign, true);
    }
    failAt(posOf(start), "missing end of raw directive");
  }

  std::size_t lexToken(std::size_t p, std::vector<char> &balance) {
    const std::size_t n = src_.size();
    char c = src_[p];
    Pos pos = posOf(p);
    if (isNameStart(c)) {
      std::size_t e = p;
      while (e < n && isNameChar(src_[e]))
        ++e;
      tokens_.push_back({Tok::Name, src_.substr(p, e - p), pos});
      return e;
    }
    if (isDigit(c))
      return lexNumber(p);
    if (c == '\'' || c == '"')
      return lexString(p);
    static const char *const ops[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char *op : ops)
      if (src_.compare(p, 2, op) == 0) {
        tokens_.push_back({Tok::Op, op, pos});
        return p + 2;
      }
    if (std::strchr("+-/*%~[](){}<>=.:|,;", c) == nullptr || c == 0)
      failAt(pos, std::string("unexpected character '") + c + "'");
    if (c == '(' || c == '[' || c == '{') {
      balance.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (balance.empty() || balance.back() != c)
        failAt(pos, std::string("unexpected '") + c + "'");
      balance.pop_back();
    }
    tokens_.push_back({Tok::Op, std::string(1, c), pos});
    return p + 1;
  }

  std::size_t lexNumber(std::size_t p) {
    const std::size_t n = src_.size();
    Pos pos = posOf(p);
    auto digitsFrom = [&](std::size_t &e, std::string &out) {
      while (e < n && (isDigit(src_[e]) ||
                       (src_[e] == '_' && e + 1 < n && isDigit(src_[e + 1])))) {
        if (src_[e] != '_')
          out += src_[e];
        ++e;
      }
    };
    if (src_[p] == '0' && p + 1 < n &&
        std::strchr("xXoObB", src_[p + 1]) != nullptr && src_[p + 1] != 0) {
      int base = (src_[p + 1] | 0x20) == 'x'   ? 16
                 : (src_[p + 1] | 0x20) == 'o' ? 8
                                               : 2;
      std::size_t e = p + 2;
      std::uint64_t v = 0;
      bool any = false;
      while (e < n) {
        char d = src_[e];
        int dv = isDigit(d) ? d - '0'
                 : (d | 0x20) >= 'a' && (d | 0x20) <= 'f'
                     ? (d | 0x20) - 'a' + 10
                     : -1;
        if (d == '_') {
          ++e;
          continue;
        }
        if (dv < 0 || dv >= base)
          break;
        if (v > (static_cast<std::uint64_t>(INT64_MAX) - dv) / base)
          failAt(pos, "integer literal too large");
        v = v * base + dv;
        any = true;
        ++e;
      }
      if (!any)
        failAt(pos, "invalid integer literal");
      Token t{Tok::Int, src_.substr(p, e - p), pos};
      t.intValue = static_cast<std::int64_t>(v);
      tokens_.push_back(t);
      return e;
    }
    std::string digits;
    std::size_t e = p;
    digitsFrom(e, digits);
    bool isFloat = false;
    bool afterDot = p > 0 && src_[p - 1] == '.';
    if (!afterDot && e + 1 < n && src_[e] == '.' && isDigit(src_[e + 1])) {
      isFloat = true;
      digits += '.';
      ++e;
      digitsFrom(e, digits);
    }
    if (!afterDot && e < n && (src_[e] == 'e' || src_[e] == 'E')) {
      std::size_t q = e + 1;
      std::string exp = "e";
      if (q < n && (src_[q] == '+' || src_[q] == '-'))
        exp += src_[q++];
      if (q < n && isDigit(src_[q])) {
        digitsFrom(q, exp);
        digits += exp;
        isFloat = true;
        e = q;
      }
    }
    Token t{isFloat ? Tok::Float : Tok::Int, src_.substr(p, e - p), pos};
    if (isFloat) {
      t.floatValue = std::strtod(digits.c_str(), nullptr);
    } else {
      std::uint64_t v = 0;
      for (char d : digits) {
        if (v > (static_cast<std::uint64_t>(INT64_MAX) - (d - '0')) / 10)
          failAt(pos, "integer literal too large");
        v = v * 10 + (d - '0');
      }
      t.intValue = static_cast<std::int64_t>(v);
    }
    tokens_.push_back(t);
    return e;
  }

  // Python's unicode-escape decoding, which Jinja applies to string literals.
  std::size_t lexString(std::size_t p) {
    const std::size_t n = src_.size();
    Pos pos = posOf(p);
    char quote = src_[p];
    std::string out;
    std::size_t i = p + 1;
    auto hexValue = [&](std::size_t at, int count, std::uint32_t &v) {
      v = 0;
      for (int k = 0; k < count; ++k) {
        if (at + k >= n)
          return false;
        char d = src_[at + k];
        int dv = isDigit(d) ? d - '0'
                 : (d | 0x20) >= 'a' && (d | 0x20) <= 'f'
                     ? (d | 0x20) - 'a' + 10
                     : -1;
        if (dv < 0)
          return false;
        v = v * 16 + dv;
      }
      return true;
    };
    while (true) {
      if (i >= n)
        failAt(pos, "unterminated string literal");
      char c = src_[i];
      if (c == quote)
        break;
      if (c != '\\') {
        out += c;
        ++i;
        continue;
      }
      if (i + 1 >= n)
        failAt(pos, "unterminated string literal");
      char e = src_[i + 1];
      i += 2;
      switch (e) {
      case '\n':
        break;
      case '\\':
      case '\'':
      case '"':
        out += e;
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x':
      case 'u':
      case 'U': {
        int count = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        std::uint32_t v;
        if (!hexValue(i, count, v) || v > 0x10FFFF)
          failAt(pos,
                 std::string("invalid \\") + e + " escape in string literal");
        py::appendUtf8(out, v);
        i += count;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          std::uint32_t v = e - '0';
          for (int k = 0; k < 2 && i < n && src_[i] >= '0' && src_[i] <= '7';
               ++k)
            v = v * 8 + (src_[i++] - '0');
          py::appendUtf8(out, v);
        } else {
          out += '\\';
          out += e;
        }
      }
    }
    tokens_.push_back({Tok::String, std::move(out), pos});
    return i + 1;
  }

  std::string src_;
  std::vector<std::size_t> lineStarts_;
  std::vector<Token> tokens_;
};

} // namespace

std::vector<Token> lex(std::string_view source) { return Lexer(source).run(); }

} // namespace llmc::tmpl
