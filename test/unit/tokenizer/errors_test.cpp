// Bad inputs throw llmc::Error naming the file and the problem.
#include "test_util.h"

#include "llmc/support/error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace llmc::tok::test {
namespace {

namespace fs = std::filesystem;

class ErrorsTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("llmc_tok_errors_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string write(const std::string &name, const std::string &bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return (dir / name).string();
  }

  // The message of the llmc::Error `f` throws ("" if none).
  template <typename F> static std::string errorOf(F f) {
    try {
      f();
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  }

  fs::path dir;
};

using ::testing::HasSubstr;

TEST_F(ErrorsTest, MissingFileOrFolder) {
  std::string path = (dir / "nope" / "tokenizer.json").string();
  EXPECT_THAT(errorOf([&] { loadTokenizer(path); }), HasSubstr(path));
  EXPECT_THAT(errorOf([&] { loadTokenizer(dir.string()); }),
              HasSubstr("no tokenizer.json or tokenizer.model"));
}

TEST_F(ErrorsTest, JsonSyntaxError) {
  std::string path = write("tokenizer.json", "{\"model\": {\"type\": \"BPE\",");
  std::string message = errorOf([&] { loadTokenizer(path); });
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr("invalid JSON"));
}

TEST_F(ErrorsTest, UnknownModelType) {
  std::string path = write("tokenizer.json",
                           R"({"model": {"type": "WordPiece", "vocab": {}}})");
  EXPECT_EQ(errorOf([&] { loadTokenizer(path); }),
            "unsupported tokenizer model 'WordPiece' in " + path +
                "; supported: BPE");
}

TEST_F(ErrorsTest, CorruptSentencePieceModel) {
  std::string path =
      write("tokenizer.model", std::string("\x0a\xff\xff\x01garbage", 12));
  std::string message = errorOf([&] { loadTokenizer(path); });
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr("not a valid SentencePiece model"));
  // A truncated real model.
  std::string real = readFile(tokenizersDir() + "/spm-2k/tokenizer.model");
  path = write("tokenizer.model", real.substr(0, real.size() / 2));
  EXPECT_THAT(errorOf([&] { loadTokenizer(path); }), HasSubstr(path));
}

TEST_F(ErrorsTest, UnsupportedComponentsAreNamed) {
  std::string base =
      R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []})";
  auto with = [&](const std::string &extra) {
    return write("tokenizer.json", base + ", " + extra + "}");
  };
  EXPECT_THAT(errorOf([&] {
                loadTokenizer(
                    with(R"("normalizer": {"type": "BertNormalizer"})"));
              }),
              HasSubstr("unsupported normalizer 'BertNormalizer'"));
  EXPECT_THAT(errorOf([&] {
                loadTokenizer(
                    with(R"("pre_tokenizer": {"type": "UnicodeScripts"})"));
              }),
              HasSubstr("unsupported pre_tokenizer 'UnicodeScripts'"));
  EXPECT_THAT(errorOf([&] {
                loadTokenizer(with(R"("decoder": {"type": "WordPiece"})"));
              }),
              HasSubstr("unsupported decoder 'WordPiece'"));
  EXPECT_THAT(errorOf([&] {
                loadTokenizer(with(R"("post_processor": {"type": "Nope"})"));
              }),
              HasSubstr("unsupported post_processor 'Nope'"));
  EXPECT_THAT(
      errorOf([&] {
        loadTokenizer(with(
            R"("pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(("}, "behavior": "Isolated"})"));
      }),
      HasSubstr("cannot compile regex"));
}

TEST_F(ErrorsTest, MalformedModel) {
  auto load = [&](const std::string &json) {
    return errorOf([&] { loadTokenizer(write("tokenizer.json", json)); });
  };
  EXPECT_THAT(
      load(
          R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})"),
      HasSubstr("missing from the vocab"));
  EXPECT_THAT(
      load(
          R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["abc"]}})"),
      HasSubstr("merge 0"));
  EXPECT_THAT(
      load(
          R"({"model": {"type": "BPE", "vocab": {"a": 2000000000}, "merges": []}})"),
      HasSubstr("bad id"));
  EXPECT_THAT(load(R"({"model": {"type": "BPE", "vocab": [], "merges": []}})"),
              HasSubstr("vocab"));
  EXPECT_THAT(
      load(
          R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "added_tokens": [{"id": "x"}]})"),
      HasSubstr("tokenizer.json"));
  EXPECT_THAT(load("[]"), HasSubstr("expected a JSON object"));
  EXPECT_THAT(load(std::string(10000, '[') + std::string(10000, ']')),
              HasSubstr("nested deeper"));
}

TEST_F(ErrorsTest, BadTokenizerConfig) {
  std::string json = readFile(tokenizersDir() + "/gpt2-2k/tokenizer.json");
  write("tokenizer.json", json);
  std::string config = write("tokenizer_config.json", "{oops");
  EXPECT_THAT(errorOf([&] { loadTokenizer(dir.string()); }), HasSubstr(config));
  EXPECT_THAT(errorOf([&] {
                loadTokenizerFromBytes(TokenizerKind::HFJson, json, "{oops",
                                       "plan.llmc");
              }),
              HasSubstr("plan.llmc (tokenizer_config.json)"));
  EXPECT_THROW(loadTokenizerFromBytes(TokenizerKind::GGUF, json, "{}"), Error);
}

} // namespace
} // namespace llmc::tok::test
