//===- json_file.h - JSON files users hand us ------------------*- C++ -*-===//
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace llmc {

/// Parses JSON text; a syntax error throws llmc::Error naming `fileName` and
/// the line and column, as "config.json:3:14: JSON syntax error: ...".
nlohmann::json parseJson(std::string_view text, const std::string &fileName);

/// Reads and parses a JSON file; errors name the path.
nlohmann::json readJsonFile(const std::string &path);

/// Typed access to a JSON object read from `file`, with errors a user can act
/// on: "config.json: missing key 'hidden_size'", "config.json: key
/// 'num_hidden_layers' must be an integer, got string".
class JsonObject {
public:
  JsonObject(const nlohmann::json &json, std::string file);
  bool has(const std::string &key) const;
  /// True when the key is absent or null.
  bool isNull(const std::string &key) const;
  int64_t integer(const std::string &key) const;
  int64_t integer(const std::string &key, int64_t fallback) const;
  double number(const std::string &key) const;
  double number(const std::string &key, double fallback) const;
  bool boolean(const std::string &key, bool fallback) const;
  std::string string(const std::string &key) const;
  std::string string(const std::string &key, const std::string &fallback) const;
  const nlohmann::json &raw() const { return json_; }
  const std::string &file() const { return file_; }

private:
  const nlohmann::json &at(const std::string &key) const;
  [[noreturn]] void wrongType(const std::string &key, const char *want) const;
  const nlohmann::json &json_;
  std::string file_;
};

} // namespace llmc
