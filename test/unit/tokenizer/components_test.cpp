// tokenizer.json components beyond the GPT-2 fixtures: SentencePiece-style
// BPE (normalizers, Metaspace, byte fallback, unk fusing, decoders), Llama 3
// style Split + ByteLevel with a template post-processor, merges as pairs,
// added-token options, and normalizers.
#include "test_util.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace llmc::tok::test {
namespace {

using nlohmann::json;

std::unique_ptr<Tokenizer> fromJson(const json &j, const json &config = {}) {
  return loadTokenizerFromBytes(TokenizerKind::HFJson, j.dump(),
                                config.is_null() ? "{}" : config.dump(),
                                "test.json");
}

json gpt2Small() {
  return json::parse(readFile(tokenizersDir() + "/gpt2-2k/tokenizer.json"));
}

// A Llama-2-like tokenizer.json over a tiny vocabulary.
json spmStyle(bool byteFallback) {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    vocab[name] = 3 + b;
  }
  int next = 259;
  for (const char *piece :
       {"▁", "h", "e", "l", "o", "w", "r", "d", "▁h", "ll", "▁he", "▁hell",
        "▁hello", "▁w", "or", "▁wor", "▁worl", "▁world"})
    vocab[piece] = next++;
  json merges =
      json::array({json::array({"▁", "h"}), "l l", "▁h e", "▁he ll", "▁hell o",
                   "▁ w", "o r", "▁w or", "▁wor l", "▁worl d"});
  auto added = [](int id, const char *content) {
    return json{{"id", id},        {"content", content}, {"single_word", false},
                {"lstrip", false}, {"rstrip", false},    {"normalized", false},
                {"special", true}};
  };
  return {
      {"added_tokens", {added(0, "<unk>"), added(1, "<s>"), added(2, "</s>")}},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", "▁"}},
          {{"type", "Replace"},
           {"pattern", {{"String", " "}}},
           {"content", "▁"}}}}}},
      {"pre_tokenizer", nullptr},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single",
         {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
          {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"special_tokens",
         {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"},
           {"pattern", {{"String", "▁"}}},
           {"content", " "}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", "<unk>"},
        {"fuse_unk", true},
        {"byte_fallback", byteFallback},
        {"vocab", vocab},
        {"merges", merges}}}};
}

const json kLlamaConfig = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};

TEST(SentencePieceStyleJsonTest, EncodesWithPrependReplaceAndByteFallback) {
  auto t = fromJson(spmStyle(true), kLlamaConfig);
  EXPECT_EQ(t->encode("hello world"), (std::vector<int32_t>{271, 276}));
  EXPECT_EQ(t->decode({271, 276}), "hello world");
  // 'é' is not in the vocabulary: its two bytes.
  EXPECT_EQ(t->encode("hé"), (std::vector<int32_t>{267, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(t->decode({267, 3 + 0xC3, 3 + 0xA9}), "hé");
  EXPECT_EQ(t->tokenBytes(271), " hello");
  EXPECT_EQ(t->tokenBytes(3 + 0xC3), "\xC3");
  // Each text piece around an added token gets the prefix (legacy Llama).
  EXPECT_EQ(t->encode("<s>hello</s>"), (std::vector<int32_t>{1, 271, 2}));
  EXPECT_EQ(t->decode({1, 271, 2}), "<s> hello</s>");
  EXPECT_EQ(t->decode({1, 271, 2}, true), "hello");
}

TEST(SentencePieceStyleJsonTest, TemplateAndConfigDecideSpecialTokens) {
  auto t = fromJson(spmStyle(true), kLlamaConfig);
  EXPECT_EQ(t->bos, 1);
  EXPECT_EQ(t->eos, 2);
  EXPECT_TRUE(t->addBos);
  EXPECT_EQ(t->encode("hello", true), (std::vector<int32_t>{1, 271}));
  json config = kLlamaConfig;
  config["add_bos_token"] = false;
  config["add_eos_token"] = true;
  t = fromJson(spmStyle(true), config);
  EXPECT_FALSE(t->addBos);
  EXPECT_EQ(t->encode("hello", true), (std::vector<int32_t>{271, 2}));
}

TEST(SentencePieceStyleJsonTest, UnknownCharactersFuseIntoOneUnk) {
  auto t = fromJson(spmStyle(false), kLlamaConfig);
  EXPECT_EQ(t->encode("hé€"), (std::vector<int32_t>{267, 0}));
  EXPECT_EQ(t->decode({267, 0}), "h<unk>");
  EXPECT_EQ(t->decode({267, 0}, true), "h");
}

TEST(SentencePieceStyleJsonTest, MetaspacePreTokenizerAndDecoder) {
  for (bool split : {false, true}) {
    json j = spmStyle(true);
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = {{"type", "Metaspace"},
                          {"replacement", "▁"},
                          {"prepend_scheme", "first"},
                          {"split", split}};
    j["decoder"] = {{"type", "Metaspace"},
                    {"replacement", "▁"},
                    {"prepend_scheme", "first"},
                    {"split", split}};
    auto t = fromJson(j, kLlamaConfig);
    EXPECT_EQ(t->encode("hello world"), (std::vector<int32_t>{271, 276}));
    // "first": no prefix after an added token.
    EXPECT_EQ(t->encode("</s>hello"),
              (std::vector<int32_t>{2, 260, 261, 268, 263}));
    EXPECT_EQ(t->decode({271, 276}), "hello world");
    EXPECT_EQ(t->tokenBytes(276), " world");
  }
}

TEST(ByteLevelJsonTest, MergesAsPairsGiveTheSameIds) {
  json j = gpt2Small();
  for (json &merge : j["model"]["merges"]) {
    std::string s = merge;
    size_t space = s.find(' ');
    merge = json::array({s.substr(0, space), s.substr(space + 1)});
  }
  auto t = fromJson(j);
  for (const FixtureCase &c : loadFixtures("gpt2-2k"))
    EXPECT_EQ(t->encode(c.text), c.ids) << c.text;
}

TEST(ByteLevelJsonTest, Llama3StyleSplitIgnoreMergesAndTemplate) {
  auto plain = loadTokenizer(tokenizersDir() + "/gpt2-2k");
  json j = gpt2Small();
  j["model"]["ignore_merges"] = true;
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"},
         {"pattern",
          {{"Regex",
            R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}}},
         {"behavior", "Isolated"},
         {"invert", false}},
        {{"type", "ByteLevel"},
         {"add_prefix_space", false},
         {"trim_offsets", true},
         {"use_regex", false}}}}};
  j["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single",
       {{{"SpecialToken", {{"id", "<|endoftext|>"}, {"type_id", 0}}}},
        {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
      {"special_tokens",
       {{"<|endoftext|>",
         {{"id", "<|endoftext|>"},
          {"ids", {2047}},
          {"tokens", {"<|endoftext|>"}}}}}}};
  auto t = fromJson(j, {{"bos_token", "<|endoftext|>"}});
  auto concat = [&](std::initializer_list<const char *> parts) {
    std::vector<int32_t> ids;
    for (const char *p : parts)
      for (int32_t id : plain->encode(p))
        ids.push_back(id);
    return ids;
  };
  // Digits go in groups of three; contractions are case-insensitive.
  EXPECT_EQ(t->encode("1234567890"), concat({"123", "456", "789", "0"}));
  EXPECT_EQ(t->encode("DON'T"), concat({"DON", "'T"}));
  EXPECT_EQ(t->encode("Hello, world!"), plain->encode("Hello, world!"));
  EXPECT_EQ(t->decode(t->encode("tabs\tand 小猫")), "tabs\tand 小猫");
  EXPECT_TRUE(t->addBos);
  auto withBos = t->encode("hi", true);
  ASSERT_FALSE(withBos.empty());
  EXPECT_EQ(withBos[0], 2047);
  // ignore_merges: a word in the vocabulary is taken whole.
  EXPECT_EQ(t->encode(" the"), plain->encode(" the"));
}

TEST(ByteLevelJsonTest, AddPrefixSpace) {
  auto plain = loadTokenizer(tokenizersDir() + "/gpt2-2k");
  json j = gpt2Small();
  j["pre_tokenizer"]["add_prefix_space"] = true;
  auto t = fromJson(j);
  EXPECT_EQ(t->encode("world"), plain->encode(" world"));
  EXPECT_EQ(t->encode(" world"), plain->encode(" world"));
}

TEST(AddedTokensTest, LstripRstripSingleWord) {
  auto plain = loadTokenizer(tokenizersDir() + "/gpt2-2k");
  json j = gpt2Small();
  j["added_tokens"].push_back({{"id", 2048},
                               {"content", "<mask>"},
                               {"lstrip", true},
                               {"rstrip", false},
                               {"single_word", false},
                               {"normalized", false},
                               {"special", true}});
  j["added_tokens"].push_back({{"id", 2049},
                               {"content", "foo"},
                               {"lstrip", false},
                               {"rstrip", false},
                               {"single_word", true},
                               {"normalized", true},
                               {"special", false}});
  j["added_tokens"].push_back({{"id", 2050},
                               {"content", "[R]"},
                               {"lstrip", false},
                               {"rstrip", true},
                               {"single_word", false},
                               {"normalized", false},
                               {"special", true}});
  // Longest match first: "<mask>x" would lose to a longer token.
  j["added_tokens"].push_back({{"id", 2051},
                               {"content", "<mask>!"},
                               {"lstrip", false},
                               {"rstrip", false},
                               {"single_word", false},
                               {"normalized", false},
                               {"special", true}});
  auto t = fromJson(j);
  EXPECT_EQ(t->vocabSize(), 2052);
  EXPECT_EQ(t->encode("a <mask>"), (std::vector<int32_t>{64, 2048}));
  auto ids = t->encode("foo food");
  EXPECT_EQ(ids[0], 2049);
  EXPECT_EQ(std::vector<int32_t>(ids.begin() + 1, ids.end()),
            plain->encode(" food"));
  auto expected = plain->encode("x");
  expected.insert(expected.begin(), 2050);
  EXPECT_EQ(t->encode("[R]   x"), expected);
  EXPECT_EQ(t->encode("<mask>!"), std::vector<int32_t>{2051});
  EXPECT_FALSE(t->isSpecial(2049));
  EXPECT_EQ(t->decode({2049, 2050}, true), "foo");
}

TEST(NormalizerTest, RegexReplaceAndUnicodeForms) {
  auto plain = loadTokenizer(tokenizersDir() + "/gpt2-2k");
  json j = gpt2Small();
  j["normalizer"] = {{"type", "Sequence"},
                     {"normalizers",
                      {{{"type", "Replace"},
                        {"pattern", {{"Regex", " {2,}"}}},
                        {"content", " "}},
                       {{"type", "NFC"}}}}};
  std::unique_ptr<Tokenizer> t;
  try {
    t = fromJson(j);
  } catch (const std::exception &e) {
    if (std::string(e.what()).find("unsupported normalizer 'NFC'") !=
        std::string::npos)
      GTEST_SKIP() << "built without ICU";
    throw;
  }
  EXPECT_EQ(t->encode("a    b"), plain->encode("a b"));
  EXPECT_EQ(t->encode("e\xCC\x81"), plain->encode("\xC3\xA9")); // é
}

} // namespace
} // namespace llmc::tok::test
