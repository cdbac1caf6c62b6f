// Renders every case of the real chat templates in test/data/chat-templates
// and compares byte for byte with what transformers produced.
#include "llmc/template/jinja.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace llmc::tmpl {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct Case {
  std::string templateName;
  std::string templatePath;
  ordered_json file; // the whole .cases.json (tokens)
  ordered_json data; // this case
};

std::string readBytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<Case> loadCases() {
  std::vector<Case> cases;
  fs::path dir = fs::path(LLMC_DATA_DIR) / "chat-templates";
  std::vector<fs::path> files;
  for (const auto &entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.size() > 11 && name.ends_with(".cases.json"))
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto &path : files) {
    // Integers beyond 64 bits keep their digits, as json.loads gave them.
    ordered_json file = parseContextJson(readBytes(path));
    std::string name = path.filename().string();
    name.resize(name.size() - 11);
    for (const auto &c : file["cases"])
      cases.push_back({name,
                       (dir / file["template"].get<std::string>()).string(),
                       file, c});
  }
  return cases;
}

// The variables apply_chat_template passes, per the fixtures' README.
ordered_json contextFor(const Case &c) {
  ordered_json ctx = ordered_json::object();
  ctx["messages"] = c.data["messages"];
  ctx["tools"] = c.data.contains("tools") ? c.data["tools"] : ordered_json();
  ctx["documents"] =
      c.data.contains("documents") ? c.data["documents"] : ordered_json();
  ctx["add_generation_prompt"] = c.data["add_generation_prompt"];
  for (const char *token : {"bos_token", "eos_token"})
    if (c.file.contains(token) && !c.file[token].is_null())
      ctx[token] = c.file[token];
  if (c.data.contains("extra_context"))
    for (auto it = c.data["extra_context"].begin();
         it != c.data["extra_context"].end(); ++it)
      ctx[it.key()] = it.value();
  return ctx;
}

std::string visible(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\n')
      out += "\\n";
    else if (ch == '\t')
      out += "\\t";
    else
      out += ch;
  }
  return out;
}

// Where two renderings first differ, with some context on each side.
std::string firstDifference(const std::string &want, const std::string &got) {
  std::size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i])
    ++i;
  std::size_t from = i > 60 ? i - 60 : 0;
  std::ostringstream s;
  s << "first difference at byte " << i << " (expected " << want.size()
    << " bytes, got " << got.size() << ")\n  expected: ..."
    << visible(want.substr(from, 120)) << "\n  got:      ..."
    << visible(got.substr(from, 120));
  return s.str();
}

class ChatTemplateCase : public ::testing::TestWithParam<Case> {};

TEST_P(ChatTemplateCase, RendersLikeTransformers) {
  const Case &c = GetParam();
  std::string source = readBytes(c.templatePath);
  Template tmpl(source);
  RenderOptions options;
  options.strftimeNow = c.file.value("strftime_now", options.strftimeNow);
  ordered_json ctx = contextFor(c);
  if (c.data.contains("expected")) {
    std::string want = c.data["expected"].get<std::string>();
    std::string got = tmpl.render(ctx, options);
    EXPECT_TRUE(got == want) << firstDifference(want, got);
    return;
  }
  std::string kind = c.data["error_kind"].get<std::string>();
  std::string message = c.data["expected_error"].get<std::string>();
  if (kind == "raise_exception") {
    try {
      tmpl.render(ctx, options);
      ADD_FAILURE() << "expected raise_exception(" << message << ")";
    } catch (const RaisedException &e) {
      EXPECT_EQ(e.what(), message);
    }
  } else {
    try {
      tmpl.render(ctx, options);
      ADD_FAILURE() << "expected a " << kind << ": " << message;
    } catch (const RaisedException &e) {
      ADD_FAILURE() << "expected a " << kind
                    << ", got raise_exception: " << e.what();
    } catch (const TemplateError &) {
    }
  }
}

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  std::string name = info.param.templateName + "__" +
                     info.param.data["name"].get<std::string>();
  for (char &ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(ChatTemplates, ChatTemplateCase,
                         ::testing::ValuesIn(loadCases()), caseName);

TEST(ChatTemplates, AllFixturesFound) {
  // Guards against silently testing nothing if the data moves.
  EXPECT_GE(loadCases().size(), 150u);
}

} // namespace
} // namespace llmc::tmpl
