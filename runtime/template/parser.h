//===- parser.h - Tokens to a Program ---------------------------*- C++ -*-===//
#pragma once

#include "ast.h"

#include <string_view>

namespace llmc::tmpl {

// Unknown tags, filters and tests are rejected here, as Jinja rejects them
// at compile time. Throws TemplateError.
Program parse(std::string_view source);

// Names the interpreter implements; the parser checks against these.
bool isKnownFilter(std::string_view name);
bool isKnownTest(std::string_view name);

} // namespace llmc::tmpl
