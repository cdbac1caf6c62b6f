//===- json.h - Parsing tokenizer JSON files safely -------------*- C++ -*-===//
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace llmc::tok::detail {

using nlohmann::json;

/// Parses `text`, bounding nesting depth so hostile files cannot exhaust the
/// stack. Throws llmc::Error "<origin>: invalid JSON: ...".
json parseJson(std::string_view text, const std::string &origin);

/// The "type" of a component object, or "" when absent / not a string.
std::string typeOf(const json &object);

/// object[key] as the given type, or `fallback` when absent or null.
bool getBool(const json &object, const char *key, bool fallback);
std::string getString(const json &object, const char *key,
                      const std::string &fallback);

/// A token written as "text" or {"content": "text", ...}; nullopt for null
/// or absent.
std::optional<std::string> tokenContent(const json &object, const char *key);

} // namespace llmc::tok::detail
