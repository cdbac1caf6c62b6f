//===- grammar.cpp - Building and checking a byte grammar -----------------===//
#include "llmc/grammar/grammar.h"

#include "llmc/support/error.h"

#include <algorithm>
#include <array>

namespace llmc::grammar {

uint32_t Grammar::rule(const std::string &name) {
  auto [it, fresh] =
      byName_.try_emplace(name, static_cast<uint32_t>(rules.size()));
  if (fresh)
    rules.push_back({name, {}, false});
  return it->second;
}

uint32_t Grammar::freshRule(const std::string &prefix) {
  std::string name;
  do
    name = prefix + "-" + std::to_string(++counter_);
  while (byName_.count(name));
  const uint32_t r = rule(name);
  rules[r].defined = true;
  return r;
}

void Grammar::addAlternative(uint32_t r, Sequence s) {
  rules[r].defined = true;
  rules[r].alternatives.push_back(std::move(s));
}

Element Grammar::bytes(const ByteSet &set) {
  for (uint32_t i = 0; i < sets.size(); ++i)
    if (sets[i] == set)
      return {Element::Bytes, i};
  sets.push_back(set);
  return {Element::Bytes, static_cast<uint32_t>(sets.size() - 1)};
}

Element Grammar::byte(uint8_t b) {
  ByteSet s;
  s.set(b);
  return bytes(s);
}

void Grammar::appendLiteral(Sequence &s, const std::string &text) {
  for (unsigned char c : text)
    s.push_back(byte(c));
}

Element Grammar::literals(std::vector<std::string> texts) {
  if (texts.empty())
    throw Error("internal error: a choice of no literals");
  std::sort(texts.begin(), texts.end());
  texts.erase(std::unique(texts.begin(), texts.end()), texts.end());
  // texts[lo, hi) share their first `depth` bytes; a rule for what follows.
  auto node = [&](auto &self, size_t lo, size_t hi, size_t depth) -> Element {
    const uint32_t r = freshRule("literals");
    if (texts[lo].size() == depth)
      addAlternative(r, {});
    for (size_t i = texts[lo].size() == depth ? lo + 1 : lo; i < hi;) {
      size_t j = i + 1;
      while (j < hi && texts[j][depth] == texts[i][depth])
        ++j;
      // Sorted: the first and last of the run bound its common prefix.
      size_t common = depth + 1;
      while (common < texts[i].size() && common < texts[j - 1].size() &&
             texts[i][common] == texts[j - 1][common])
        ++common;
      Sequence s;
      appendLiteral(s, texts[i].substr(depth, common - depth));
      if (j - i > 1 || texts[i].size() > common)
        s.push_back(self(self, i, j, common));
      addAlternative(r, std::move(s));
      i = j;
    }
    return ref(r);
  };
  return node(node, 0, texts.size(), 0);
}

namespace {

constexpr uint32_t kMaxCodepoint = 0x10FFFF;

/// The UTF-8 encoding of `cp` (1 to 4 bytes).
std::vector<uint8_t> encode(uint32_t cp) {
  if (cp < 0x80)
    return {uint8_t(cp)};
  if (cp < 0x800)
    return {uint8_t(0xC0 | (cp >> 6)), uint8_t(0x80 | (cp & 0x3F))};
  if (cp < 0x10000)
    return {uint8_t(0xE0 | (cp >> 12)), uint8_t(0x80 | ((cp >> 6) & 0x3F)),
            uint8_t(0x80 | (cp & 0x3F))};
  return {uint8_t(0xF0 | (cp >> 18)), uint8_t(0x80 | ((cp >> 12) & 0x3F)),
          uint8_t(0x80 | ((cp >> 6) & 0x3F)), uint8_t(0x80 | (cp & 0x3F))};
}

using ByteRanges = std::vector<std::pair<uint8_t, uint8_t>>;

/// Codepoints [lo, hi] as byte-range sequences: every sequence matches
/// exactly the encodings of a sub-range (the utf8-ranges algorithm).
void utf8Sequences(uint32_t lo, uint32_t hi, std::vector<ByteRanges> &out) {
  static const uint32_t lastOfLength[] = {0x7F, 0x7FF, 0xFFFF};
  for (uint32_t last : lastOfLength)
    if (lo <= last && hi > last) {
      utf8Sequences(lo, last, out);
      utf8Sequences(last + 1, hi, out);
      return;
    }
  const size_t n = encode(lo).size();
  for (size_t i = 1; i < n; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        utf8Sequences(lo, lo | m, out);
        utf8Sequences((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        utf8Sequences(lo, (hi & ~m) - 1, out);
        utf8Sequences(hi & ~m, hi, out);
        return;
      }
    }
  }
  const std::vector<uint8_t> a = encode(lo), b = encode(hi);
  ByteRanges seq;
  for (size_t j = 0; j < a.size(); ++j)
    seq.emplace_back(a[j], b[j]);
  out.push_back(std::move(seq));
}

} // namespace

std::vector<CodepointRange> normaliseRanges(std::vector<CodepointRange> r,
                                            bool negated) {
  for (CodepointRange &c : r)
    c.hi = std::min(c.hi, kMaxCodepoint);
  r.erase(std::remove_if(r.begin(), r.end(),
                         [](const CodepointRange &c) { return c.lo > c.hi; }),
          r.end());
  std::sort(r.begin(), r.end(),
            [](const CodepointRange &a, const CodepointRange &b) {
              return a.lo < b.lo;
            });
  std::vector<CodepointRange> merged;
  for (const CodepointRange &c : r)
    if (!merged.empty() && c.lo <= merged.back().hi + 1)
      merged.back().hi = std::max(merged.back().hi, c.hi);
    else
      merged.push_back(c);
  if (negated) {
    std::vector<CodepointRange> inv;
    uint32_t next = 0;
    for (const CodepointRange &c : merged) {
      if (c.lo > next)
        inv.push_back({next, c.lo - 1});
      next = c.hi + 1;
    }
    if (next <= kMaxCodepoint)
      inv.push_back({next, kMaxCodepoint});
    merged = std::move(inv);
  }
  // Surrogates are not characters: UTF-8 never encodes them.
  std::vector<CodepointRange> out;
  for (const CodepointRange &c : merged) {
    if (c.hi < 0xD800 || c.lo > 0xDFFF) {
      out.push_back(c);
      continue;
    }
    if (c.lo < 0xD800)
      out.push_back({c.lo, 0xD7FF});
    if (c.hi > 0xDFFF)
      out.push_back({0xE000, c.hi});
  }
  return out;
}

std::vector<CodepointRange>
intersectRanges(const std::vector<CodepointRange> &a,
                const std::vector<CodepointRange> &b) {
  std::vector<CodepointRange> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const uint32_t lo = std::max(a[i].lo, b[j].lo);
    const uint32_t hi = std::min(a[i].hi, b[j].hi);
    if (lo <= hi)
      out.push_back({lo, hi});
    if (a[i].hi < b[j].hi)
      ++i;
    else
      ++j;
  }
  return out;
}

Element Grammar::codepoints(std::vector<CodepointRange> ranges, bool negated) {
  ranges = normaliseRanges(std::move(ranges), negated);
  std::vector<ByteRanges> seqs;
  for (const CodepointRange &c : ranges)
    utf8Sequences(c.lo, c.hi, seqs);
  // Single bytes only: one set, no rule.
  if (std::all_of(seqs.begin(), seqs.end(),
                  [](const ByteRanges &s) { return s.size() == 1; })) {
    ByteSet set;
    for (const ByteRanges &s : seqs)
      for (unsigned b = s[0].first; b <= s[0].second; ++b)
        set.set(b);
    return bytes(set);
  }
  const uint32_t r = freshRule("char");
  // The one-byte sequences share one alternative.
  ByteSet ascii;
  for (const ByteRanges &s : seqs) {
    if (s.size() == 1) {
      for (unsigned b = s[0].first; b <= s[0].second; ++b)
        ascii.set(b);
      continue;
    }
    Sequence alt;
    for (const auto &[lo, hi] : s) {
      ByteSet set;
      for (unsigned b = lo; b <= hi; ++b)
        set.set(b);
      alt.push_back(bytes(set));
    }
    addAlternative(r, std::move(alt));
  }
  if (ascii.any())
    addAlternative(r, {bytes(ascii)});
  if (rules[r].alternatives.empty()) // an empty class: matches nothing
    addAlternative(r, {bytes(ByteSet())});
  return ref(r);
}

Element Grammar::repeat(const Element &e, int64_t min, int64_t max) {
  auto simple = [](int64_t lo, int64_t hi) {
    return lo >= 0 && lo <= 1 && (hi < 0 || (hi == 1 && lo == 0));
  };
  if (simple(min, max) && e.kind == Element::Rule) {
    auto it = loops_.find(e.index);
    if (it != loops_.end()) {
      // Either may be skipped: the whole may; either loops: the whole does.
      const Loop inner = it->second;
      return repeat(inner.inner, std::min(min, inner.min),
                    max == 1 && inner.max == 1 ? 1 : -1);
    }
  }
  const uint32_t r = freshRule("repeat");
  if (simple(min, max))
    loops_[r] = {e, min, max};
  Sequence head(static_cast<size_t>(min), e);
  if (max < 0) {
    // tail ::= e tail | ""
    const uint32_t tail = freshRule("repeat-tail");
    addAlternative(tail, {e, ref(tail)});
    addAlternative(tail, {});
    head.push_back(ref(tail));
  } else if (max > min) {
    // Nested optionals: opt1 ::= e opt2 | "", ..., the last ::= e | "".
    uint32_t next = 0;
    bool haveNext = false;
    for (int64_t k = max - min; k > 0; --k) {
      const uint32_t opt = freshRule("repeat-opt");
      Sequence s = {e};
      if (haveNext)
        s.push_back(ref(next));
      addAlternative(opt, std::move(s));
      addAlternative(opt, {});
      next = opt;
      haveNext = true;
    }
    head.push_back(ref(next));
  }
  addAlternative(r, std::move(head));
  return ref(r);
}

Element Grammar::embed(const Grammar &other) {
  const uint32_t base = static_cast<uint32_t>(rules.size());
  const std::string prefix = "e" + std::to_string(++counter_) + "-";
  std::vector<uint32_t> setIndex(other.sets.size());
  for (size_t i = 0; i < other.sets.size(); ++i)
    setIndex[i] = bytes(other.sets[i]).index;
  for (size_t i = 0; i < other.rules.size(); ++i)
    if (rule(prefix + other.rules[i].name) != base + i)
      throw Error("internal error: embedding a grammar with rule '" +
                  other.rules[i].name + "' twice");
  for (size_t i = 0; i < other.rules.size(); ++i) {
    Rule &mine = rules[base + i];
    mine.defined = other.rules[i].defined;
    for (Sequence s : other.rules[i].alternatives) {
      for (Element &e : s)
        e.index = e.kind == Element::Bytes ? setIndex[e.index] : base + e.index;
      mine.alternatives.push_back(std::move(s));
    }
  }
  return ref(base + other.root);
}

Element Grammar::textWithout(const std::string &needle) {
  // The needle's prefix automaton (KMP): state k = the last k bytes read
  // are its first k; a byte that would complete it is not allowed.
  const size_t n = needle.size();
  std::vector<size_t> fail(n + 1, 0);
  for (size_t i = 1, k = 0; i < n; ++i) {
    while (k > 0 && needle[i] != needle[k])
      k = fail[k];
    if (needle[i] == needle[k])
      ++k;
    fail[i + 1] = k;
  }
  auto next = [&](size_t k, unsigned char b) {
    while (k > 0 && static_cast<unsigned char>(needle[k]) != b)
      k = fail[k];
    return static_cast<unsigned char>(needle[k]) == b ? k + 1 : 0;
  };
  std::vector<uint32_t> state(n);
  for (size_t k = 0; k < n; ++k)
    state[k] = freshRule("text-without");
  for (size_t k = 0; k < n; ++k) {
    std::vector<ByteSet> to(n);
    for (int b = 0; b < 256; ++b) {
      const size_t j = next(k, static_cast<unsigned char>(b));
      if (j < n)
        to[j].set(static_cast<size_t>(b));
    }
    for (size_t j = 0; j < n; ++j)
      if (to[j].any())
        addAlternative(state[k], {bytes(to[j]), ref(state[j])});
    addAlternative(state[k], {});
  }
  return ref(state[0]);
}

Element Grammar::anyText() {
  ByteSet all;
  all.set();
  return repeat(bytes(all), 0, -1);
}

void Grammar::validate(const std::string &origin) const {
  const std::string at = origin.empty() ? "" : origin + ": ";
  for (const Rule &r : rules)
    if (!r.defined)
      throw Error(at + "rule '" + r.name + "' is used but not defined");
  if (root >= rules.size())
    throw Error(at + "the grammar has no root rule");

  // Rules that derive a finite string, and those that derive "".
  const size_t n = rules.size();
  std::vector<char> productive(n, 0), nullable(n, 0);
  auto elementOk = [&](const Element &e, const std::vector<char> &known,
                       bool emptyOnly) {
    if (e.kind == Element::Bytes)
      return !emptyOnly && sets[e.index].any();
    return known[e.index] != 0;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i)
      for (const Sequence &s : rules[i].alternatives) {
        if (!productive[i] &&
            std::all_of(s.begin(), s.end(), [&](const Element &e) {
              return elementOk(e, productive, false);
            }))
          productive[i] = changed = true;
        if (!nullable[i] &&
            std::all_of(s.begin(), s.end(), [&](const Element &e) {
              return elementOk(e, nullable, true);
            }))
          nullable[i] = changed = true;
      }
  }
  if (!productive[root])
    throw Error(at + "the root rule '" + rules[root].name +
                "' matches no text at all");
  // Reachable rules must be productive: an unproductive branch is dead
  // code, but one that is all a rule has is almost surely a mistake.
  // (Iterative throughout: a{100000} nests 100000 rules.)
  std::vector<char> reached(n, 0);
  std::vector<uint32_t> todo{root};
  reached[root] = 1;
  while (!todo.empty()) {
    const uint32_t r = todo.back();
    todo.pop_back();
    for (const Sequence &s : rules[r].alternatives)
      for (const Element &e : s)
        if (e.kind == Element::Rule && !reached[e.index]) {
          reached[e.index] = 1;
          todo.push_back(e.index);
        }
  }
  for (size_t i = 0; i < n; ++i)
    if (reached[i] && !productive[i])
      throw Error(at + "rule '" + rules[i].name + "' matches no text at all");

  // Left recursion: a rule reachable from itself through leading nullable
  // elements. The matcher expands rules before consuming a byte, so such a
  // rule would expand forever. Depth-first over "may start with" edges.
  std::vector<std::vector<uint32_t>> starts(n);
  for (uint32_t r = 0; r < n; ++r)
    for (const Sequence &s : rules[r].alternatives)
      for (const Element &e : s) {
        if (e.kind == Element::Bytes)
          break;
        starts[r].push_back(e.index);
        if (!nullable[e.index])
          break;
      }
  std::vector<int> color(n, 0); // 0 new, 1 on the path, 2 done
  struct Frame {
    uint32_t rule;
    size_t next;
  };
  std::vector<Frame> path;
  for (uint32_t r0 = 0; r0 < n; ++r0) {
    if (!reached[r0] || color[r0] != 0)
      continue;
    path.push_back({r0, 0});
    color[r0] = 1;
    while (!path.empty()) {
      Frame &f = path.back();
      if (f.next == starts[f.rule].size()) {
        color[f.rule] = 2;
        path.pop_back();
        continue;
      }
      const uint32_t to = starts[f.rule][f.next++];
      if (color[to] == 1) {
        std::string cycle;
        size_t from = 0;
        while (path[from].rule != to)
          ++from;
        for (size_t i = from; i < path.size(); ++i)
          cycle += rules[path[i].rule].name + " -> ";
        throw Error(at + "left recursion: " + cycle + rules[to].name +
                    " (a rule may not start with itself)");
      }
      if (color[to] == 0) {
        color[to] = 1;
        path.push_back({to, 0});
      }
    }
  }
}

namespace {

std::string setText(const ByteSet &s) {
  auto show = [](unsigned b) {
    static const char *hex = "0123456789ABCDEF";
    if (b >= 0x20 && b < 0x7F && b != ']' && b != '\\' && b != '-' && b != '^')
      return std::string(1, char(b));
    return std::string("\\x") + hex[b >> 4] + hex[b & 15];
  };
  if (s.count() == 1)
    for (unsigned b = 0; b < 256; ++b)
      if (s.test(b)) {
        std::string c = show(b);
        return "[" + c + "]";
      }
  std::string out = "[";
  for (unsigned b = 0; b < 256;) {
    if (!s.test(b)) {
      ++b;
      continue;
    }
    unsigned e = b;
    while (e + 1 < 256 && s.test(e + 1))
      ++e;
    out += show(b);
    if (e > b)
      out += "-" + show(e);
    b = e + 1;
  }
  return out + "]";
}

} // namespace

std::string Grammar::toString() const {
  std::string out;
  for (const Rule &r : rules) {
    out += r.name + " ::=";
    for (size_t a = 0; a < r.alternatives.size(); ++a) {
      out += a ? " |" : "";
      if (r.alternatives[a].empty())
        out += " \"\"";
      for (const Element &e : r.alternatives[a])
        out += " " + (e.kind == Element::Rule ? rules[e.index].name
                                              : setText(sets[e.index]));
    }
    out += "\n";
  }
  return out;
}

} // namespace llmc::grammar
