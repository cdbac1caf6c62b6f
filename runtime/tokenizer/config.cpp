#include "config.h"

#include "json.h"

#include "llmc/support/error.h"

#include <cstdlib>

namespace llmc::tok::detail {

namespace {
std::optional<bool> optionalBool(const json &object, const char *key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_boolean())
    return std::nullopt;
  return it->get<bool>();
}

json parseObject(std::string_view text, const std::string &origin) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return json::object();
  json j = parseJson(text, origin);
  if (!j.is_object())
    throw Error(origin + ": expected a JSON object");
  return j;
}
} // namespace

AddedToken addedTokenOf(const json &entry, std::optional<int64_t> id,
                        const std::string &where) {
  if (!entry.is_object())
    throw Error(where + ": expected an object");
  auto content = entry.find("content");
  if (content == entry.end() || !content->is_string())
    throw Error(where + ": 'content' is missing or not a string");
  if (!id) {
    auto it = entry.find("id");
    if (it == entry.end() || !it->is_number_integer())
      throw Error(where + ": 'id' is missing or not an integer");
    id = it->get<int64_t>();
  }
  if (*id < 0 || *id > INT32_MAX)
    throw Error(where + ": id " + std::to_string(*id) + " is out of range");
  AddedToken t;
  t.id = static_cast<int32_t>(*id);
  t.content = content->get<std::string>();
  t.special = getBool(entry, "special", false);
  t.lstrip = getBool(entry, "lstrip", false);
  t.rstrip = getBool(entry, "rstrip", false);
  t.singleWord = getBool(entry, "single_word", false);
  return t;
}

TokenizerConfig parseTokenizerConfig(std::string_view text,
                                     const std::string &origin) {
  json j = parseObject(text, origin);
  TokenizerConfig config;
  config.bosToken = tokenContent(j, "bos_token");
  config.eosToken = tokenContent(j, "eos_token");
  config.unkToken = tokenContent(j, "unk_token");
  config.addBos = optionalBool(j, "add_bos_token");
  config.addEos = optionalBool(j, "add_eos_token");
  auto decoder = j.find("added_tokens_decoder");
  if (decoder != j.end() && decoder->is_object()) {
    for (auto &[key, value] : decoder->items()) {
      char *end = nullptr;
      long id = std::strtol(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0' || id < 0 || id > INT32_MAX)
        throw Error(origin + ": bad added_tokens_decoder entry '" + key + "'");
      config.addedTokens.push_back(addedTokenOf(
          value, id, origin + ": added_tokens_decoder entry '" + key + "'"));
    }
  }
  return config;
}

std::string mergeSpecialTokensMap(std::string_view configText,
                                  std::string_view mapText,
                                  const std::string &configOrigin,
                                  const std::string &mapOrigin) {
  json config = parseObject(configText, configOrigin);
  json map = parseObject(mapText, mapOrigin);
  for (const char *key : {"bos_token", "eos_token", "unk_token", "pad_token"})
    if (map.contains(key) && !config.contains(key))
      config[key] = map[key];
  return config.dump();
}

} // namespace llmc::tok::detail
