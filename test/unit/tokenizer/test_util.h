// Shared helpers for the tokenizer tests: fixture files and UTF-8 checks.
#pragma once

#include "llmc/support/mapped_file.h"
#include "llmc/tokenizer/tokenizer.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace llmc::tok::test {

/// A gtest parameter name from a folder name ('-' is not allowed).
struct FolderParamName {
  template <typename Info> std::string operator()(const Info &info) const {
    std::string name = info.param;
    for (char &ch : name)
      if (ch == '-')
        ch = '_';
    return name;
  }
};

inline std::string tokenizersDir() {
  return std::string(LLMC_DATA_DIR) + "/models/tokenizers";
}

struct FixtureCase {
  std::string text, decoded;
  std::vector<int32_t> ids;
  std::vector<std::string> tokens;
};

inline std::vector<FixtureCase> loadFixtures(const std::string &name) {
  auto j = nlohmann::json::parse(
      readFile(tokenizersDir() + "/" + name + "/fixtures.json"));
  std::vector<FixtureCase> cases;
  for (const auto &c : j.at("cases"))
    cases.push_back({c.at("text"), c.at("decoded"),
                     c.at("ids").get<std::vector<int32_t>>(),
                     c.at("tokens").get<std::vector<std::string>>()});
  return cases;
}

/// Strict UTF-8 check (no overlongs, surrogates or truncation).
inline bool isValidUtf8(const std::string &s) {
  size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80         ? 1
               : (b >> 5) == 6  ? 2
               : (b >> 4) == 14 ? 3
               : (b >> 3) == 30 ? 4
                                : 0;
    if (!n || i + n > s.size() || (n == 2 && b < 0xC2))
      return false;
    uint32_t cp = n == 1 ? b : b & (0x7F >> n);
    for (size_t k = 1; k < n; ++k) {
      auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80)
        return false;
      cp = (cp << 6) | (c & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
      return false;
    i += n;
  }
  return true;
}

} // namespace llmc::tok::test
