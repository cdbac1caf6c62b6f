//===- json_util.h - Parsing JSON with user-facing errors ------*- C++ -*-===//
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace llmc::weights::detail {

/// Parses `text` (the JSON of `fileName`). Throws llmc::Error with line and
/// column on a syntax error, on a duplicate key in any object (nlohmann would
/// silently keep the last) and on nesting deeper than 64 (hostile input).
/// A duplicate top-level key is reported as "duplicate <topLevelNoun> 'K'".
nlohmann::json parseJson(std::string_view text, const std::string &fileName,
                         const char *topLevelNoun = "key");

/// Name of a JSON value's type for messages ("string", "array", ...).
const char *jsonTypeName(const nlohmann::json &v);

} // namespace llmc::weights::detail
