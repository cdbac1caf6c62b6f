#include "llmc/config/json_file.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

namespace llmc {

nlohmann::json parseJson(std::string_view text, const std::string &fileName) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error &e) {
    // nlohmann reports a byte offset (1-based, one past the offending byte);
    // users need a line and column.
    size_t offset = e.byte == 0 ? 0 : std::min<size_t>(e.byte - 1, text.size());
    size_t line = 1, column = 1;
    for (size_t i = 0; i < offset; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] parse error at line
    // 1, column 2: " prefix; keep the explanation.
    if (auto pos = what.find(": "); pos != std::string::npos)
      what = what.substr(pos + 2);
    throw Error(fileName + ":" + std::to_string(line) + ":" +
                std::to_string(column) + ": JSON syntax error: " + what);
  }
}

nlohmann::json readJsonFile(const std::string &path) {
  return parseJson(readFile(path), path);
}

JsonObject::JsonObject(const nlohmann::json &json, std::string file)
    : json_(json), file_(std::move(file)) {
  if (!json_.is_object())
    throw Error(file_ + ": expected a JSON object at the top level, got " +
                std::string(json_.type_name()));
}

bool JsonObject::has(const std::string &key) const {
  return json_.contains(key);
}

bool JsonObject::isNull(const std::string &key) const {
  return !has(key) || json_.at(key).is_null();
}

const nlohmann::json &JsonObject::at(const std::string &key) const {
  if (!has(key))
    throw Error(file_ + ": missing key '" + key + "'");
  return json_.at(key);
}

void JsonObject::wrongType(const std::string &key, const char *want) const {
  throw Error(file_ + ": key '" + key + "' must be " + want + ", got " +
              std::string(json_.at(key).type_name()));
}

int64_t JsonObject::integer(const std::string &key) const {
  const auto &v = at(key);
  if (!v.is_number_integer())
    wrongType(key, "an integer");
  return v.get<int64_t>();
}

int64_t JsonObject::integer(const std::string &key, int64_t fallback) const {
  return isNull(key) ? fallback : integer(key);
}

double JsonObject::number(const std::string &key) const {
  const auto &v = at(key);
  if (!v.is_number())
    wrongType(key, "a number");
  return v.get<double>();
}

double JsonObject::number(const std::string &key, double fallback) const {
  return isNull(key) ? fallback : number(key);
}

bool JsonObject::boolean(const std::string &key, bool fallback) const {
  if (isNull(key))
    return fallback;
  const auto &v = at(key);
  if (!v.is_boolean())
    wrongType(key, "true or false");
  return v.get<bool>();
}

std::string JsonObject::string(const std::string &key) const {
  const auto &v = at(key);
  if (!v.is_string())
    wrongType(key, "a string");
  return v.get<std::string>();
}

std::string JsonObject::string(const std::string &key,
                               const std::string &fallback) const {
  return isNull(key) ? fallback : string(key);
}

} // namespace llmc
