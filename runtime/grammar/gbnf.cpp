//===- gbnf.cpp - A recursive-descent parser of GBNF ----------------------===//
#include "llmc/grammar/gbnf.h"

#include "llmc/support/error.h"
#include "llmc/support/utf8.h"

#include <cctype>

namespace llmc::grammar {
namespace {

class Parser {
public:
  Parser(std::string_view text, const std::string &origin)
      : text_(text), origin_(origin) {}

  Grammar run() {
    skip(true);
    while (!atEnd()) {
      parseRule();
      skip(true);
    }
    bool haveRoot = false;
    for (uint32_t i = 0; i < g_.rules.size(); ++i)
      if (g_.rules[i].name == "root" && g_.rules[i].defined) {
        g_.root = i;
        haveRoot = true;
      }
    if (!haveRoot)
      throw Error(origin_ + ": the grammar has no 'root' rule");
    g_.validate(origin_);
    return std::move(g_);
  }

private:
  [[noreturn]] void fail(const std::string &what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw Error(origin_ + ":" + std::to_string(line) + ":" +
                std::to_string(col) + ": " + what);
  }

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  /// Spaces and comments; newlines too when `newlines`.
  void skip(bool newlines) {
    while (!atEnd()) {
      char c = peek();
      if (c == '#') {
        while (!atEnd() && peek() != '\n')
          ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' ||
                 (newlines && c == '\n')) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  static bool nameChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  }

  std::string name() {
    size_t start = pos_;
    while (!atEnd() && nameChar(peek()))
      ++pos_;
    if (pos_ == start)
      fail("expected a rule name");
    return std::string(text_.substr(start, pos_ - start));
  }

  void parseRule() {
    const std::string n = name();
    skip(false);
    if (text_.substr(pos_, 3) != "::=")
      fail("expected '::=' after rule name '" + n + "'");
    pos_ += 3;
    const uint32_t r = g_.rule(n);
    if (g_.rules[r].defined)
      fail("rule '" + n + "' is defined twice");
    g_.rules[r].defined = true;
    skip(true);
    parseAlternatives(r, false);
    if (!atEnd() && peek() != '\n')
      fail(std::string("unexpected '") + peek() + "'");
  }

  /// Alternatives into rule r; `nested` inside ( ).
  void parseAlternatives(uint32_t r, bool nested) {
    while (true) {
      // Not rules[r].alternatives.push_back(parseSequence()): parsing may
      // add rules and move rules[r].
      Sequence s = parseSequence(nested);
      g_.rules[r].alternatives.push_back(std::move(s));
      skip(nested);
      // At the top level a continuation line starts with '|'.
      if (!nested && peek() == '\n') {
        size_t save = pos_;
        skip(true);
        if (peek() != '|') {
          pos_ = save;
          return;
        }
      }
      if (peek() != '|')
        return;
      ++pos_;
      skip(true);
    }
  }

  Sequence parseSequence(bool nested) {
    Sequence s;
    while (true) {
      skip(nested);
      char c = peek();
      if (atEnd() || c == '|' || c == ')' || c == '\n')
        return s;
      Element e = parseItem(nested);
      skip(nested);
      e = parsePostfix(e);
      s.push_back(e);
    }
  }

  Element parsePostfix(Element e) {
    while (true) {
      char c = peek();
      if (c == '*') {
        ++pos_;
        e = g_.repeat(e, 0, -1);
      } else if (c == '+') {
        ++pos_;
        e = g_.repeat(e, 1, -1);
      } else if (c == '?') {
        ++pos_;
        e = g_.repeat(e, 0, 1);
      } else if (c == '{') {
        ++pos_;
        skip(false);
        int64_t min = number(), max = min;
        skip(false);
        if (peek() == ',') {
          ++pos_;
          skip(false);
          max =
              std::isdigit(static_cast<unsigned char>(peek())) ? number() : -1;
          skip(false);
        }
        if (peek() != '}')
          fail("expected '}' to close a repetition");
        ++pos_;
        if (max >= 0 && max < min)
          fail("a repetition's maximum (" + std::to_string(max) +
               ") is below its minimum (" + std::to_string(min) + ")");
        e = g_.repeat(e, min, max);
      } else {
        return e;
      }
      skip(false);
    }
  }

  int64_t number() {
    size_t start = pos_;
    int64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (peek() - '0');
      if (v > 100000)
        fail("a repetition count above 100000");
      ++pos_;
    }
    if (pos_ == start)
      fail("expected a number");
    return v;
  }

  Element parseItem(bool nested) {
    (void)nested;
    char c = peek();
    if (c == '"') {
      ++pos_;
      Sequence lit;
      while (peek() != '"') {
        if (atEnd() || peek() == '\n')
          fail("unterminated string literal");
        std::string bytes;
        utf8::appendCodePoint(bytes, codepoint());
        g_.appendLiteral(lit, bytes);
      }
      ++pos_;
      if (lit.size() == 1)
        return lit[0];
      const uint32_t r = g_.freshRule("literal");
      g_.addAlternative(r, std::move(lit));
      return Grammar::ref(r);
    }
    if (c == '[') {
      ++pos_;
      bool negated = false;
      if (peek() == '^') {
        negated = true;
        ++pos_;
      }
      std::vector<CodepointRange> ranges;
      while (peek() != ']') {
        if (atEnd() || peek() == '\n')
          fail("unterminated character class");
        uint32_t lo = codepoint(), hi = lo;
        if (peek() == '-' && peek(1) != ']' && peek(1) != '\0') {
          ++pos_;
          hi = codepoint();
          if (hi < lo)
            fail("a character range goes backwards");
        }
        ranges.push_back({lo, hi});
      }
      ++pos_;
      return g_.codepoints(std::move(ranges), negated);
    }
    if (c == '.') {
      ++pos_;
      return g_.codepoints({}, true);
    }
    if (c == '(') {
      if (++depth_ > kMaxDepth)
        fail("groups nested deeper than " + std::to_string(kMaxDepth));
      ++pos_;
      skip(true);
      const uint32_t r = g_.freshRule("group");
      parseAlternatives(r, true);
      skip(true);
      if (peek() != ')')
        fail("expected ')'");
      ++pos_;
      --depth_;
      // A group of one element is that element: (x)+ is x+, so that
      // stacked repetitions combine (Grammar::repeat) through groups too.
      const auto &alts = g_.rules[r].alternatives;
      if (alts.size() == 1 && alts[0].size() == 1)
        return alts[0][0];
      return Grammar::ref(r);
    }
    if (c == '<')
      fail("token references (<...>) are not supported");
    if (nameChar(c)) {
      const std::string n = name();
      skip(false);
      if (text_.substr(pos_, 3) == "::=")
        fail("expected '|' or a new line before rule '" + n + "'");
      return Grammar::ref(g_.rule(n));
    }
    fail(std::string("unexpected '") + c + "'");
  }

  /// One codepoint of a literal or class, escapes decoded.
  uint32_t codepoint() {
    char c = peek();
    if (c != '\\') {
      if (auto cp = utf8::nextCodePoint(text_, pos_))
        return *cp;
      fail("invalid UTF-8");
    }
    ++pos_;
    char e = peek();
    ++pos_;
    switch (e) {
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case '\\':
    case '"':
    case '[':
    case ']':
    case '-':
    case '^':
      return static_cast<unsigned char>(e);
    case 'x':
      return hex(2);
    case 'u':
      return hex(4);
    case 'U':
      return hex(8);
    default:
      pos_ -= 2;
      fail(std::string("unknown escape '\\") + e + "'");
    }
  }

  uint32_t hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      char c = peek();
      int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
              : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
              : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                          : -1;
      if (d < 0)
        fail("expected " + std::to_string(digits) + " hex digits");
      v = v * 16 + uint32_t(d);
      ++pos_;
    }
    if (v > 0x10FFFF)
      fail("codepoint above U+10FFFF");
    return v;
  }

  static constexpr int kMaxDepth = 256;
  std::string_view text_;
  std::string origin_;
  size_t pos_ = 0;
  int depth_ = 0;
  Grammar g_;
};

} // namespace

Grammar parseGbnf(std::string_view text, const std::string &origin) {
  return Parser(text, origin).run();
}

} // namespace llmc::grammar
