//===- regex.h - A regular-expression subset as grammar rules ---*- C++ -*-===//
//
// For JSON Schema's `pattern` and `format`: ECMA-262 syntax (what JSON
// Schema specifies), the subset without backtracking-only features.
// Supported: literals and escapes (\n \r \t \f \v \0 \xHH \uHHHH \u{H..}
// and escaped punctuation), classes [..] with ranges, negation and \d \w
// \s \D \W \S inside, `.`, groups (..) and (?:..), `|`, the quantifiers
// * + ? {m} {m,} {m,n} (lazy forms too: the language is the same), and ^ at
// the very start and $ at the very end. A pattern without ^ or $ may have
// anything before or after it, as JSON Schema says. Anything else
// (backreferences, lookaround, named groups, \b, flags) is an error naming
// it and its offset.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/grammar/grammar.h"

#include <string>
#include <string_view>

namespace llmc::grammar {

/// How a matched character is written: as itself (UTF-8), or as the
/// contents of a JSON string (`"` and `\` escaped, control characters as
/// \n, \t, ... or \u00XX).
enum class CharEncoding { Utf8, JsonString };

/// One character of `ranges` (negated: any character outside them),
/// written as `enc` says.
Element addCharClass(Grammar &g, std::vector<CodepointRange> ranges,
                     bool negated, CharEncoding enc);

/// A rule matching the strings `pattern` matches. Throws llmc::Error
/// "ORIGIN: pattern /.../ at offset N: what".
Element addRegex(Grammar &g, std::string_view pattern, CharEncoding enc,
                 const std::string &origin);

} // namespace llmc::grammar
