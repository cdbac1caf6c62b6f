// tokenizerFromGGUF: the "llama" kind must agree with the sentencepiece
// library, and the "gpt2" kind with the tokenizer.json it was converted from.
#include "test_util.h"

#include "llmc/support/error.h"
#include "llmc/tokenizer/gguf_vocab.h"

#include <gtest/gtest.h>
#include <sentencepiece_processor.h>

namespace llmc::tok::test {
namespace {

// What llama.cpp's convert script writes for a SentencePiece model.
GGUFVocab
vocabFromSentencePiece(const sentencepiece::SentencePieceProcessor &sp) {
  GGUFVocab v;
  v.model = "llama";
  for (int id = 0; id < sp.GetPieceSize(); ++id) {
    v.tokens.push_back(sp.IdToPiece(id));
    v.scores.push_back(sp.GetScore(id));
    v.tokenTypes.push_back(sp.IsControl(id)   ? 3
                           : sp.IsUnknown(id) ? 2
                           : sp.IsByte(id)    ? 6
                           : sp.IsUnused(id)  ? 5
                                              : 1);
  }
  v.bos = sp.bos_id();
  v.eos = sp.eos_id();
  v.unk = sp.unk_id();
  v.addBos = true;
  return v;
}

class GGUFLlamaTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(sp.Load(tokenizersDir() + "/spm-2k/tokenizer.model").ok());
    tokenizer = tokenizerFromGGUF(vocabFromSentencePiece(sp));
  }
  sentencepiece::SentencePieceProcessor sp;
  std::unique_ptr<Tokenizer> tokenizer;
};

TEST_F(GGUFLlamaTest, MatchesFixtures) {
  for (const FixtureCase &c : loadFixtures("spm-2k")) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(tokenizer->encode(c.text), c.ids);
    EXPECT_EQ(tokenizer->decode(c.ids), c.decoded);
  }
}

TEST_F(GGUFLlamaTest, MatchesSentencePieceOnMoreText) {
  std::vector<std::string> texts = {
      "Once upon a time, there was a little girl named Lily.",
      "   x  y   ",
      "\t\ttabbed\n",
      "ümlaut über straße",
      "ǅ ǈ ǋ",
      "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and 🤖🤖",
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "1234 5678 9"};
  for (const FixtureCase &c : loadFixtures("gpt2"))
    texts.push_back(c.text);
  for (const std::string &text : texts) {
    std::vector<int> expected;
    ASSERT_TRUE(sp.Encode(text, &expected).ok());
    EXPECT_EQ(tokenizer->encode(text),
              std::vector<int32_t>(expected.begin(), expected.end()))
        << text;
  }
}

TEST_F(GGUFLlamaTest, SpecialTokens) {
  EXPECT_EQ(tokenizer->bos, 1);
  EXPECT_EQ(tokenizer->eos, 2);
  EXPECT_TRUE(tokenizer->addBos);
  auto ids = tokenizer->encode("a", true);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(tokenizer->decode({1, 262}, true), "a");
}

TEST(GGUFGpt2Test, MatchesFixturesOfTheSourceTokenizerJson) {
  // "gpt-2" is what llama.cpp's converter writes for GPT-2's split; "gpt2"
  // what llmc's own writer leaves.
  for (auto [name, pre] : {std::pair<std::string, std::string>{"gpt2", "gpt2"},
                           {"gpt2", "gpt-2"},
                           {"gpt2-2k", "gpt2"}}) {
    auto j = nlohmann::json::parse(
        readFile(tokenizersDir() + "/" + name + "/tokenizer.json"));
    GGUFVocab v;
    v.model = "gpt2";
    v.pre = pre;
    auto &vocab = j["model"]["vocab"];
    v.tokens.resize(vocab.size() + 1);
    v.tokenTypes.assign(vocab.size() + 1, 1);
    for (auto &[text, id] : vocab.items())
      v.tokens[id.get<int>()] = text;
    for (auto &added : j["added_tokens"]) {
      int id = added["id"];
      v.tokens.resize(std::max<size_t>(v.tokens.size(), id + 1));
      v.tokenTypes.resize(v.tokens.size(), 1);
      v.tokens[id] = added["content"];
      v.tokenTypes[id] = 3;
      v.eos = id;
    }
    v.tokens.resize(v.tokenTypes.size());
    for (auto &m : j["model"]["merges"])
      v.merges.push_back(m);
    auto tokenizer = tokenizerFromGGUF(v);
    for (const FixtureCase &c : loadFixtures(name)) {
      SCOPED_TRACE(name + " (pre " + pre + "): " + c.text);
      EXPECT_EQ(tokenizer->encode(c.text), c.ids);
      EXPECT_EQ(tokenizer->decode(c.ids), c.decoded);
    }
    EXPECT_EQ(tokenizer->encode("a<|endoftext|>").back(), *v.eos);
  }
}

TEST(GGUFErrorsTest, RejectsBadMetadata) {
  GGUFVocab v;
  v.model = "bert";
  v.tokens = {"a"};
  EXPECT_THROW(tokenizerFromGGUF(v), Error);
  v.model = "llama"; // no scores
  EXPECT_THROW(tokenizerFromGGUF(v), Error);
  v.model = "gpt2";
  v.pre = "no-such-pre";
  EXPECT_THROW(tokenizerFromGGUF(v), Error);
  v.pre = "qwen35"; // llama.cpp knows it; its split is not one of ours
  try {
    tokenizerFromGGUF(v);
    ADD_FAILURE() << "qwen35 accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("'qwen35' (tokenizer.ggml.pre)"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("gpt-2"), std::string::npos);
  }
  v.pre = "gpt2";
  v.bos = 7;
  EXPECT_THROW(tokenizerFromGGUF(v), Error);
  v.bos.reset();
  v.tokenTypes = {1, 1};
  EXPECT_THROW(tokenizerFromGGUF(v), Error);
  v.tokenTypes.clear();
  v.tokens.clear();
  EXPECT_THROW(tokenizerFromGGUF(v), Error);
}

} // namespace
} // namespace llmc::tok::test
