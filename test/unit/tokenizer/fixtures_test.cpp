// Every case of test/data/models/tokenizers/*/fixtures.json, through
// loadTokenizer, loadTokenizerFromBytes and StreamDecoder.
#include "test_util.h"

#include "llmc/text/stream_decoder.h"

#include <gtest/gtest.h>

namespace llmc::tok::test {
namespace {

using text::StreamDecoder;

class FixturesTest : public ::testing::TestWithParam<std::string> {};

void checkCases(const Tokenizer &tokenizer, const std::string &name) {
  auto cases = loadFixtures(name);
  ASSERT_EQ(cases.size(), 34u);
  for (const FixtureCase &c : cases) {
    SCOPED_TRACE(name + ": " + c.text);
    EXPECT_EQ(tokenizer.encode(c.text, false), c.ids);
    EXPECT_EQ(tokenizer.decode(c.ids), c.decoded);
    std::vector<std::string> texts;
    for (int32_t id : c.ids)
      texts.push_back(tokenizer.tokenText(id));
    EXPECT_EQ(texts, c.tokens);
  }
}

TEST_P(FixturesTest, LoadTokenizerMatchesEveryCase) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/" + GetParam());
  checkCases(*tokenizer, GetParam());
}

TEST_P(FixturesTest, RebuiltFromStoredBytesMatches) {
  TokenizerFiles files = findTokenizerFiles(tokenizersDir() + "/" + GetParam());
  auto tokenizer =
      loadTokenizerFromBytes(files.kind, files.fileBytes, files.configJson);
  checkCases(*tokenizer, GetParam());
}

TEST_P(FixturesTest, StreamDecoderReassemblesDecodedText) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/" + GetParam());
  StreamDecoder stream(*tokenizer);
  for (const FixtureCase &c : loadFixtures(GetParam())) {
    SCOPED_TRACE(c.text);
    std::string text;
    for (int32_t id : c.ids) {
      std::string piece = stream.push(id);
      EXPECT_TRUE(isValidUtf8(piece)) << "after id " << id;
      text += piece;
    }
    text += stream.flush();
    EXPECT_EQ(text, c.decoded);
  }
}

TEST_P(FixturesTest, TokenBytesConcatenateToTheDecodedBytes) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/" + GetParam());
  for (const FixtureCase &c : loadFixtures(GetParam())) {
    if (c.ids.empty())
      continue;
    std::string bytes = tokenizer->decodeBytes({c.ids[0]});
    for (size_t i = 1; i < c.ids.size(); ++i)
      bytes += tokenizer->tokenBytes(c.ids[i]);
    EXPECT_EQ(bytes, c.decoded) << c.text;
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, FixturesTest,
                         ::testing::Values("gpt2", "gpt2-2k", "spm-2k"),
                         FolderParamName());

// The tokenizer files shipped with the test checkpoints load and round-trip.
class CheckpointTokenizerTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CheckpointTokenizerTest, LoadsAndRoundTrips) {
  auto tokenizer =
      loadTokenizer(std::string(LLMC_DATA_DIR) + "/models/" + GetParam());
  std::string text = "Hello, world! The year 2024.\n  Café";
  auto ids = tokenizer->encode(text);
  EXPECT_FALSE(ids.empty());
  EXPECT_EQ(tokenizer->decode(ids), text);
  EXPECT_TRUE(tokenizer->eos.has_value());
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, CheckpointTokenizerTest,
                         ::testing::Values("gpt2", "llama-bf16", "llama-gqa",
                                           "llama-mha", "llama-mqa",
                                           "llama-sharded", "mistral-swa",
                                           "qwen2-bias-tied"),
                         FolderParamName());

} // namespace
} // namespace llmc::tok::test
