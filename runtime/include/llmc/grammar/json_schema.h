//===- json_schema.h - JSON Schema -> a byte grammar ------------*- C++ -*-===//
//
// The grammar of JSON text that validates against a schema (the keywords
// docs/structured-output.md lists: types and type lists, properties,
// required, additionalProperties, patternProperties, min/maxProperties,
// items, prefixItems,
// draft 4 tuples, minItems, maxItems, enum, const, anyOf, oneOf, allOf
// (merged), constraints beside $ref / anyOf / oneOf (merged into the
// branches), $ref into $defs / definitions / any JSON pointer of the
// document, recursion included, minLength, maxLength, pattern, format,
// integer bounds and whole number bounds). Keywords that are not JSON
// Schema validation keywords (annotations, draft 4's id, vendor keywords)
// are ignored; a validation keyword llmc cannot generate is an error that
// names it and where it is.
//
// What is generated is a subset of what validates, chosen so that a model
// cannot wander off:
//  - up to 8 listed properties in any order (strict objects: the schema's
//    order), more in the schema's order; optional ones may be left out;
//    other keys (where the schema allows them) may come between them;
//  - whitespace: between JSON tokens nothing or one space, never before
//    the value or after it (compact: a model cannot stall in whitespace);
//  - numbers: at most 16 integer digits, 16 fraction digits and a 2-digit
//    exponent; integers have neither fraction nor exponent;
//  - oneOf: its branches proven disjoint, or made so (a branch may not
//    write a key another branch requires), else refused.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/grammar/grammar.h"

#include <string>
#include <string_view>

namespace llmc::grammar {

struct JsonSchemaOptions {
  /// OpenAI's strict mode: an object schema with properties but without
  /// additionalProperties takes only its listed keys, in the schema's order
  /// (XGrammar's default). Off by default: JSON Schema allows other keys
  /// there and any order, and a document the user's validator accepts
  /// should be one llmc can write.
  bool strictObjects = false;
};

/// `schemaJson` is the schema's text. Throws llmc::Error beginning with
/// `origin` (a file name, or "response_format.json_schema.schema") and
/// naming the keyword and its JSON pointer, e.g. "ORIGIN: at
/// /properties/age: the keyword 'multipleOf' is not supported".
Grammar grammarFromJsonSchema(std::string_view schemaJson,
                              const std::string &origin,
                              const JsonSchemaOptions &options = {});

/// Any JSON value (objectOnly: any JSON object), with the whitespace rule
/// above: the `--json` flag and {"type": "json_object"}.
Grammar grammarForJson(bool objectOnly);

} // namespace llmc::grammar
