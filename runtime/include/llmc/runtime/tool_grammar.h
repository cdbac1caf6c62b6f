//===- tool_grammar.h - The grammar of a reply with tools or reasoning -*- C++
//-*-===//
//
// What the structured-output engine constrains a chat reply to, in the
// template's own markup (chat_format.h):
//   reasoning   the prompt ended inside an open block: free text up to its
//               close marker (mandatory); otherwise an optional block first
//   required    one or more calls (one for a named function), each naming a
//               given tool and writing arguments valid against its schema
//   auto        free text that does not contain the calls' trigger marker,
//               then optionally the trigger and calls as above (a lazy
//               grammar: nothing is constrained until the marker)
//   answer      a response_format's grammar, after the reasoning
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/grammar/json_schema.h"
#include "llmc/runtime/chat_format.h"

#include <string>
#include <vector>

namespace llmc {

struct ToolSpec {
  std::string name;
  std::string parameters; // a JSON Schema's text; "" = any object
  /// The parameters' objects take only their listed keys
  /// (JsonSchemaOptions::strictObjects): the function's `strict`.
  bool strict = false;
};

struct ToolRequest {
  enum class Choice { Auto, Required };
  Choice choice = Choice::Auto;
  std::vector<ToolSpec> tools; // a named choice: only that one
  bool parallel = true;        // more than one call allowed
};

/// Throws llmc::Error naming `origin` + the tool's parameters for a schema
/// the engine cannot compile, or when the template has no tool-call format.
grammar::Grammar replyGrammar(const ReplyMarkup &markup,
                              const ToolRequest *tools,
                              const grammar::Grammar *answer);

} // namespace llmc
