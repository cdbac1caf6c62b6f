//===- json_format.h - JSON in and out of template values -------*- C++ -*-===//
#pragma once

#include "value.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace llmc::tmpl {

// JSON integers become ints (big ones keep their digits: parseContextJson),
// objects keep key order.
Value fromJson(const nlohmann::ordered_json &j);

struct JsonStyle {
  std::optional<std::string> indent; // nullopt: one line
  std::string itemSeparator = ", ";
  std::string keySeparator = ": ";
  bool sortKeys = false;
  bool ensureAscii = false;
};

// Python's json.dumps(v, ...) with the given style; EvalError for values JSON
// cannot hold (undefined, namespaces, macros).
std::string toJson(const Value &v, const JsonStyle &style);

} // namespace llmc::tmpl
