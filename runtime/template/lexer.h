//===- lexer.h - Template text to tokens ------------------------*- C++ -*-===//
//
// Applies Jinja's whitespace rules while lexing, as Jinja does: newlines are
// normalised to \n, one final newline is dropped (keep_trailing_newline off),
// trim_blocks and lstrip_blocks are on, and -/+ markers override them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmc::tmpl {

struct Pos {
  int line = 1;
  int col = 1;
};

// Throws TemplateError("chat template line L:C: message").
[[noreturn]] void failAt(Pos pos, const std::string &message);

enum class Tok {
  Text,       // literal template text, already whitespace-processed
  VarBegin,   // {{
  VarEnd,     // }}
  BlockBegin, // {%
  BlockEnd,   // %}
  Name,
  String, // text holds the decoded value
  Int,
  Float,
  Op, // text holds the operator
  Eof
};

struct Token {
  Tok kind;
  std::string text;
  Pos pos;
  std::int64_t intValue = 0;
  double floatValue = 0;
};

std::vector<Token> lex(std::string_view source);

} // namespace llmc::tmpl
