#include "json.h"

#include "llmc/support/error.h"

#include <algorithm>

namespace llmc::tok::detail {

namespace {
constexpr int kMaxDepth = 64;

/// The deepest nesting of arrays and objects in `text`, strings skipped;
/// malformed text only needs to be bounded here, the parser rejects it.
int nestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

} // namespace

json parseJson(std::string_view text, const std::string &origin) {
  // A scan first, not a parser callback: nlohmann's callback parser walks
  // an object's members at the end of each child object, quadratic in
  // Gemma 3's 6415 added tokens.
  if (nestingDepth(text) > kMaxDepth)
    throw Error(origin + ": invalid JSON: nested deeper than " +
                std::to_string(kMaxDepth) + " levels");
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception &e) {
    throw Error(origin + ": invalid JSON: " + e.what());
  }
}

std::string typeOf(const json &object) {
  if (!object.is_object())
    return {};
  auto it = object.find("type");
  return it != object.end() && it->is_string() ? it->get<std::string>()
                                               : std::string();
}

bool getBool(const json &object, const char *key, bool fallback) {
  if (!object.is_object())
    return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

std::string getString(const json &object, const char *key,
                      const std::string &fallback) {
  if (!object.is_object())
    return fallback;
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>()
                                               : fallback;
}

std::optional<std::string> tokenContent(const json &object, const char *key) {
  if (!object.is_object())
    return std::nullopt;
  auto it = object.find(key);
  if (it == object.end())
    return std::nullopt;
  if (it->is_string())
    return it->get<std::string>();
  if (it->is_object()) {
    auto content = it->find("content");
    if (content != it->end() && content->is_string())
      return content->get<std::string>();
  }
  return std::nullopt;
}

} // namespace llmc::tok::detail
