//===- gbnf.h - llama.cpp's grammar format ----------------------*- C++ -*-===//
//
// GBNF, as llama.cpp's grammars/README.md describes it, so that users'
// grammars run unchanged: `name ::= alternatives`, `|`, sequences, ( )
// groups, "literals" and [classes] (ranges, ^ negation, \n \t \r \\ \" \]
// \xHH \uHHHH \UHHHHHHHH escapes), `.` for any character, `*` `+` `?`
// `{m}` `{m,}` `{m,n}`, `#` comments. The root rule is `root`. A line that
// starts with `|` continues the rule above it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/grammar/grammar.h"

#include <string>
#include <string_view>

namespace llmc::grammar {

/// Parses and validates; throws llmc::Error as "ORIGIN:LINE:COLUMN: what"
/// for a syntax error and names the rule for a semantic one.
Grammar parseGbnf(std::string_view text, const std::string &origin);

} // namespace llmc::grammar
