// BOS/EOS from tokenizer_config.json, addSpecial, and special tokens written
// in the text.
#include "test_util.h"

#include <gtest/gtest.h>

namespace llmc::tok::test {
namespace {

TEST(SpecialTokensTest, SentencePieceAddsBosWhenAsked) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/spm-2k");
  EXPECT_EQ(tokenizer->bos, 1);
  EXPECT_EQ(tokenizer->eos, 2);
  EXPECT_TRUE(tokenizer->addBos);
  EXPECT_FALSE(tokenizer->addEos);
  EXPECT_EQ(tokenizer->vocabSize(), 2000);
  std::vector<int32_t> plain = tokenizer->encode("Hello, world!");
  std::vector<int32_t> withBos = tokenizer->encode("Hello, world!", true);
  plain.insert(plain.begin(), 1);
  EXPECT_EQ(withBos, plain);
  EXPECT_EQ(tokenizer->encode("", true), std::vector<int32_t>{1});
  EXPECT_TRUE(tokenizer->isSpecial(1));
  EXPECT_EQ(tokenizer->decode(withBos, true), "Hello, world!");
  EXPECT_EQ(tokenizer->decode(withBos, false), "<s> Hello, world!");
  EXPECT_EQ(tokenizer->tokenId("</s>"), 2);
  EXPECT_EQ(tokenizer->tokenId("<0x21>"), 36);
}

TEST(SpecialTokensTest, SentencePieceMatchesSpecialTokensInText) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/spm-2k");
  auto ids = tokenizer->encode("a</s>");
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[1], 2);
}

TEST(SpecialTokensTest, Gpt2MatchesEndOfTextAsOneToken) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/gpt2");
  EXPECT_EQ(tokenizer->vocabSize(), 50257);
  EXPECT_EQ(tokenizer->bos, 50256);
  EXPECT_EQ(tokenizer->eos, 50256);
  EXPECT_FALSE(tokenizer->addBos);
  EXPECT_EQ(tokenizer->tokenId("<|endoftext|>"), 50256);
  EXPECT_EQ(tokenizer->tokenId("no such token"), std::nullopt);
  std::vector<int32_t> expected = {15496, 50256, 6894};
  EXPECT_EQ(tokenizer->encode("Hello<|endoftext|>world"), expected);
  EXPECT_EQ(tokenizer->encode("Hello<|endoftext|>world", true), expected);
  EXPECT_EQ(tokenizer->decode(expected), "Hello<|endoftext|>world");
  EXPECT_EQ(tokenizer->decode(expected, true), "Helloworld");
  EXPECT_TRUE(tokenizer->isSpecial(50256));
  EXPECT_FALSE(tokenizer->isSpecial(15496));
  EXPECT_EQ(tokenizer->encode("<|endoftext|><|endoftext|>"),
            (std::vector<int32_t>{50256, 50256}));
  // An incomplete special token is ordinary text.
  EXPECT_GT(tokenizer->encode("<|endoftext|").size(), 1u);
}

TEST(SpecialTokensTest, Gpt2SmallVocabulary) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/gpt2-2k/tokenizer.json");
  EXPECT_EQ(tokenizer->vocabSize(), 2048);
  EXPECT_EQ(tokenizer->eos, 2047);
  EXPECT_EQ(tokenizer->encode("<|endoftext|>"), std::vector<int32_t>{2047});
}

TEST(SpecialTokensTest, UnknownIdsDecodeToNothing) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/gpt2-2k");
  EXPECT_EQ(tokenizer->decode({64, -1, 5000, 64}), "aa");
  EXPECT_EQ(tokenizer->tokenText(5000), "");
  EXPECT_EQ(tokenizer->tokenBytes(-3), "");
}

} // namespace
} // namespace llmc::tok::test

namespace llmc::tok::test {
namespace {

// BPE is O(n log n) per word: a huge single word and a long text finish fast.
TEST(PerformanceTest, LongInputs) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/gpt2");
  std::string word(200000, 'a');
  auto ids = tokenizer->encode(word);
  EXPECT_EQ(tokenizer->decode(ids), word);
  std::string text;
  for (const FixtureCase &c : loadFixtures("gpt2"))
    text += c.text + "\n";
  std::string big;
  while (big.size() < (1 << 20))
    big += text;
  ids = tokenizer->encode(big);
  EXPECT_EQ(tokenizer->decode(ids), big);
}

} // namespace
} // namespace llmc::tok::test
