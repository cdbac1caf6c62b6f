// The tokenizers of Llama 3, Qwen3, gpt-oss, Gemma 3 and Gemma 2, trimmed to
// what a stress corpus needs (test/data/tokenizers/make_fixtures.mjs), encode
// and decode every text of it as Hugging Face's tokenizers.js does: from
// tokenizer.json, and compiled as plans store them.
#include "test_util.h"

#include "llmc/text/stream_decoder.h"

#include <gtest/gtest.h>

#include <cstring>

namespace llmc::tok::test {
namespace {

using nlohmann::json;

std::string dataDir() { return std::string(LLMC_DATA_DIR) + "/tokenizers"; }

struct Case {
  std::string name, text, decoded, decodedSkipSpecial;
  bool addSpecial = false;
  std::vector<int32_t> ids;
};

std::vector<Case> loadCases(const std::string &family) {
  json corpus = json::parse(readFile(dataDir() + "/corpus.json"));
  json fixtures =
      json::parse(readFile(dataDir() + "/" + family + "/fixtures.json"));
  std::vector<Case> cases;
  for (const json &c : fixtures.at("cases")) {
    const json &text = corpus.at("texts").at(c.at("text").get<size_t>());
    Case k;
    k.name = text.at("name");
    k.text = text.at("text");
    k.addSpecial = c.at("add_special_tokens");
    k.ids = c.at("ids").get<std::vector<int32_t>>();
    k.decoded = c.value("decoded", k.text);
    k.decodedSkipSpecial = c.value("decoded_skip_special", k.decoded);
    cases.push_back(std::move(k));
  }
  return cases;
}

class PublishedTokenizer : public ::testing::TestWithParam<std::string> {
protected:
  std::string dir() const { return dataDir() + "/" + GetParam(); }
};

void expectEveryCase(const Tokenizer &tokenizer, const std::string &family) {
  auto cases = loadCases(family);
  ASSERT_EQ(cases.size(), 44u); // 22 texts, with and without special tokens
  for (const Case &c : cases) {
    SCOPED_TRACE(family + " " + c.name +
                 (c.addSpecial ? " with special tokens" : ""));
    EXPECT_EQ(tokenizer.encode(c.text, c.addSpecial), c.ids);
    EXPECT_EQ(tokenizer.decode(c.ids), c.decoded);
    EXPECT_EQ(tokenizer.decode(c.ids, true), c.decodedSkipSpecial);
  }
}

TEST_P(PublishedTokenizer, TokenizerJsonMatchesHuggingFace) {
  expectEveryCase(*loadTokenizer(dir()), GetParam());
}

TEST_P(PublishedTokenizer, CompiledAsPlansStoreItMatchesHuggingFace) {
  TokenizerFiles files = findTokenizerFiles(dir());
  const std::string compiled = compileTokenizerJson(files.fileBytes, dir());
  const std::string config =
      compactTokenizerConfig(files.configJson, compiled, dir());
  // Viewed in place (aligned, kept alive by its owner), as from a plan.
  auto owned = std::make_shared<std::string>(compiled);
  ASSERT_EQ(reinterpret_cast<uintptr_t>(owned->data()) % 4, 0u);
  expectEveryCase(*loadTokenizerFromBytes(TokenizerKind::HFTables, *owned,
                                          config, "plan", owned),
                  GetParam());
  // Misaligned and without an owner: copied.
  std::string shifted = " " + compiled;
  auto copied = loadTokenizerFromBytes(
      TokenizerKind::HFTables, std::string_view(shifted).substr(1), config);
  shifted.assign(shifted.size(), '\0'); // the tokenizer must not look here
  expectEveryCase(*copied, GetParam());
}

TEST_P(PublishedTokenizer, StreamDecoderReassemblesTheDecodedText) {
  auto tokenizer = loadTokenizer(dir());
  for (const Case &c : loadCases(GetParam())) {
    SCOPED_TRACE(c.name);
    text::StreamDecoder stream(*tokenizer);
    std::string out;
    for (int32_t id : c.ids) {
      std::string piece = stream.push(id);
      EXPECT_TRUE(isValidUtf8(piece)) << "after id " << id;
      out += piece;
    }
    EXPECT_EQ(out + stream.flush(), c.decoded);
  }
}

TEST_P(PublishedTokenizer, CompilingIsBlindToHowMergesAreWritten) {
  TokenizerFiles files = findTokenizerFiles(dir());
  json j = json::parse(files.fileBytes);
  json &merges = j["model"]["merges"];
  ASSERT_FALSE(merges.empty());
  // Rewrite every merge in the other form ("a b" <-> ["a", "b"]).
  for (json &m : merges) {
    if (m.is_string()) {
      std::string s = m;
      m = json::array({s.substr(0, s.find(' ')), s.substr(s.find(' ') + 1)});
    } else {
      m = m[0].get<std::string>() + " " + m[1].get<std::string>();
    }
  }
  j["version"] = "9.9";
  const std::string a = compileTokenizerJson(files.fileBytes),
                    b = compileTokenizerJson(j.dump());
  EXPECT_TRUE(sameTokenizer(TokenizerKind::HFTables, a, b));
  // A changed merge order is another tokenizer.
  std::swap(merges[0], merges[merges.size() - 1]);
  EXPECT_FALSE(sameTokenizer(TokenizerKind::HFTables, a,
                             compileTokenizerJson(j.dump())));
}

INSTANTIATE_TEST_SUITE_P(Families, PublishedTokenizer,
                         ::testing::Values("llama3", "qwen3", "gpt-oss",
                                           "gemma3", "gemma2"),
                         FolderParamName());

} // namespace
} // namespace llmc::tok::test
