// StreamDecoder holds back partial characters and never emits invalid UTF-8.
#include "test_util.h"

#include "llmc/text/stream_decoder.h"

#include <gtest/gtest.h>

namespace llmc::tok::test {
namespace {

using text::StreamDecoder;

std::vector<std::string> pushAll(StreamDecoder &stream,
                                 const std::vector<int32_t> &ids) {
  std::vector<std::string> pieces;
  for (int32_t id : ids)
    pieces.push_back(stream.push(id));
  return pieces;
}

TEST(StreamDecoderTest, EmojiSplitAcrossByteFallbackTokens) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/spm-2k");
  auto ids = tokenizer->encode("a😀");
  // "▁a" then the four bytes of U+1F600 as <0xXX> tokens.
  ASSERT_EQ(ids.size(), 5u);
  EXPECT_EQ(tokenizer->tokenText(ids[1]), "<0xF0>");
  StreamDecoder stream(*tokenizer);
  auto pieces = pushAll(stream, ids);
  EXPECT_EQ(pieces, (std::vector<std::string>{"a", "", "", "", "😀"}));
  EXPECT_EQ(stream.flush(), "");
}

TEST(StreamDecoderTest, CjkSplitAcrossByteLevelTokens) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/gpt2-2k");
  std::string text = "小猫跑了一天";
  auto ids = tokenizer->encode(text);
  EXPECT_GT(ids.size(), 6u); // some characters take more than one token
  StreamDecoder stream(*tokenizer);
  std::string out;
  for (int32_t id : ids) {
    std::string piece = stream.push(id);
    EXPECT_TRUE(isValidUtf8(piece));
    out += piece;
  }
  EXPECT_EQ(out, text);
  EXPECT_EQ(stream.flush(), "");
}

TEST(StreamDecoderTest, BrokenSequencesBecomeReplacementCharacters) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/spm-2k");
  int32_t f0 = *tokenizer->tokenId("<0xF0>");
  int32_t x9f = *tokenizer->tokenId("<0x9F>");
  int32_t a = *tokenizer->tokenId("a");
  StreamDecoder stream(*tokenizer);
  EXPECT_EQ(stream.push(f0), "");
  EXPECT_EQ(stream.push(x9f), "");
  // "a" cannot continue the sequence: the held bytes are one bad subpart.
  EXPECT_EQ(stream.push(a), "\xEF\xBF\xBD"
                            "a");
  EXPECT_EQ(stream.push(f0), "");
  EXPECT_EQ(stream.flush(), "\xEF\xBF\xBD");
  // A byte that can never start a character is replaced at once.
  EXPECT_EQ(stream.push(*tokenizer->tokenId("<0xFF>")), "\xEF\xBF\xBD");
  EXPECT_EQ(tokenizer->decode({f0}), "\xEF\xBF\xBD");
}

TEST(StreamDecoderTest, FirstTokenDropsTheDummyPrefixSpaceOnly) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/spm-2k");
  auto ids = tokenizer->encode("a b");
  StreamDecoder stream(*tokenizer);
  std::string out;
  for (int32_t id : ids)
    out += stream.push(id);
  EXPECT_EQ(out + stream.flush(), "a b");
  // After flush a new text starts.
  EXPECT_EQ(stream.push(ids[0]), "a");
}

TEST(StreamDecoderTest, SkipSpecial) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/gpt2");
  StreamDecoder stream(*tokenizer, /*skipSpecial=*/true);
  EXPECT_EQ(stream.push(15496), "Hello");
  EXPECT_EQ(stream.push(50256), "");
  StreamDecoder keep(*tokenizer);
  EXPECT_EQ(keep.push(50256), "<|endoftext|>");
}

TEST(StreamDecoderTest, InvalidUtf8InputRoundTripsThroughByteLevel) {
  auto tokenizer = loadTokenizer(tokenizersDir() + "/gpt2-2k");
  std::string text = "ok \xFF\xC3 end \xE2\x82";
  auto ids = tokenizer->encode(text);
  EXPECT_EQ(tokenizer->decodeBytes(ids), text);
  std::string decoded = tokenizer->decode(ids);
  EXPECT_TRUE(isValidUtf8(decoded));
  StreamDecoder stream(*tokenizer);
  std::string out;
  for (int32_t id : ids) {
    std::string piece = stream.push(id);
    EXPECT_TRUE(isValidUtf8(piece));
    out += piece;
  }
  EXPECT_EQ(out + stream.flush(), decoded);
}

} // namespace
} // namespace llmc::tok::test
