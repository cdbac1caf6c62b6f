#include "json_util.h"

#include "llmc/support/error.h"

#include <set>
#include <vector>

namespace llmc::weights::detail {

using nlohmann::json;

static constexpr int kMaxDepth = 64;

nlohmann::json parseJson(std::string_view text, const std::string &fileName,
                         const char *topLevelNoun) {
  std::vector<std::set<std::string>> keysPerObject;
  auto callback = [&](int depth, json::parse_event_t event, json &parsed) {
    if (depth > kMaxDepth)
      throw Error(fileName + ": JSON nested deeper than " +
                  std::to_string(kMaxDepth) + " levels");
    switch (event) {
    case json::parse_event_t::object_start:
      keysPerObject.emplace_back();
      break;
    case json::parse_event_t::object_end:
      if (!keysPerObject.empty())
        keysPerObject.pop_back();
      break;
    case json::parse_event_t::key: {
      const std::string &key = parsed.get_ref<const std::string &>();
      if (!keysPerObject.empty() && !keysPerObject.back().insert(key).second) {
        if (keysPerObject.size() == 1)
          throw Error(fileName + ": duplicate " + topLevelNoun + " '" + key +
                      "' in JSON header");
        throw Error(fileName + ": duplicate key '" + key + "' in JSON");
      }
      break;
    }
    default:
      break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), callback);
  } catch (const json::parse_error &e) {
    // e.byte is the 1-based offset of the offending character.
    size_t end = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    size_t line = 1, lineStart = 0;
    for (size_t i = 0; i < end; ++i)
      if (text[i] == '\n') {
        ++line;
        lineStart = i + 1;
      }
    std::string what = e.what();
    size_t colon = what.find(": ");
    std::string detail =
        colon == std::string::npos ? what : what.substr(colon + 2);
    throw Error(fileName + ": JSON syntax error at line " +
                std::to_string(line) + ", column " +
                std::to_string(end - lineStart + 1) + ": " + detail);
  } catch (const json::exception &e) {
    throw Error(fileName + ": invalid JSON: " + e.what());
  }
}

const char *jsonTypeName(const nlohmann::json &v) { return v.type_name(); }

} // namespace llmc::weights::detail
