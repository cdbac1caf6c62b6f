//===- grammar.h - A context-free grammar over bytes ------------*- C++ -*-===//
//
// What every front end (GBNF, JSON Schema, the regex subset of `pattern`)
// produces and the matcher runs: rules of alternatives, each a sequence of
// elements; an element is a set of bytes or a reference to a rule. Text is
// UTF-8 bytes: a codepoint class becomes alternatives of byte sequences
// (addCodepoints), so a token that ends inside a character is still
// matched byte by byte.
//
// validate() refuses what the matcher cannot run: a rule that is
// referenced but never defined, one that derives no finite string, left
// recursion (a rule that can reach itself without consuming a byte), and a
// root that accepts nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <bitset>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace llmc::grammar {

using ByteSet = std::bitset<256>;

struct Element {
  enum Kind : uint8_t { Bytes, Rule };
  Kind kind;
  uint32_t index; // into Grammar::sets (Bytes) or Grammar::rules (Rule)
};

using Sequence = std::vector<Element>;

struct Rule {
  std::string name;
  std::vector<Sequence> alternatives; // an empty sequence matches ""
  bool defined = false;               // false: only referenced so far
};

/// A codepoint range, inclusive.
struct CodepointRange {
  uint32_t lo, hi;
};

/// Sorted, merged, surrogate-free ranges of valid codepoints: `ranges`, or
/// (negated) every codepoint outside them.
std::vector<CodepointRange> normaliseRanges(std::vector<CodepointRange> ranges,
                                            bool negated);
/// Codepoints in both (each normalised).
std::vector<CodepointRange>
intersectRanges(const std::vector<CodepointRange> &a,
                const std::vector<CodepointRange> &b);

class Grammar {
public:
  std::vector<Rule> rules;
  std::vector<ByteSet> sets;
  uint32_t root = 0;

  /// The rule named `name`, created (undefined) if new.
  uint32_t rule(const std::string &name);
  /// A fresh rule whose name starts with `prefix` (helpers of repetitions,
  /// groups, classes).
  uint32_t freshRule(const std::string &prefix);
  void addAlternative(uint32_t rule, Sequence s);
  Element bytes(const ByteSet &set);
  Element byte(uint8_t b);
  static Element ref(uint32_t rule) { return {Element::Rule, rule}; }
  /// The UTF-8 bytes of `text`, one element per byte, appended to `s`.
  void appendLiteral(Sequence &s, const std::string &text);
  /// A rule matching exactly one of `texts`, their common prefixes shared
  /// (a radix tree): text inside it is one stack, not one per text.
  Element literals(std::vector<std::string> texts);
  /// An element matching one codepoint of `ranges` (or, negated, any valid
  /// codepoint outside them) as UTF-8: a rule of byte-sequence alternatives.
  Element codepoints(std::vector<CodepointRange> ranges, bool negated);
  /// A rule matching `e` repeated min..max times (max < 0: unbounded).
  /// *, + and ? of an element that is itself one of them combine into one
  /// ((x+)+ is x+): stacked loops made states of exponentially many stacks.
  Element repeat(const Element &e, int64_t min, int64_t max);
  /// A copy of `other`'s rules (renamed apart) and a reference to its root:
  /// a JSON Schema's grammar inside a tool call.
  Element embed(const Grammar &other);
  /// Any bytes that do not contain `needle` (non-empty): free text before
  /// a marker, which then opens the constrained part.
  Element textWithout(const std::string &needle);
  /// Any bytes.
  Element anyText();

  /// Throws llmc::Error naming the rule for an undefined one, a rule that
  /// derives nothing, left recursion, or an empty language; `origin`
  /// prefixes the message.
  void validate(const std::string &origin) const;
  /// GBNF text of the grammar (for errors, tests and --explain-grammar).
  std::string toString() const;

private:
  std::unordered_map<std::string, uint32_t> byName_;
  uint32_t counter_ = 0;
  struct Loop {
    Element inner;
    int64_t min, max;
  };
  std::unordered_map<uint32_t, Loop> loops_; // rules made by *, + and ?
};

} // namespace llmc::grammar
