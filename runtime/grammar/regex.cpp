//===- regex.cpp - ECMA-262 pattern subset -> grammar rules ---------------===//
#include "llmc/grammar/regex.h"

#include "llmc/support/error.h"
#include "llmc/support/utf8.h"

#include <cctype>
#include <cstring>
#include <optional>

namespace llmc::grammar {

namespace {

std::string jsonEscape(uint32_t c) {
  switch (c) {
  case '"':
    return "\\\"";
  case '\\':
    return "\\\\";
  case '\n':
    return "\\n";
  case '\r':
    return "\\r";
  case '\t':
    return "\\t";
  case '\b':
    return "\\b";
  case '\f':
    return "\\f";
  default: {
    static const char *hex = "0123456789abcdef";
    return std::string("\\u00") + hex[(c >> 4) & 15] + hex[c & 15];
  }
  }
}

} // namespace

Element addCharClass(Grammar &g, std::vector<CodepointRange> ranges,
                     bool negated, CharEncoding enc) {
  if (enc == CharEncoding::Utf8)
    return g.codepoints(std::move(ranges), negated);
  // In a JSON string `"`, `\` and control characters are escaped; the rest
  // stands for itself.
  const std::vector<CodepointRange> chars =
      normaliseRanges(std::move(ranges), negated);
  const std::vector<CodepointRange> escaped = {
      {0, 0x1F}, {'"', '"'}, {'\\', '\\'}};
  const std::vector<CodepointRange> plain =
      intersectRanges(chars, normaliseRanges(escaped, true));
  const std::vector<CodepointRange> special =
      intersectRanges(chars, normaliseRanges(escaped, false));
  if (special.empty())
    return g.codepoints(plain, false);
  const uint32_t r = g.freshRule("json-char");
  if (!plain.empty())
    g.addAlternative(r, {g.codepoints(plain, false)});
  for (const CodepointRange &c : special)
    for (uint32_t cp = c.lo; cp <= c.hi; ++cp) {
      Sequence s;
      g.appendLiteral(s, jsonEscape(cp));
      g.addAlternative(r, std::move(s));
    }
  return Grammar::ref(r);
}

namespace {

const std::vector<CodepointRange> kDigit = {{'0', '9'}};
const std::vector<CodepointRange> kWord = {
    {'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const std::vector<CodepointRange> kSpace = {
    {'\t', '\r'},     {' ', ' '},       {0xA0, 0xA0},     {0x1680, 0x1680},
    {0x2000, 0x200A}, {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F},
    {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
const std::vector<CodepointRange> kLineTerminators = {
    {'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};

/// Whether `p` ends with a '$' that is not escaped (and lies past `from`:
/// a lone '^' is no '$').
bool endsWithAnchor(std::string_view p, size_t from = 0) {
  if (p.size() <= from || p.back() != '$')
    return false;
  size_t slashes = 0;
  for (size_t i = p.size() - 1; i > from && p[i - 1] == '\\'; --i)
    ++slashes;
  return slashes % 2 == 0;
}

class RegexParser {
public:
  RegexParser(Grammar &g, std::string_view p, CharEncoding enc,
              const std::string &origin)
      : g_(g), p_(p), enc_(enc), origin_(origin) {}

  Element run() {
    bool anchoredStart = false, anchoredEnd = false;
    if (!p_.empty() && p_.front() == '^') {
      anchoredStart = true;
      pos_ = 1;
    }
    if (endsWithAnchor(p_, pos_)) { // pos_ is past a '^'
      anchoredEnd = true;
      end_ = p_.size() - 1;
    } else {
      end_ = p_.size();
    }
    Sequence s;
    const Element any = addCharClass(g_, {}, true, enc_);
    if (std::optional<Sequence> run =
            anchoredStart ? std::nullopt : classRun(anchoredEnd)) {
      s = std::move(*run);
    } else {
      if (!anchoredStart)
        s.push_back(g_.repeat(any, 0, -1));
      s.push_back(alternatives());
    }
    if (pos_ < end_)
      fail(p_[pos_] == ')' ? "unbalanced ')'" : "unexpected character");
    if (!anchoredEnd)
      s.push_back(g_.repeat(any, 0, -1));
    const uint32_t r = g_.freshRule("pattern");
    g_.addAlternative(r, std::move(s));
    return Grammar::ref(r);
  }

private:
  [[noreturn]] void fail(const std::string &what) const {
    throw Error(origin_ + ": pattern /" + std::string(p_) + "/ at offset " +
                std::to_string(pos_) + ": " + what);
  }

  bool atEnd() const { return pos_ >= end_; }
  char peek() const { return atEnd() ? '\0' : p_[pos_]; }

  Element alternatives() {
    std::vector<Sequence> alts;
    alts.push_back(sequence());
    while (peek() == '|') {
      ++pos_;
      alts.push_back(sequence());
    }
    if (alts.size() == 1 && alts[0].size() == 1)
      return alts[0][0];
    const uint32_t r = g_.freshRule("regex");
    for (Sequence &s : alts)
      g_.addAlternative(r, std::move(s));
    return Grammar::ref(r);
  }

  Sequence sequence() {
    Sequence s;
    while (!atEnd() && peek() != '|' && peek() != ')') {
      Element e = atom();
      e = quantified(e);
      s.push_back(e);
    }
    return s;
  }

  /// {m}, {m,}, {m,n} at pos_ (Annex B: otherwise '{' is a literal).
  bool braces(int64_t &min, int64_t &max) {
    size_t i = pos_ + 1;
    auto digits = [&](int64_t &v) {
      size_t start = i;
      v = 0;
      while (i < end_ && std::isdigit(static_cast<unsigned char>(p_[i]))) {
        v = std::min<int64_t>(v * 10 + (p_[i] - '0'), 1000000);
        ++i;
      }
      return i > start;
    };
    if (!digits(min))
      return false;
    max = min;
    if (i < end_ && p_[i] == ',') {
      ++i;
      if (!digits(max))
        max = -1;
    }
    if (i >= end_ || p_[i] != '}')
      return false;
    pos_ = i + 1;
    return true;
  }

  Element quantified(Element e) {
    while (!atEnd()) {
      int64_t min, max;
      const char c = peek();
      if (c == '*') {
        ++pos_;
        min = 0, max = -1;
      } else if (c == '+') {
        ++pos_;
        min = 1, max = -1;
      } else if (c == '?') {
        ++pos_;
        min = 0, max = 1;
      } else if (c == '{' && braces(min, max)) {
        if (max >= 0 && max < min)
          fail("a quantifier's maximum is below its minimum");
        if (std::max(min, max) > 10000)
          fail("a repetition count above 10000");
      } else {
        return e;
      }
      if (peek() == '?') // lazy: the same language
        ++pos_;
      e = g_.repeat(e, min, max);
    }
    return e;
  }

  Element atom() {
    const char c = peek();
    switch (c) {
    case '(': {
      if (++depth_ > 256)
        fail("groups nested deeper than 256");
      ++pos_;
      if (peek() == '?') {
        if (pos_ + 1 < end_ && p_[pos_ + 1] == ':')
          pos_ += 2;
        else
          fail("lookaround and named groups are not supported");
      }
      Element e = alternatives();
      if (peek() != ')')
        fail("missing ')'");
      ++pos_;
      --depth_;
      return e;
    }
    case '[':
      return charClass();
    case '.':
      ++pos_;
      return addCharClass(g_, kLineTerminators, true, enc_);
    case '\\': {
      std::vector<CodepointRange> ranges;
      bool negated = false;
      escape(ranges, negated, false);
      return addCharClass(g_, ranges, negated, enc_);
    }
    case '*':
    case '+':
    case '?':
      fail("nothing to repeat");
    case '^':
    case '$':
      fail("anchors are supported only at the start and the end");
    default: {
      const uint32_t cp = literal();
      return addCharClass(g_, {{cp, cp}}, false, enc_);
    }
    }
  }

  uint32_t literal() {
    if (auto cp = utf8::nextCodePoint(p_, pos_))
      return *cp;
    fail("invalid UTF-8");
  }

  uint32_t hex(size_t digits) {
    uint32_t v = 0;
    for (size_t i = 0; i < digits; ++i) {
      const char c = peek();
      if (!std::isxdigit(static_cast<unsigned char>(c)))
        fail("expected " + std::to_string(digits) + " hex digits");
      v = v * 16 +
          static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c))
                                    ? c - '0'
                                    : (std::tolower(c) - 'a' + 10));
      ++pos_;
    }
    return v;
  }

  /// An escape at pos_ ('\\'): a class (\d ...) into ranges/negated, or one
  /// codepoint as a one-codepoint range.
  void escape(std::vector<CodepointRange> &ranges, bool &negated,
              bool inClass) {
    ++pos_;
    if (atEnd())
      fail("a pattern may not end with '\\'");
    const char c = p_[pos_++];
    auto one = [&](uint32_t cp) { ranges.push_back({cp, cp}); };
    auto cls = [&](const std::vector<CodepointRange> &set, bool neg) {
      if (!inClass) {
        ranges = set;
        negated = neg;
        return;
      }
      const auto add = neg ? normaliseRanges(set, true) : set;
      ranges.insert(ranges.end(), add.begin(), add.end());
    };
    switch (c) {
    case 'd':
      return cls(kDigit, false);
    case 'D':
      return cls(kDigit, true);
    case 'w':
      return cls(kWord, false);
    case 'W':
      return cls(kWord, true);
    case 's':
      return cls(kSpace, false);
    case 'S':
      return cls(kSpace, true);
    case 'n':
      return one('\n');
    case 'r':
      return one('\r');
    case 't':
      return one('\t');
    case 'f':
      return one('\f');
    case 'v':
      return one('\v');
    case '0':
      return one(0);
    case 'x':
      return one(hex(2));
    case 'u':
      if (peek() == '{') {
        ++pos_;
        uint32_t v = 0;
        size_t n = 0;
        while (std::isxdigit(static_cast<unsigned char>(peek())) && n < 6) {
          v = v * 16 + hex(1);
          ++n;
        }
        if (peek() != '}' || n == 0 || v > 0x10FFFF)
          fail("a bad \\u{...} escape");
        ++pos_;
        return one(v);
      }
      return one(hex(4));
    case 'b':
      if (inClass)
        return one('\b');
      fail("word boundaries (\\b) are not supported");
    default:
      break;
    }
    if (std::isdigit(static_cast<unsigned char>(c)))
      fail("backreferences are not supported");
    if (std::isalpha(static_cast<unsigned char>(c)))
      fail(std::string("the escape '\\") + c + "' is not supported");
    one(static_cast<unsigned char>(c)); // escaped punctuation
  }

  Element charClass() {
    std::vector<CodepointRange> ranges;
    bool negated = false;
    classRanges(ranges, negated);
    return addCharClass(g_, ranges, negated, enc_);
  }

  /// The class at pos_ ('['), to its ']'.
  void classRanges(std::vector<CodepointRange> &ranges, bool &negated) {
    ++pos_; // '['
    negated = false;
    if (peek() == '^') {
      negated = true;
      ++pos_;
    }
    // A codepoint of the class, or a class escape (then false).
    auto member = [&](uint32_t &cp) {
      if (peek() != '\\') {
        cp = literal();
        return true;
      }
      std::vector<CodepointRange> r;
      bool neg = false;
      escape(r, neg, true);
      if (r.size() == 1 && r[0].lo == r[0].hi) {
        cp = r[0].lo;
        return true;
      }
      ranges.insert(ranges.end(), r.begin(), r.end());
      return false;
    };
    while (peek() != ']') {
      if (atEnd())
        fail("missing ']'");
      uint32_t lo;
      if (!member(lo))
        continue;
      if (peek() == '-' && pos_ + 1 < end_ && p_[pos_ + 1] != ']') {
        ++pos_;
        uint32_t hi;
        if (!member(hi))
          fail("a range may not end with a class escape");
        if (hi < lo)
          fail("a character range goes backwards");
        ranges.push_back({lo, hi});
      } else {
        ranges.push_back({lo, lo});
      }
    }
    ++pos_;
  }

  /// A search for one run of a class, the whole pattern ("[a-z0-9]{162}",
  /// "\\d+$"): any text ending outside the class, then the run. With a
  /// plain ".*" in front a state keeps a stack for every place a run may
  /// have begun, and every character of such a run is a new state. None
  /// (pos_ unmoved) for any other pattern.
  std::optional<Sequence> classRun(bool anchoredEnd) {
    const size_t start = pos_;
    std::vector<CodepointRange> ranges;
    bool negated = false;
    int64_t min = 0, max = 0;
    const char c = peek();
    if (c == '[') {
      classRanges(ranges, negated);
    } else if (c == '\\') {
      escape(ranges, negated, false);
    } else if (c == '.') {
      ++pos_;
      ranges = kLineTerminators;
      negated = true;
    } else if (!atEnd() && !std::strchr("()|*+?{^$", c)) {
      const uint32_t cp = literal();
      ranges = {{cp, cp}};
    }
    if (pos_ > start && peek() == '+') {
      ++pos_;
      min = 1, max = -1;
    } else if (!(pos_ > start && peek() == '{' && braces(min, max))) {
      min = 0;
    }
    // A bounded run then the end: the text must not run on past it.
    if (!atEnd() || min < 1 || (max >= 0 && max < min) || min > 10000 ||
        (max >= 0 && anchoredEnd)) {
      pos_ = start;
      return std::nullopt;
    }
    const Element any = addCharClass(g_, {}, true, enc_);
    const uint32_t before = g_.freshRule("pattern-before-run");
    g_.addAlternative(before, {g_.repeat(any, 0, -1),
                               addCharClass(g_, ranges, !negated, enc_)});
    g_.addAlternative(before, {});
    // Containing a run of at least min is containing one of min.
    return Sequence{Grammar::ref(before),
                    g_.repeat(addCharClass(g_, ranges, negated, enc_), min,
                              anchoredEnd ? -1 : min)};
  }

  Grammar &g_;
  std::string_view p_;
  CharEncoding enc_;
  const std::string &origin_;
  size_t pos_ = 0, end_ = 0;
  int depth_ = 0;
};

/// The pattern's top-level alternatives (one when it has no top-level
/// '|'): each has its own anchors, `^a|b$` being `(^a)|(b$)`.
std::vector<std::string_view> topLevelAlternatives(std::string_view p) {
  std::vector<std::string_view> parts;
  size_t depth = 0, from = 0;
  bool inClass = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      ++i;
    } else if (inClass) {
      inClass = c != ']';
    } else if (c == '[') {
      inClass = true;
      if (i + 1 < p.size() && p[i + 1] == '^')
        ++i;
      if (i + 1 < p.size() && p[i + 1] == ']')
        ++i; // a leading ']' is a member
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && depth > 0) {
      --depth;
    } else if (c == '|' && depth == 0) {
      parts.push_back(p.substr(from, i - from));
      from = i + 1;
    }
  }
  parts.push_back(p.substr(from));
  return parts;
}

} // namespace

Element addRegex(Grammar &g, std::string_view pattern, CharEncoding enc,
                 const std::string &origin) {
  // Anchored alternatives each alone; the others together, as one
  // unanchored pattern (one loop of any characters around them, not one
  // per alternative).
  std::vector<std::string_view> anchored;
  std::vector<std::string_view> others;
  for (std::string_view part : topLevelAlternatives(pattern)) {
    if ((!part.empty() && part.front() == '^') || endsWithAnchor(part))
      anchored.push_back(part);
    else
      others.push_back(part);
  }
  if (anchored.empty())
    return RegexParser(g, pattern, enc, origin).run();
  const uint32_t r = g.freshRule("pattern-alternatives");
  for (std::string_view part : anchored)
    g.addAlternative(r, {RegexParser(g, part, enc, origin).run()});
  if (!others.empty()) {
    std::string rest(others[0]);
    for (size_t i = 1; i < others.size(); ++i)
      rest += "|" + std::string(others[i]);
    g.addAlternative(r, {RegexParser(g, rest, enc, origin).run()});
  }
  return Grammar::ref(r);
}

} // namespace llmc::grammar
