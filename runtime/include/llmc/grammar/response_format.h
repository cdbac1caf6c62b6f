//===- response_format.h - What a request asks its output to be -*- C++ -*-===//
//
// OpenAI's `response_format` field, shared by the server and llmc run
// --prompts-file: {"type": "text"} (free text), {"type": "json_object"},
// {"type": "json_schema", "json_schema": {"name", "schema", "strict",
// "description"}}. Bodies must be parsed as ordered JSON: a schema's
// property order is the order the model writes them in.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/grammar/grammar_cache.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace llmc::grammar {

struct GrammarSource {
  SourceKind kind;
  std::string text;   // the schema's JSON or the GBNF
  std::string origin; // what errors name: "response_format.json_schema.schema"
  /// json_schema.strict: OpenAI's strict mode, whose objects take only
  /// their listed keys (JsonSchemaOptions::strictObjects).
  bool strict = false;
};

/// Schemas nest at most this deep (a deeper one is an error, not a stack
/// overflow in the converter).
inline constexpr size_t kMaxSchemaDepth = 128;
/// Throws llmc::Error "ORIGIN: nested deeper than 128 levels" (iterative).
void checkNesting(const nlohmann::ordered_json &value,
                  const std::string &origin);

/// Null for {"type": "text"}. Throws llmc::Error naming the field for a
/// malformed value, e.g. "response_format.type must be one of text,
/// json_object, json_schema, got \"xml\"".
std::optional<GrammarSource>
parseResponseFormat(const nlohmann::ordered_json &value,
                    const std::string &field = "response_format");

} // namespace llmc::grammar
