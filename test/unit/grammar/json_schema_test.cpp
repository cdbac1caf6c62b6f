// JSON Schema -> grammar: what each keyword lets through (whole texts,
// byte by byte), random walks that must parse as JSON and keep the
// schema's shape, and every kind of bad schema. Full validation of model
// output with an independent validator (ajv) is test/e2e/structured.
#include "grammar_test_util.h"

#include "llmc/grammar/json_schema.h"
#include "llmc/support/error.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

namespace llmc::grammar {
namespace {

using test::compileForBytes;
using test::matches;

std::shared_ptr<const CompiledGrammar> schema(const std::string &s,
                                              JsonSchemaOptions options = {}) {
  return compileForBytes(grammarFromJsonSchema(s, "schema.json", options));
}

const JsonSchemaOptions kStrict{.strictObjects = true};

std::string errorOf(const std::string &s, JsonSchemaOptions options = {}) {
  try {
    grammarFromJsonSchema(s, "schema.json", options);
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

// Up to 8 listed properties come in any order, each once; more come in any
// order too, the required ones tracked (each once, none missing), the
// optional ones free; strict objects (OpenAI's strict mode) keep the
// schema's order.
TEST(JsonSchema, ObjectsWithOptionalProperties) {
  const char *abc = R"({"type": "object",
      "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                     "c": {"type": "boolean"}},
      "required": ["b"], "additionalProperties": false})";
  auto g = schema(abc);
  for (const char *ok :
       {R"({"b": "x"})", R"({"a": 1, "b": "x"})", R"({"b": "x", "c": true})",
        R"({"a":-3,"b":"","c":false})", R"({ "b" : "x" })",
        R"({"b": "x", "a": 1})", R"({"c": true, "b": "x", "a": 1})"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char *bad :
       {R"({})", R"({"a": 1})", R"({"b": "x", "b": "y"})", R"({"b": "x",})",
        R"({"b": "x", "d": 1})", R"({"a": 1.5, "b": "x"})", R"( {"b": "x"})",
        R"({"b": "x"} )", "{  \"b\": \"x\"}", "{\n\"b\": \"x\"}"})
    EXPECT_FALSE(matches(g, bad)) << bad;
  auto strict = schema(abc, kStrict);
  EXPECT_TRUE(matches(strict, R"({"a": 1, "b": "x", "c": true})"));
  EXPECT_FALSE(matches(strict, R"({"b": "x", "a": 1})"));
  auto nine = schema(R"({"properties": {"a": {}, "b": {}, "c": {}, "d": {},
      "e": {}, "f": {}, "g": {}, "h": {}, "i": {}}, "required": ["i"]})");
  EXPECT_TRUE(matches(nine, R"({"a": 1, "c": 2, "i": 3})"));
  EXPECT_TRUE(matches(nine, R"({"i": 3, "a": 1})"));
  EXPECT_TRUE(matches(nine, R"({"c": 1, "a": 2, "i": 3, "x": 4})"));
  for (const char *bad :
       {R"({"c": 1, "a": 2})", R"({"i": 1, "i": 2})", R"({"i": 1, "c": 2,})"})
    EXPECT_FALSE(matches(nine, bad)) << bad;
  // More than 8 required keys: in the schema's order or in `required`'s,
  // the others anywhere between.
  auto many = schema(R"({"properties": {"a": {}, "b": {}, "c": {}, "d": {},
      "e": {}, "f": {}, "g": {}, "h": {}, "i": {}, "x": {}},
      "required": ["i", "h", "g", "f", "e", "d", "c", "b", "a"]})");
  const char *schemaOrder =
      R"({"a":1,"b":1,"x":0,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1})";
  const char *requiredOrder =
      R"({"i":1,"h":1,"g":1,"f":1,"e":1,"d":1,"c":1,"b":1,"a":1,"y":0})";
  EXPECT_TRUE(matches(many, schemaOrder));
  EXPECT_TRUE(matches(many, requiredOrder));
  for (const char *bad :
       {R"({"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1})",
        R"({"b":1,"a":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1})",
        R"({"a":1,"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1})"})
    EXPECT_FALSE(matches(many, bad)) << bad;
  // maxProperties counts members (a key written twice counts twice).
  auto most = schema(R"({"properties": {"a": {}, "b": {}, "c": {}, "d": {},
      "e": {}, "f": {}, "g": {}, "h": {}, "i": {}}, "required": ["i"],
      "maxProperties": 2})");
  EXPECT_TRUE(matches(most, R"({"c": 1, "i": 3})"));
  EXPECT_FALSE(matches(most, R"({"c": 1, "a": 2, "i": 3})"));
  EXPECT_FALSE(matches(most, R"({"c": 1, "c": 2, "i": 3})"));
  auto few = schema(R"({"properties": {"a": {}, "b": {}}, "maxProperties": 1,
      "additionalProperties": false})");
  EXPECT_TRUE(matches(few, R"({"b": 1})"));
  EXPECT_TRUE(matches(few, R"({})"));
  EXPECT_FALSE(matches(few, R"({"b": 1, "a": 2})"));
  // Beyond 8 required keys, or with more minProperties than required keys,
  // the schema's order or the required ones first.
  auto counted = schema(R"({"properties": {"a": {}, "b": {}, "c": {}, "d": {},
      "e": {}, "f": {}, "g": {}, "h": {}, "i": {}}, "required": ["i"],
      "minProperties": 2})");
  EXPECT_TRUE(matches(counted, R"({"a": 1, "c": 2, "i": 3})"));
  EXPECT_TRUE(matches(counted, R"({"i": 3, "a": 1})"));
  EXPECT_FALSE(matches(counted, R"({"c": 1, "a": 2, "i": 3})"));
  auto strictNine = schema(R"({"properties": {"a": {}, "b": {}, "c": {},
      "d": {}, "e": {}, "f": {}, "g": {}, "h": {}, "i": {}},
      "required": ["i"]})",
                           kStrict);
  EXPECT_FALSE(matches(strictNine, R"({"c": 1, "a": 2, "i": 3})"));
  EXPECT_FALSE(matches(strictNine, R"({"i": 3, "a": 1})"));
}

// Without additionalProperties, other keys are allowed (JSON Schema), before,
// between and after the listed ones; strictObjects forbids them.
TEST(JsonSchema, OtherKeysFollowJsonSchema) {
  const char *s = R"({"type": "object",
      "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
      "required": ["b", "id"]})";
  auto g = schema(s);
  for (const char *ok :
       {R"({"b": "x", "id": 1})",
        R"({"x": [], "a": 1, "y": null, "b": "x", "id": 2})",
        R"({"a": 1, "b": "x", "ab": 2, "id": 0})",
        R"({"b": "x", "id": 1, "a": 2})", R"({"b": "x", "id": 1, "a\": ": 2})",
        R"({"b": "x", "id": 1, "x\u0062\n": 2})"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  // Escapes never spell a listed name (they are written only once a key
  // is none).
  for (const char *bad : {R"({"b": "x"})", R"({"b": "x", "id": 1, "b": "y"})",
                          R"({"a": "1", "b": "x", "id": 1})",
                          R"({"b": "x", "id": 1, "\u0062": "y"})",
                          R"({"b": "x", "id": 1, "\u0061": "1"})"})
    EXPECT_FALSE(matches(g, bad)) << bad;
  EXPECT_EQ(errorOf(s, kStrict),
            "schema.json: at /required: the required property 'id' may not "
            "be written: it is not in 'properties' and other keys are not "
            "allowed");
  auto strict = schema(R"({"properties": {"a": {}}})", kStrict);
  EXPECT_TRUE(matches(strict, R"({"a": 1})"));
  EXPECT_FALSE(matches(strict, R"({"a": 1, "b": 2})"));
}

// oneOf is generated only where a document cannot match two branches:
// proven from types, constants or keys, or made so by keeping a branch from
// writing a key another requires.
TEST(JsonSchema, OneOfBranchesAreMadeExclusive) {
  auto g = schema(R"({"type": "object", "properties": {"a": {}, "b": {}},
                      "oneOf": [{"required": ["a"]}, {"required": ["b"]}]})");
  for (const char *ok : {R"({"a": 1})", R"({"b": 1})", R"({"b": 1, "c": 2})"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char *bad : {R"({"a": 1, "b": 2})", R"({"b": 2, "a": 1})",
                          R"({"c": 1, "a": 2, "b": 3})", R"({})"})
    EXPECT_FALSE(matches(g, bad)) << bad;
  auto kinds = schema(R"({"oneOf": [
      {"type": "object", "properties": {"kind": {"const": "circle"},
                                        "r": {"type": "number"}},
       "required": ["kind"]},
      {"type": "object", "properties": {"kind": {"const": "square"}},
       "required": ["kind"]}, {"type": "string"}]})");
  EXPECT_TRUE(matches(kinds, R"({"kind": "circle", "r": 1, "x": 2})"));
  EXPECT_TRUE(matches(kinds, R"({"kind": "square", "r": 1})"));
  EXPECT_TRUE(matches(kinds, R"("s")"));
  EXPECT_EQ(errorOf(R"({"oneOf": [{"type": "string"},
                                   {"type": "string", "maxLength": 3}]})"),
            "schema.json: at /oneOf: branches 0 and 1 may both match one "
            "document (oneOf is generated only when its branches are "
            "disjoint: different types or constants, or keys one requires "
            "that the other cannot write)");
}

// Keywords llmc does not know are ignored at any depth, as the
// specification says (draft 4's `id`, vendor keywords, misspelled
// annotations); known constraints it cannot generate are still refused.
TEST(JsonSchema, UnknownKeywordsAreIgnored) {
  auto g = schema(R"({"id": "http://x/s.json", "x-vendor": {"a": 1},
      "type": "object", "readonly": true, "links": [],
      "properties": {"n": {"type": "integer", "_format": "int32",
                           "example": 3, "name": "n"}},
      "required": ["n"]})");
  EXPECT_TRUE(matches(g, R"({"n":3})"));
  EXPECT_FALSE(matches(g, R"({"n":"3"})"));
  EXPECT_FALSE(matches(g, R"({})"));
  for (const char *k :
       {"propertyNames", "uniqueItems", "if", "dependentSchemas"}) {
    const std::string schema =
        std::string(R"({"type": "object", "properties": {"a": {")") + k +
        R"(": {}}}})";
    EXPECT_THROW(grammarFromJsonSchema(schema, "s.json"), Error) << k;
  }
}

// `not` said positively where it is simple: of everything (nothing
// validates: an optional property never written), of a `not`, of types, of
// one required property (an object without it); any other is refused.
TEST(JsonSchema, SimpleNots) {
  auto g = schema(R"({"type": "object", "properties": {
      "gone": {"not": {"description": "anything"}},
      "twice": {"not": {"not": {"type": "integer"}}},
      "other": {"enum": ["a", 1, null, true], "not": {"type": "string"}},
      "nonum": {"not": {"type": ["number", "string", "array", "object"]}},
      "noa": {"not": {"required": ["a"]}}}})");
  EXPECT_TRUE(matches(g, R"({"twice": 3, "other": 1, "nonum": null})"));
  EXPECT_TRUE(
      matches(g, R"({"other": null, "nonum": false, "noa": {"b": 1}})"));
  EXPECT_FALSE(matches(g, R"({"gone": 1})"));
  EXPECT_FALSE(matches(g, R"({"twice": "3"})"));
  EXPECT_FALSE(matches(g, R"({"other": "a"})"));
  EXPECT_FALSE(matches(g, R"({"nonum": 2})"));
  EXPECT_FALSE(matches(g, R"({"noa": {"a": 1}})"));
  // `required` holds for non-objects: its `not` does not.
  EXPECT_FALSE(matches(g, R"({"noa": 5})"));
  auto top = schema(R"({"not": {"required": ["a"]}})");
  EXPECT_TRUE(matches(top, R"({"b": 1})"));
  EXPECT_FALSE(matches(top, R"("x")"));
  const std::string refused =
      "schema.json: at /not: 'not' is supported of types (but integer "
      "alone), of one required property, of a 'not' and of a schema every "
      "value matches";
  EXPECT_EQ(errorOf(R"({"not": {"type": "integer"}})"), refused);
  EXPECT_EQ(errorOf(R"({"type": "string", "not": {"enum": ["x"]}})"), refused);
  EXPECT_EQ(errorOf(R"({"not": true})"),
            "schema.json: at /not: 'not' of true matches nothing");
}

// A subschema nothing validates against is left out where it may be: an
// optional property, a branch, one of several types, the items after a
// prefix.
TEST(JsonSchema, UnsatisfiablePartsAreLeftOut) {
  auto g = schema(R"({"type": "object", "properties": {
      "mode": {"type": "object", "enum": ["a", "b"]},
      "n": {"anyOf": [{"type": "integer", "minimum": 5, "maximum": 1},
                      {"type": "string"}]},
      "t": {"type": ["array", "string"], "minItems": 2, "maxItems": 1},
      "p": {"type": "array", "prefixItems": [{"type": "integer"}],
            "items": {"type": "string", "minLength": 3, "maxLength": 1}}}})");
  EXPECT_TRUE(matches(g, R"({"n": "x", "t": "y", "p": [1]})"));
  EXPECT_FALSE(matches(g, R"({"mode": "a"})"));
  EXPECT_FALSE(matches(g, R"({"n": 3})"));
  EXPECT_FALSE(matches(g, R"({"t": []})"));
  EXPECT_FALSE(matches(g, R"({"p": [1, "abc"]})"));
  EXPECT_EQ(errorOf(R"({"type": "object", "properties": {"m": {"type":
      "object", "enum": ["a"]}}, "required": ["m"]})"),
            "schema.json: at /properties/m: no value of 'enum'/'const' has "
            "the schema's type");
}

// dependencies / dependentRequired: checked where the object may end (any
// order) or as keys are passed by (fixed order); a key that needs keys
// 'properties' does not list is left out.
TEST(JsonSchema, Dependencies) {
  auto g = schema(R"({"type": "object", "properties": {"card": {},
      "billing": {}, "name": {}}, "dependencies": {"card": ["billing"]},
      "dependentRequired": {"name": []}})");
  for (const char *ok :
       {R"({})", R"({"billing": 1})", R"({"card": 1, "billing": 2})",
        R"({"billing": 2, "name": 0, "card": 1})"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  EXPECT_FALSE(matches(g, R"({"card": 1})"));
  EXPECT_FALSE(matches(g, R"({"card": 1, "name": 2})"));
  g = schema(R"({"type": "object", "properties": {"a": {}, "b": {}},
      "dependencies": {"a": {"required": ["b"]}, "x": ["a"]}})");
  EXPECT_TRUE(matches(g, R"({"a": 1, "b": 2, "y": 3})"));
  EXPECT_FALSE(matches(g, R"({"a": 1})"));
  EXPECT_FALSE(matches(g, R"({"x": 1, "a": 2, "b": 3})")); // x is left out
  g = schema(R"({"minProperties": 1, "properties": {"a": {}, "b": {},
      "c": {}}, "required": ["a"], "dependencies": {"a": ["c"],
      "b": ["a"]}})");
  EXPECT_TRUE(matches(g, R"({"a": 1, "c": 2})"));
  EXPECT_FALSE(matches(g, R"({"a": 1})"));
  EXPECT_TRUE(matches(g, R"({"a": 1, "b": 2, "c": 3})"));
  EXPECT_FALSE(matches(g, R"({"a": 1, "b": 2})"));
  EXPECT_FALSE(matches(g, R"({"b": 1, "c": 2})"));
  // More than 8 properties: the keys in dependencies are tracked.
  g = schema(R"({"properties": {"a": {}, "b": {}, "c": {}, "d": {}, "e": {},
      "f": {}, "g": {}, "h": {}, "swap": {}, "mem": {}},
      "dependencies": {"swap": ["mem"]}, "additionalProperties": false})");
  EXPECT_TRUE(matches(g, R"({"h": 1, "mem": 2, "a": 3, "swap": 4})"));
  EXPECT_TRUE(matches(g, R"({"swap": 4, "b": 0, "mem": 2})"));
  EXPECT_FALSE(matches(g, R"({"h": 1, "swap": 4})"));
  EXPECT_FALSE(matches(g, R"({"swap": 1, "mem": 2, "swap": 3})"));
  EXPECT_FALSE(matches(g, R"({"h": 1, "x": 2})"));
  EXPECT_EQ(errorOf(R"({"dependencies": {"a": {"maxProperties": 2}}})"),
            "schema.json: at /dependencies/a: a schema dependency is "
            "supported with 'required' only");
}

// allOf is merged; constraints beside $ref, anyOf and oneOf (disjoint
// branches only) go into each branch.
TEST(JsonSchema, AllOfAndConstraintsBesideCombinators) {
  auto g = schema(R"({"allOf": [
      {"type": "object", "properties": {"a": {"type": "integer",
                                               "minimum": 0}},
       "required": ["a"]},
      {"properties": {"a": {"maximum": 5}, "b": {"type": "string"}}}]})");
  EXPECT_TRUE(matches(g, R"({"a":3,"b":"x"})"));
  EXPECT_TRUE(matches(g, R"({"a":5})"));
  EXPECT_FALSE(matches(g, R"({"a":6})"));
  EXPECT_FALSE(matches(g, R"({"b":"x"})"));
  g = schema(R"({"type": "string", "anyOf": [{"maxLength": 2},
                                              {"type": "null"},
                                              {"enum": ["long", 1]}]})");
  EXPECT_TRUE(matches(g, R"("ab")"));
  EXPECT_TRUE(matches(g, R"("long")"));
  EXPECT_FALSE(matches(g, "null"));
  EXPECT_FALSE(matches(g, "1"));
  EXPECT_FALSE(matches(g, R"("abc")"));
  g = schema(R"({"$defs": {"n": {"type": "integer"}},
                 "$ref": "#/$defs/n", "minimum": 10})");
  EXPECT_TRUE(matches(g, "10"));
  EXPECT_FALSE(matches(g, "9"));
  // Drafts 3 to 7 ignore what stands beside a $ref.
  g = schema(R"({"$schema": "http://json-schema.org/draft-07/schema#",
                 "definitions": {"n": {"type": "integer"}},
                 "properties": {"a": {"$ref": "#/definitions/n",
                                      "type": "string", "minimum": 10}}})");
  EXPECT_TRUE(matches(g, R"({"a": 9})"));
  EXPECT_FALSE(matches(g, R"({"a": "x"})"));
  // Disjoint by a constant: oneOf with a sibling is fine.
  g = schema(R"({"type": "object", "properties": {"k": {"type": "string"},
                                                   "v": {}},
                 "required": ["k"],
                 "oneOf": [{"properties": {"k": {"const": "a"}}},
                           {"properties": {"k": {"const": "b"}}}]})");
  EXPECT_TRUE(matches(g, R"({"k":"a","v":1})"));
  EXPECT_FALSE(matches(g, R"({"k":"c"})"));
}

// Whole bounds on numbers bound the integer part (a subset: no exponent,
// no 5.5 under maximum 5, no -0.5 above -1).
TEST(JsonSchema, NumberBounds) {
  auto g = schema(R"({"type": "number", "minimum": 0, "maximum": 1})");
  for (const char *ok : {"0", "0.5", "1", "0.999"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char *bad : {"1.5", "-0.1", "2", "1e0", "-1"})
    EXPECT_FALSE(matches(g, bad)) << bad;
  g = schema(R"({"type": "number", "minimum": -90, "maximum": 90})");
  for (const char *ok : {"-90", "-45.5", "90", "12.25", "0", "90.0", "-90.00"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char *bad : {"-91", "90.5", "-90.5", "100", "90.01", "90."})
    EXPECT_FALSE(matches(g, bad)) << bad;
  g = schema(R"({"type": "number", "exclusiveMinimum": 0})");
  EXPECT_TRUE(matches(g, "3"));
  EXPECT_TRUE(matches(g, "1.5"));
  EXPECT_FALSE(matches(g, "0"));
  EXPECT_FALSE(matches(g, "-1"));
  // Draft 4's boolean form.
  g = schema(R"({"type": "number", "minimum": 2, "exclusiveMinimum": true})");
  EXPECT_FALSE(matches(g, "2"));
  EXPECT_TRUE(matches(g, "3.5"));
  g = schema(R"({"type": "number", "maximum": 0, "exclusiveMaximum": false})");
  EXPECT_TRUE(matches(g, "0"));
  EXPECT_TRUE(matches(g, "-7.25"));
  EXPECT_FALSE(matches(g, "1"));
  // Magnitudes below one, and strict bounds next to them.
  g = schema(R"({"type": "array", "prefixItems": [
      {"type": "number", "exclusiveMinimum": 0},
      {"type": "number", "minimum": -1, "maximum": 1},
      {"type": "number", "exclusiveMaximum": 0},
      {"type": "number", "minimum": -10, "exclusiveMaximum": -2}]})");
  for (const char *ok :
       {"[0.5,-0.5,-0.001,-2.5]", "[7,-0.25,-7,-2.0001]", "[0.01,1,-1,-10]"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char *bad : {"[0,0,-1,-3]", "[0.0,0,-1,-3]", "[1,1.5,-1,-3]",
                          "[1,0,0,-3]", "[1,0,-0.5,-2]", "[1,0,-1,-10.5]"})
    EXPECT_FALSE(matches(g, bad)) << bad;
}

// Lengths fold into a pattern of one repeated class, and drop beside a
// format whose strings all fit them; other combinations are refused.
TEST(JsonSchema, LengthsWithPatternsAndFormats) {
  auto g = schema(R"({"type": "string", "pattern": "^[A-Za-z0-9:_\\-]+$",
                      "maxLength": 5})");
  EXPECT_TRUE(matches(g, R"("ab:c-")"));
  EXPECT_FALSE(matches(g, R"("abcdef")"));
  EXPECT_FALSE(matches(g, R"("")"));
  g = schema(R"({"type": "string", "pattern": "^\\w{2,}$", "minLength": 3,
                 "maxLength": 4})");
  EXPECT_TRUE(matches(g, R"("abc")"));
  EXPECT_FALSE(matches(g, R"("ab")"));
  g = schema(R"({"type": "string", "format": "date", "maxLength": 10})");
  EXPECT_TRUE(matches(g, R"("2024-02-28")"));
  EXPECT_NE(errorOf(R"({"type": "string", "format": "date", "maxLength": 9})")
                .find("'minLength'/'maxLength' together with 'format'"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"type": "string", "pattern": "a+b", "maxLength": 9})")
                .find("'minLength'/'maxLength' together with 'pattern'"),
            std::string::npos);
}

// multipleOf: 0.1, 0.01, ... bound the fraction digits; a whole step the
// multiples (without bounds); others are refused.
TEST(JsonSchema, MultipleOf) {
  auto g = schema(R"({"type": "number", "multipleOf": 0.01, "minimum": 0,
                      "maximum": 100})");
  for (const char *ok : {"0", "12.5", "99.99", "100", "0.01"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char *bad : {"0.001", "100.5", "-1", "1e2"})
    EXPECT_FALSE(matches(g, bad)) << bad;
  g = schema(R"({"multipleOf": 7})");
  for (const char *ok : {"0", "7", "-14", "700", "999999999999994"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char *bad : {"8", "-15", "7.0", "070", "1000000000000006"})
    EXPECT_FALSE(matches(g, bad)) << bad;
  EXPECT_TRUE(matches(g, R"("not a number")")); // no type: any value
  g = schema(R"({"type": "number", "multipleOf": 1, "maximum": 3})");
  EXPECT_TRUE(matches(g, "3"));
  EXPECT_FALSE(matches(g, "2.5"));
  EXPECT_EQ(errorOf(R"({"type": "number", "multipleOf": 2.5})"),
            "schema.json: at /multipleOf: only whole steps up to 100 and 0.1, "
            "0.01, ... are supported");
  EXPECT_EQ(errorOf(R"({"type": "integer", "multipleOf": 5, "minimum": 1})"),
            "schema.json: at /multipleOf: a whole step above 1 together with "
            "minimum / maximum is not supported");
}

// Draft 4's tuples: items as a list, additionalItems for the rest.
TEST(JsonSchema, Draft4Tuples) {
  auto g = schema(R"({"type": "array", "items": [{"type": "integer"},
                                                  {"type": "string"}],
                      "additionalItems": false})");
  EXPECT_TRUE(matches(g, R"([1,"a"])"));
  EXPECT_FALSE(matches(g, R"([1,"a",2])"));
  EXPECT_FALSE(matches(g, R"(["a"])"));
  g = schema(R"({"type": "array", "items": [{"type": "integer"}],
                 "additionalItems": {"type": "boolean"}})");
  EXPECT_TRUE(matches(g, R"([1,true,false])"));
  EXPECT_FALSE(matches(g, R"([1,2])"));
  g = schema(R"({"type": "array", "items": {"type": "integer"},
                 "additionalItems": false})");
  EXPECT_TRUE(matches(g, R"([1,2,3])"));
}

// patternProperties: listed properties take a matching pattern's schema;
// other members come from a single pattern's keys.
TEST(JsonSchema, PatternProperties) {
  auto g = schema(R"({"type": "object",
      "patternProperties": {"^x-[a-z]+$": {"type": "integer"}}})");
  EXPECT_TRUE(matches(g, R"({})"));
  EXPECT_TRUE(matches(g, R"({"x-a":1,"x-bc":2})"));
  EXPECT_FALSE(matches(g, R"({"y":1})"));
  EXPECT_FALSE(matches(g, R"({"x-a":"s"})"));
  g = schema(R"({"type": "object", "properties": {"id": {}, "num": {}},
      "patternProperties": {"^n": {"type": "number"}}})");
  EXPECT_TRUE(matches(g, R"({"id":"a","num":2})"));
  EXPECT_FALSE(matches(g, R"({"id":"a","num":"2"})"));
  EXPECT_FALSE(matches(g, R"({"id":"a","nope":2})"));
  // Pattern members whatever additionalProperties says; a key matching two
  // patterns is valid under both schemas.
  g = schema(R"({"type": "object", "additionalProperties": false,
      "patternProperties": {"^[a-z]+$": {"type": "integer"},
                            "^[a-z0-9]+$": {"minimum": 0}}})");
  EXPECT_TRUE(matches(g, R"({"ab":1,"c9":2})"));
  EXPECT_FALSE(matches(g, R"({"ab":-1})"));
  EXPECT_FALSE(matches(g, R"({"A":1})"));
  // ".*" takes every key but the listed ones.
  g = schema(R"({"properties": {"n": {"type": "string"}},
      "patternProperties": {".*": {"type": ["string", "boolean"]}}})");
  EXPECT_TRUE(matches(g, R"({"a":true,"n":"x","b":"y"})"));
  EXPECT_FALSE(matches(g, R"({"n":true})"));
  EXPECT_FALSE(matches(g, R"({"a":1})"));
  // Patterns that take anything beside other keys that do say nothing.
  g = schema(R"({"properties": {"n": {"type": "string"}},
      "patternProperties": {"^x_": {}, "^y": {"description": "any"}}})");
  EXPECT_TRUE(matches(g, R"({"x_a":1,"n":"x","enum":[2]})"));
  EXPECT_FALSE(matches(g, R"({"n":1})"));
  // Literal prefixes ("^x-") keep other keys: those starting with none.
  g = schema(R"({"properties": {"a": {}},
      "patternProperties": {"^x-": {"type": "integer"}}})");
  EXPECT_TRUE(matches(g, R"({"a":1,"b":"s","x":"s","x-1":2})"));
  EXPECT_FALSE(matches(g, R"({"x-1":"s"})"));
  EXPECT_FALSE(matches(g, R"({"x-":"s"})"));
  EXPECT_FALSE(matches(g, R"({"x\u002d1":"s"})")); // spells the prefix
  // Each pattern writes its own members; patterns that start with no byte
  // in common never share a key. One a listed name matches writes none.
  g = schema(R"({"properties": {"Cp": {}},
      "patternProperties": {"^/": {"type": "string"},
                            "^[^/]": {"type": "object"}}})");
  EXPECT_TRUE(matches(g, R"({"Cp":{},"/a":"s","/":"t"})"));
  EXPECT_FALSE(matches(g, R"({"/a":1})"));
  EXPECT_FALSE(matches(g, R"({"b":{}})")); // valid, but not written
  // Overlapping patterns: a key's value fits both.
  g = schema(R"({"patternProperties": {"^a": {"type": "integer"},
                                      "^ab": {"minimum": 5}}})");
  EXPECT_TRUE(matches(g, R"({"ab":7})"));
  EXPECT_FALSE(matches(g, R"({"ab":3})"));
  // A pattern that may write a key bringing others writes nothing.
  g = schema(R"({"patternProperties": {"^x-": {"type": "integer"}},
      "properties": {"b": {"type": "integer"}},
      "dependencies": {"x-a": ["b"]}, "additionalProperties": false})");
  EXPECT_FALSE(matches(g, R"({"x-a":1})"));
  EXPECT_TRUE(matches(g, R"({"b":1})"));
}

TEST(JsonSchema, MinAndMaxProperties) {
  auto g = schema(R"({"type": "object", "properties": {"a": {"type":
      "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
      "minProperties": 1, "maxProperties": 2})");
  EXPECT_FALSE(matches(g, "{}"));
  EXPECT_TRUE(matches(g, R"({"b":1})"));
  EXPECT_TRUE(matches(g, R"({"a":1,"c":2})"));
  EXPECT_FALSE(matches(g, R"({"a":1,"b":2,"c":3})"));
  g = schema(R"({"type": "object", "additionalProperties": {"type":
      "integer"}, "maxProperties": 2})");
  EXPECT_TRUE(matches(g, R"({"x":1,"y":2})"));
  EXPECT_FALSE(matches(g, R"({"x":1,"y":2,"z":3})"));
  EXPECT_EQ(errorOf(R"({"type": "object", "properties": {"a": {}, "b": {}},
                        "required": ["a", "b"], "maxProperties": 1})"),
            "schema.json: at /: no object with the required properties fits "
            "minProperties / maxProperties");
}

TEST(JsonSchema, AdditionalProperties) {
  auto any = schema(R"({"type": "object"})");
  EXPECT_TRUE(matches(any, R"({"x": [1, {"y": null}], "z": "w"})"));
  auto extra = schema(R"({"properties": {"id": {"type": "integer"}},
      "required": ["id"], "additionalProperties": {"type": "string"}})");
  EXPECT_TRUE(matches(extra, R"({"id": 1, "name": "n", "i": "x"})"));
  EXPECT_FALSE(matches(extra, R"({"id": 1, "name": 2})"));
  // A declared name is never an additional key (its schema would apply).
  EXPECT_FALSE(matches(extra, R"({"id": 1, "id": "x"})"));
  EXPECT_TRUE(matches(extra, R"({"id": 1, "idx": "x", "i": "y"})"));
}

TEST(JsonSchema, ArraysWithBoundsAndPrefixItems) {
  auto g = schema(R"({"type": "array", "items": {"type": "integer"},
                      "minItems": 2, "maxItems": 3})");
  EXPECT_TRUE(matches(g, "[1, 2]"));
  EXPECT_TRUE(matches(g, "[1,2,3]"));
  EXPECT_FALSE(matches(g, "[1]"));
  EXPECT_FALSE(matches(g, "[1, 2, 3, 4]"));
  EXPECT_FALSE(matches(g, "[]"));
  auto tuple = schema(R"({"prefixItems": [{"type": "string"}, {"type": "null"}],
                          "items": false})");
  EXPECT_TRUE(matches(tuple, R"(["a", null])"));
  EXPECT_TRUE(matches(tuple, R"(["a"])"));
  EXPECT_TRUE(matches(tuple, "[]"));
  EXPECT_FALSE(matches(tuple, R"(["a", null, 1])"));
  EXPECT_FALSE(matches(tuple, R"([null])"));
  auto open = schema(R"({"prefixItems": [{"const": 1}], "minItems": 2})");
  EXPECT_TRUE(matches(open, R"([1, "x"])"));
  EXPECT_FALSE(matches(open, R"([1])"));
  EXPECT_FALSE(matches(open, R"([2, 2])"));
}

TEST(JsonSchema, EnumConstAnyOfAndTypeLists) {
  auto e = schema(R"({"enum": ["red", 2, null, {"a": [true]}, "日本"]})");
  for (const char *ok :
       {R"("red")", "2", "null", R"({"a":[true]})", R"("日本")"})
    EXPECT_TRUE(matches(e, ok)) << ok;
  EXPECT_FALSE(matches(e, R"("blue")"));
  // A whole number written as a float also takes its integer form.
  auto numbers = schema(R"({"enum": [2.0, 7, 1.5]})");
  for (const char *ok : {"2", "2.0", "7", "1.5"})
    EXPECT_TRUE(matches(numbers, ok)) << ok;
  for (const char *bad : {"2.", "2.01", "1", "1.05", "15", "7.0", "-2"})
    EXPECT_FALSE(matches(numbers, bad)) << bad;
  auto typed = schema(R"({"type": "string", "enum": ["a", 1]})");
  EXPECT_TRUE(matches(typed, R"("a")"));
  EXPECT_FALSE(matches(typed, "1"));
  auto any = schema(R"({"anyOf": [{"type": "integer"}, {"type": "string",
                                                          "maxLength": 1}]})");
  EXPECT_TRUE(matches(any, "12"));
  EXPECT_TRUE(matches(any, R"("x")"));
  EXPECT_FALSE(matches(any, R"("xy")"));
  auto list = schema(R"({"type": ["number", "null"]})");
  EXPECT_TRUE(matches(list, "-1.5E+10"));
  EXPECT_TRUE(matches(list, "null"));
  EXPECT_FALSE(matches(list, "true"));
  EXPECT_FALSE(matches(list, "01"));
  EXPECT_FALSE(matches(list, "1."));
}

TEST(JsonSchema, EnumValuesSharingPrefixes) {
  // Values share their prefixes in one rule (a radix tree): one a prefix of
  // another, duplicates, many siblings.
  std::string values = R"("a", "ab", "abc", "abd", "b", "ab", "", 10, 100)";
  for (int i = 0; i < 300; ++i)
    values += ", \"005-" + std::to_string(1000 + i).substr(1) + "\"";
  auto e = schema(R"({"enum": [)" + values + "]}");
  for (const char *ok : {R"("a")", R"("ab")", R"("abc")", R"("abd")", R"("b")",
                         R"("")", "10", "100", R"("005-000")", R"("005-299")"})
    EXPECT_TRUE(matches(e, ok)) << ok;
  for (const char *bad : {R"("abe")", R"("abcd")", R"("c")", "1", "1000",
                          R"("005-300")", R"("005-00")", R"("005-0000")"})
    EXPECT_FALSE(matches(e, bad)) << bad;
  Matcher m(e, {test::kByteEos});
  for (char c : std::string(R"("005-12)")) {
    test::expectMaskIsExact(m, std::string("before '") + c + "'");
    ASSERT_TRUE(m.accept(static_cast<unsigned char>(c)));
  }
  test::expectMaskIsExact(m, "after \"005-12");
}

TEST(JsonSchema, IntegerBounds) {
  struct Range {
    const char *schema;
    int64_t lo, hi;
  };
  for (const Range &r : std::vector<Range>{
           {R"({"type": "integer", "minimum": -12, "maximum": 305})", -12, 305},
           {R"({"type": "integer", "minimum": 25, "maximum": 73})", 25, 73},
           {R"({"type": "integer", "exclusiveMinimum": 0, "maximum": 1000})", 1,
            1000},
           {R"({"type": "integer", "minimum": -250, "exclusiveMaximum": -9})",
            -250, -10},
           {R"({"type": "integer", "minimum": 0.5, "maximum": 9.9})", 1, 9},
           {R"({"type": "integer", "minimum": 7, "maximum": 7})", 7, 7}}) {
    auto g = schema(r.schema);
    for (int64_t x = r.lo - 120; x <= r.hi + 120; ++x)
      EXPECT_EQ(matches(g, std::to_string(x)), x >= r.lo && x <= r.hi)
          << r.schema << " " << x;
    EXPECT_FALSE(matches(g, "-0")) << r.schema;
    EXPECT_FALSE(matches(g, "07")) << r.schema;
  }
  auto open = schema(R"({"type": "integer", "minimum": 100})");
  EXPECT_TRUE(matches(open, "100"));
  EXPECT_TRUE(matches(open, "9999999999999999"));
  EXPECT_FALSE(matches(open, "99"));
  EXPECT_FALSE(matches(open, "-100"));
}

TEST(JsonSchema, RecursiveRefs) {
  auto g = schema(R"({"$ref": "#/$defs/node", "$defs": {"node": {
      "type": "object", "properties": {"v": {"type": "integer"},
      "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
      "required": ["v"]}}})");
  EXPECT_TRUE(
      matches(g, R"({"v": 1, "kids": [{"v": 2}, {"v": 3, "kids": []}]})"));
  EXPECT_FALSE(matches(g, R"({"v": 1, "kids": [{"kids": []}]})"));
  auto self = schema(R"({"type": "array", "items": {"anyOf": [
      {"type": "integer"}, {"$ref": "#"}]}})");
  EXPECT_TRUE(matches(self, "[1, [2, [3, []]]]"));
}

TEST(JsonSchema, StringsEscapesLengthsPatternsAndFormats) {
  auto s = schema(R"({"type": "string"})");
  EXPECT_TRUE(matches(s, R"("a\"b\\c\u00e9\n日本")"));
  EXPECT_FALSE(matches(s, "\"a\nb\"")); // a raw control character
  EXPECT_FALSE(matches(s, R"("\x")"));
  auto len = schema(R"({"type": "string", "minLength": 2, "maxLength": 3})");
  EXPECT_TRUE(matches(len, R"("日本")")); // characters, not bytes
  EXPECT_TRUE(matches(len, R"("a\nb")"));
  EXPECT_FALSE(matches(len, R"("a")"));
  EXPECT_FALSE(matches(len, R"("abcd")"));
  auto p = schema(R"({"type": "string", "pattern": "^[A-Z]{2}-\\d{3}$"})");
  EXPECT_TRUE(matches(p, R"("AB-123")"));
  EXPECT_FALSE(matches(p, R"("AB-12")"));
  auto unanchored = schema(R"({"type": "string", "pattern": "a\"b"})");
  EXPECT_TRUE(matches(unanchored, R"("xxa\"byy")")); // " is escaped
  EXPECT_FALSE(matches(unanchored, R"("ab")"));
  // A search for one run of a class: whatever surrounds the run.
  auto run = schema(R"({"type": "string", "pattern": "[a-z]{3}"})");
  for (const char *ok : {R"("abc")", R"("ab-abcd-x")", R"("A1xyz")"})
    EXPECT_TRUE(matches(run, ok)) << ok;
  for (const char *bad : {R"("ab-ab")", R"("")", R"("a1b2c3")"})
    EXPECT_FALSE(matches(run, bad)) << bad;
  auto tail = schema(R"({"type": "string", "pattern": "\\d+$"})");
  EXPECT_TRUE(matches(tail, R"("x12")"));
  EXPECT_TRUE(matches(tail, R"("1a2")"));
  EXPECT_FALSE(matches(tail, R"("12x")"));
  auto bounded = schema(R"({"type": "string", "pattern": "a{2,3}"})");
  EXPECT_TRUE(matches(bounded, R"("xaaaax")")); // holds a run of 2
  EXPECT_FALSE(matches(bounded, R"("xaxa")"));
  auto boundedEnd = schema(R"({"type": "string", "pattern": "a{2,3}$"})");
  EXPECT_TRUE(matches(boundedEnd, R"("baaaa")")); // ends with aaa
  EXPECT_FALSE(matches(boundedEnd, R"("aab")"));
  // Each top-level alternative has its own anchors: ^a|b$ is (^a)|(b$).
  auto alts = schema(R"({"type": "string", "pattern": "^ab|c[|]d$|(e|f)g"})");
  for (const char *ok : {R"("abzz")", R"("zzc|d")", R"("xfgx")", R"("ab")"})
    EXPECT_TRUE(matches(alts, ok)) << ok;
  for (const char *bad : {R"("zab")", R"("c|dz")", R"("eh")", R"("cd")"})
    EXPECT_FALSE(matches(alts, bad)) << bad;
  auto empty = schema(R"({"type": "string", "pattern": "^x|"})");
  EXPECT_TRUE(matches(empty, R"("anything")"));
  auto date = schema(R"({"type": "string", "format": "date-time"})");
  EXPECT_TRUE(matches(date, R"("2024-02-28T13:05:59.123Z")"));
  EXPECT_TRUE(matches(date, R"("2024-12-31T00:00:00+05:30")"));
  EXPECT_FALSE(matches(date, R"("2024-02-30T00:00:00Z")"));
  auto uuid = schema(R"({"format": "uuid"})");
  EXPECT_TRUE(matches(uuid, R"("123e4567-e89b-12d3-a456-426614174000")"));
  auto email = schema(R"({"type": "string", "format": "email"})");
  EXPECT_TRUE(matches(email, R"("a.b+c@example.co")"));
  EXPECT_FALSE(matches(email, R"("a..b@example.co")"));
  auto uri = schema(R"({"type": "string", "format": "uri"})");
  for (const char *ok :
       {R"("https://example.com/a/b.json")", R"("http://localhost:8086/x?q=1")",
        R"("urn:isbn:0451450523")", R"("file:///etc/hosts")",
        R"("https://en.wikipedia.org/wiki/A%E2%80%93B#top")"})
    EXPECT_TRUE(matches(uri, ok)) << ok;
  EXPECT_FALSE(matches(uri, R"("example.com")"));
  EXPECT_FALSE(matches(uri, R"("https://exa mple.com")"));
  EXPECT_FALSE(matches(uri, R"("http://x/%zz")"));
  auto ref = schema(R"({"type": "string", "format": "uri-reference"})");
  EXPECT_TRUE(matches(ref, R"("/docs/x.md")"));
  EXPECT_TRUE(matches(ref, R"("../a/b?c#d")"));
  EXPECT_FALSE(matches(ref, R"("a b")"));
  EXPECT_TRUE(matches(ref, R"("http://h/p")"));
  auto host = schema(R"({"type": "string", "format": "hostname"})");
  EXPECT_TRUE(matches(host, R"("api.example.org")"));
  EXPECT_FALSE(matches(host, R"("-bad.example")"));
  auto ip6 = schema(R"({"type": "string", "format": "ipv6"})");
  EXPECT_TRUE(matches(ip6, R"("2001:db8:0:0:0:ff00:42:8329")"));
  EXPECT_FALSE(matches(ip6, R"("2001:db8::1")")); // a subset
  // A vendor's format asserts nothing.
  auto vendor = schema(R"({"type": "string", "format": "topic"})");
  EXPECT_TRUE(matches(vendor, R"("anything at all")"));
}

TEST(JsonSchema, JsonObjectMode) {
  auto g = compileForBytes(grammarForJson(true));
  EXPECT_TRUE(matches(g, R"({"a": [1, "b", {"c": null}], "d": -0.5e-3})"));
  EXPECT_FALSE(matches(g, "[1]"));
  EXPECT_FALSE(matches(g, "\"x\""));
  auto any = compileForBytes(grammarForJson(false));
  EXPECT_TRUE(matches(any, "[1]"));
  EXPECT_TRUE(matches(any, "\"x\""));
}

TEST(JsonSchema, RandomWalksAreJsonOfTheSchemasShape) {
  auto g = schema(R"({"type": "object", "properties": {
      "name": {"type": "string", "maxLength": 6},
      "age": {"type": "integer"},
      "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 3},
      "kind": {"anyOf": [{"const": "x"}, {"type": "null"}]}},
      "required": ["name", "tags"]})",
                  kStrict);
  sample::Rng rng(7);
  int finished = 0;
  for (int walk = 0; walk < 200; ++walk) {
    bool done;
    const std::string text = test::randomWalk(Matcher(g, {test::kByteEos}), rng,
                                              test::kByteEos, 400, &done);
    if (!done)
      continue;
    ++finished;
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(text)) << text;
    ASSERT_TRUE(j.is_object()) << text;
    EXPECT_TRUE(j.contains("name") && j["name"].is_string()) << text;
    EXPECT_LE(j["name"].get<std::string>().size(), 6u * 4) << text;
    ASSERT_TRUE(j.contains("tags") && j["tags"].is_array()) << text;
    EXPECT_LE(j["tags"].size(), 3u) << text;
    for (const auto &t : j["tags"])
      EXPECT_TRUE(t == "a" || t == "b") << text;
    if (j.contains("age")) {
      EXPECT_TRUE(j["age"].is_number_integer()) << text;
    }
    if (j.contains("kind")) {
      EXPECT_TRUE(j["kind"] == "x" || j["kind"].is_null()) << text;
    }
    for (const auto &[k, _] : j.items())
      EXPECT_TRUE(k == "name" || k == "age" || k == "tags" || k == "kind");
  }
  EXPECT_GE(finished, 150);
}

TEST(JsonSchema, BadSchemasAreNamedErrors) {
  EXPECT_NE(errorOf("{\"type\": ").find("schema.json: not valid JSON"),
            std::string::npos);
  EXPECT_EQ(errorOf(R"({"properties": {"n": {"type": "number",
                                                 "propertyNames": {}}}})"),
            "schema.json: at /properties/n: the keyword 'propertyNames' is not "
            "supported");
  EXPECT_EQ(errorOf(R"({"type": "strin"})"),
            "schema.json: at /type: unknown type 'strin'");
  EXPECT_EQ(errorOf(R"({"$ref": "#/$defs/missing"})"),
            "schema.json: at /$ref: '#/$defs/missing' points to nothing");
  EXPECT_EQ(errorOf(R"({"$ref": "https://example.com/s.json"})"),
            "schema.json: at /$ref: only references into this document "
            "(\"#...\") are supported, not 'https://example.com/s.json'");
  EXPECT_EQ(errorOf(R"({"type": "array", "minItems": 3, "maxItems": 2})"),
            "schema.json: at /: maxItems is below minItems: nothing validates");
  EXPECT_EQ(errorOf(R"({"type": "object", "properties": {"a": false},
                        "required": ["a"]})"),
            "schema.json: at /properties/a: a required property whose "
            "schema is false");
  EXPECT_EQ(errorOf(R"({"type": "string", "format": "iri"})"),
            "schema.json: at /format: the format 'iri' is not supported "
            "(known: date, date-time, email, hostname, ipv4, ipv6, time, uri, "
            "uri-reference, uuid)");
  EXPECT_EQ(errorOf(R"({"type": "string", "pattern": "(a"})"),
            "schema.json: at /pattern: pattern /(a/ at offset 2: missing ')'");
  EXPECT_EQ(errorOf(R"j({"type": "string", "pattern": "(?=a)"})j"),
            "schema.json: at /pattern: pattern /(?=a)/ at offset 1: "
            "lookaround and named groups are not supported");
  EXPECT_EQ(errorOf(R"j({"type": "string", "pattern": "(a)\\1"})j"),
            "schema.json: at /pattern: pattern /(a)\\1/ at offset 5: "
            "backreferences are not supported");
  EXPECT_EQ(errorOf(R"({"allOf": [{"pattern": "a"}, {"pattern": "b"}]})"),
            "schema.json: at /allOf: allOf: 'pattern' differs between the "
            "schemas and cannot be merged");
  EXPECT_EQ(errorOf(R"({"allOf": [{"properties": {"a": {}},
                                    "additionalProperties": false},
                                   {"properties": {"b": {}}}]})"),
            "schema.json: at /allOf: allOf: property 'b' of one schema is an "
            "additional property of another (not supported)");
  EXPECT_EQ(errorOf(R"({"type": "number", "maximum": 1.5})"),
            "schema.json: at /maximum: 'maximum' on a number must be a whole "
            "number (other bounds are supported on integers only)");
  EXPECT_EQ(
      errorOf(R"({"type": "integer", "minimum": 3.5, "exclusiveMaximum": 4})"),
      "schema.json: at /: no integer lies within its minimum and maximum");

  EXPECT_EQ(errorOf("false"), "schema.json: at /: the schema false matches "
                              "nothing");
  EXPECT_EQ(errorOf("[1]"),
            "schema.json: at /: a schema must be an object or a boolean");
}

} // namespace
} // namespace llmc::grammar
