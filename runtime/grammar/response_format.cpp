//===- response_format.cpp - OpenAI's response_format ---------------------===//
#include "llmc/grammar/response_format.h"

#include "llmc/support/error.h"

#include <utility>
#include <vector>

namespace llmc::grammar {

void checkNesting(const nlohmann::ordered_json &value,
                  const std::string &origin) {
  std::vector<std::pair<const nlohmann::ordered_json *, size_t>> todo{
      {&value, 1}};
  while (!todo.empty()) {
    auto [v, depth] = todo.back();
    todo.pop_back();
    if (depth > kMaxSchemaDepth)
      throw Error(origin + ": nested deeper than " +
                  std::to_string(kMaxSchemaDepth) + " levels");
    if (v->is_structured())
      for (const auto &child : *v)
        todo.emplace_back(&child, depth + 1);
  }
}

std::optional<GrammarSource>
parseResponseFormat(const nlohmann::ordered_json &v, const std::string &field) {
  if (!v.is_object())
    throw Error(field + " must be an object like {\"type\": \"json_object\"}");
  if (!v.contains("type") || !v["type"].is_string())
    throw Error(field + ".type must be one of text, json_object, json_schema");
  const std::string type = v["type"].get<std::string>();
  if (type == "text")
    return std::nullopt;
  if (type == "json_object")
    return GrammarSource{SourceKind::JsonObject, "", field};
  if (type != "json_schema")
    throw Error(field +
                ".type must be one of text, json_object, json_schema, "
                "got \"" +
                type + "\"");
  const std::string at = field + ".json_schema";
  if (!v.contains("json_schema") || !v["json_schema"].is_object())
    throw Error(at + " must be an object with \"name\" and \"schema\"");
  const auto &js = v["json_schema"];
  if (!js.contains("name") || !js["name"].is_string() ||
      js["name"].get<std::string>().empty())
    throw Error(at + ".name must be a non-empty string");
  if (js.contains("strict") && !js["strict"].is_boolean() &&
      !js["strict"].is_null())
    throw Error(at + ".strict must be true or false");
  if (!js.contains("schema"))
    throw Error(at + ".schema is missing (a JSON Schema object)");
  const auto &schema = js["schema"];
  if (!schema.is_object() && !schema.is_boolean())
    throw Error(at + ".schema must be a JSON Schema object");
  checkNesting(schema, at + ".schema");
  return GrammarSource{SourceKind::JsonSchema, schema.dump(), at + ".schema",
                       js.value("strict", nlohmann::ordered_json(false)) ==
                           true};
}

} // namespace llmc::grammar
