#include "json.h"

#include "llmc/support/error.h"

namespace llmc::tok::detail {

namespace {
constexpr int kMaxDepth = 64;
}

json parseJson(std::string_view text, const std::string &origin) {
  auto limitDepth = [&](int depth, json::parse_event_t, json &) {
    if (depth > kMaxDepth)
      throw Error(origin + ": invalid JSON: nested deeper than " +
                  std::to_string(kMaxDepth) + " levels");
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), limitDepth);
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
