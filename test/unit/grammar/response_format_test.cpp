// OpenAI's response_format as llmc reads it, and the cache that shares
// compiled grammars between requests.
#include "grammar_test_util.h"

#include "llmc/grammar/response_format.h"
#include "llmc/support/error.h"

#include <gtest/gtest.h>

namespace llmc::grammar {
namespace {

using Json = nlohmann::ordered_json;

std::string errorOf(const std::string &body) {
  try {
    parseResponseFormat(Json::parse(body));
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ResponseFormat, TheThreeTypes) {
  EXPECT_FALSE(parseResponseFormat(Json::parse(R"({"type": "text"})")));
  auto object = parseResponseFormat(Json::parse(R"({"type": "json_object"})"));
  ASSERT_TRUE(object);
  EXPECT_EQ(object->kind, SourceKind::JsonObject);
  // The schema keeps its property order: it is the order written.
  auto schema = parseResponseFormat(Json::parse(
      R"({"type": "json_schema", "json_schema": {"name": "n", "strict": true,
          "schema": {"properties": {"z": {}, "a": {}}}}})"));
  ASSERT_TRUE(schema);
  EXPECT_EQ(schema->kind, SourceKind::JsonSchema);
  EXPECT_EQ(schema->text, R"({"properties":{"z":{},"a":{}}})");
  EXPECT_EQ(schema->origin, "response_format.json_schema.schema");
}

TEST(ResponseFormat, BadValuesNameTheField) {
  EXPECT_EQ(errorOf("[]"), "response_format must be an object like "
                           "{\"type\": \"json_object\"}");
  EXPECT_EQ(errorOf(R"({"type": "xml"})"),
            "response_format.type must be one of text, json_object, "
            "json_schema, got \"xml\"");
  EXPECT_EQ(errorOf(R"({"type": "json_schema"})"),
            "response_format.json_schema must be an object with \"name\" and "
            "\"schema\"");
  EXPECT_EQ(
      errorOf(R"({"type": "json_schema", "json_schema": {"schema": {}}})"),
      "response_format.json_schema.name must be a non-empty string");
  EXPECT_EQ(errorOf(R"({"type": "json_schema", "json_schema": {"name": "n"}})"),
            "response_format.json_schema.schema is missing (a JSON Schema "
            "object)");
  EXPECT_EQ(errorOf(R"({"type": "json_schema", "json_schema": {"name": "n",
                        "strict": 1, "schema": {}}})"),
            "response_format.json_schema.strict must be true or false");
  std::string deep = "{}";
  for (int i = 0; i < 200; ++i)
    deep = R"({"items": )" + deep + "}";
  EXPECT_EQ(errorOf(R"({"type": "json_schema", "json_schema": {"name": "n",
                        "schema": )" +
                    deep + "}}"),
            "response_format.json_schema.schema: nested deeper than 128 "
            "levels");
}

TEST(GrammarCache, SharesCompiledGrammarsBySource) {
  GrammarCache cache(test::byteVocabulary(), 2);
  auto a = cache.get(SourceKind::Gbnf, "root ::= \"a\"", "a.gbnf");
  EXPECT_EQ(cache.get(SourceKind::Gbnf, "root ::= \"a\"", "a.gbnf"), a);
  auto b = cache.get(SourceKind::JsonSchema, R"({"type": "integer"})", "s");
  auto o = cache.get(SourceKind::JsonObject, "", "response_format");
  EXPECT_NE(a, b);
  EXPECT_EQ(cache.get(SourceKind::JsonObject, "ignored", "x"), o);
  // Past its capacity the least recently used is compiled again.
  EXPECT_NE(cache.get(SourceKind::Gbnf, "root ::= \"a\"", "a.gbnf"), a);
  EXPECT_THROW(cache.get(SourceKind::Gbnf, "root ::= (", "bad.gbnf"), Error);
}

} // namespace
} // namespace llmc::grammar
