//===- chat_session_test.cpp - Chat EOS set, truncate, cache reuse --------===//
//
// The EOS rule runs on a fake tokenizer (no test checkpoint has an
// end-of-turn token besides its config EOS). Truncation and cache reuse run
// test/data/models/gpt2 on the ref backend with 4-token blocks, so that
// truncation points fall inside blocks, and are checked against fresh
// prefills of the same tokens.
//
//===----------------------------------------------------------------------===//

#include "llmc/runtime/chat.h"
#include "llmc/runtime/plan_tokenizer.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include "../compiled_plan.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>

namespace llmc {
namespace {

const std::string kData = LLMC_DATA_DIR;
const std::string kBin = LLMC_BIN_DIR;

class FakeTokenizer : public tok::Tokenizer {
public:
  std::map<std::string, int32_t, std::less<>> vocab;
  std::vector<int32_t> encode(std::string_view, bool) const override {
    return {};
  }
  std::string decode(const std::vector<int32_t> &, bool) const override {
    return "";
  }
  std::string tokenBytes(int32_t) const override { return ""; }
  std::string tokenText(int32_t) const override { return ""; }
  int32_t vocabSize() const override { return 100; }
  std::optional<int32_t> tokenId(std::string_view t) const override {
    auto it = vocab.find(t);
    if (it == vocab.end())
      return std::nullopt;
    return it->second;
  }
};

TEST(ChatEos, UnionAddsTheTemplatesEndOfTurnToken) {
  FakeTokenizer t;
  t.vocab = {{"<|im_end|>", 7}, {"<|eot_id|>", 9}, {"<|endoftext|>", 5}};
  std::string chatml = "{{ '<|im_start|>' + m + '<|im_end|>' }}";
  EXPECT_EQ(chatEosIds({5}, t, chatml), (std::vector<int64_t>{5, 7}));
  // Several config ids are kept; duplicates collapse.
  EXPECT_EQ(chatEosIds({7, 3}, t, chatml), (std::vector<int64_t>{3, 7}));
  // A marker the template does not write does not count, even if the
  // tokenizer has it (<|eot_id|> here).
  EXPECT_EQ(chatEosIds({5}, t, "{{ m }}"), (std::vector<int64_t>{5}));
  // A marker the tokenizer lacks (split into pieces) cannot be an EOS id.
  FakeTokenizer none;
  EXPECT_EQ(chatEosIds({5}, none, chatml), (std::vector<int64_t>{5}));
}

TEST(ChatEos, TemplatesThatWriteEosTokenEndTurnsWithIt) {
  FakeTokenizer t;
  t.eos = 42;
  EXPECT_EQ(chatEosIds({2}, t, "{{ m + eos_token }}"),
            (std::vector<int64_t>{2, 42}));
  EXPECT_EQ(chatEosIds({2}, t, "{{ m }}"), (std::vector<int64_t>{2}));
}

class ChatEngine : public test::CompiledPlanTest<ChatEngine> {
public:
  static constexpr const char *kModel = "gpt2";

protected:
  static std::unique_ptr<Engine> engine() {
    EngineOptions o;
    o.backend = "ref";
    o.blockSize = 4;
    o.maxSequences = 2;
    return std::make_unique<Engine>(*plan_, *registry_, o);
  }
  static std::vector<float> fresh(Engine &e, const std::vector<int32_t> &ids) {
    std::vector<float> logits(static_cast<size_t>(e.vocabSize()));
    int32_t s = e.newSequence();
    e.prefill(s, ids, logits.data());
    e.releaseSequence(s);
    return logits;
  }
};

TEST_F(ChatEngine, TruncateThenPrefillEqualsAFreshPrefill) {
  auto e = engine();
  std::vector<int32_t> a = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  std::vector<int32_t> b = {10, 11, 12, 13, 14, 15, 99, 98, 97};
  std::vector<float> logits(static_cast<size_t>(e->vocabSize()));
  int32_t s = e->newSequence();
  e->prefill(s, a, logits.data());
  // A fork shares the block that position 6 lies in: truncating and then
  // writing must copy it, not clobber the fork.
  int32_t fork = e->forkSequence(s);
  e->truncate(s, 6);
  EXPECT_EQ(e->length(s), 6);
  e->prefill(s, std::span<const int32_t>(b).subspan(6), logits.data());
  EXPECT_EQ(logits, fresh(*e, b));
  std::vector<float> forkLogits(logits.size());
  int32_t next = 21;
  e->decode(std::span<const int32_t>(&fork, 1),
            std::span<const int32_t>(&next, 1), forkLogits.data());
  std::vector<int32_t> a21 = a;
  a21.push_back(21);
  EXPECT_EQ(forkLogits, fresh(*e, a21));
  EXPECT_THROW(e->truncate(s, 100), Error);
  EXPECT_THROW(e->truncate(s, -1), Error);
  e->releaseSequence(s);
  e->releaseSequence(fork);
}

TEST_F(ChatEngine, SessionReusesTheCacheAndMatchesAFreshRun) {
  auto e = engine();
  auto tokenizer = tokenizerFromPlan(*plan_);
  ASSERT_TRUE(tokenizer);
  std::string source =
      readFile(kData + "/chat-templates/smollm2-instruct.jinja");
  GenerateOptions go;
  go.maxNewTokens = 6;
  go.sampling.temperature = 0;
  ChatSession chat(*e, *tokenizer, source, "smollm2", go);
  ChatTurn t1 = chat.send("Hello there");
  EXPECT_EQ(t1.reused, 0);
  ChatTurn t2 = chat.send("And again");
  EXPECT_GT(t2.reused, 0);
  EXPECT_EQ(t2.reused + t2.prefilled,
            static_cast<int64_t>(t2.promptIds.size()));
  // The history now holds turn 2's reply too.
  EXPECT_GT(tokenizer->encode(chat.render(), false).size(),
            t2.promptIds.size());
  GenerateResult ref = generate(*e, tokenizer.get(), t2.promptIds, go);
  EXPECT_EQ(t2.result.outputIds, ref.outputIds);
  EXPECT_EQ(chat.messages().size(), 4u);
  chat.reset();
  EXPECT_TRUE(chat.cachedTokens().empty());
  EXPECT_EQ(chat.send("Hello there").result.outputIds, t1.result.outputIds);
}

TEST_F(ChatEngine, RenderErrorsAreReportedAndKeepTheHistory) {
  auto e = engine();
  auto tokenizer = tokenizerFromPlan(*plan_);
  GenerateOptions go;
  go.maxNewTokens = 2;
  go.sampling.temperature = 0;
  ChatSession chat(*e, *tokenizer,
                   "{% if messages|length > 1 %}"
                   "{{ raise_exception('only one turn here') }}{% endif %}"
                   "{{ messages[0].content }}",
                   "bad.jinja", go);
  chat.send("hi");
  try {
    chat.send("again");
    FAIL() << "expected an error";
  } catch (const Error &err) {
    EXPECT_NE(std::string(err.what()).find("only one turn here"),
              std::string::npos)
        << err.what();
    EXPECT_NE(std::string(err.what()).find("bad.jinja"), std::string::npos);
  }
  EXPECT_EQ(chat.messages().size(), 2u);
}

// A template whose generation prompt opens a reasoning block (DeepSeek R1's
// shape): the reply streams to onReasoning until `</think>`, the rest to
// onText, and the history keeps the two apart.
TEST_F(ChatEngine, ReasoningStreamsApart) {
  auto e = engine();
  auto tokenizer = tokenizerFromPlan(*plan_);
  GenerateOptions go;
  go.maxNewTokens = 8;
  go.sampling.temperature = 0;
  ChatSession chat(*e, *tokenizer,
                   "{% for m in messages %}{{ m.role }}: {{ m.content }}\n"
                   "{% endfor %}{% if add_generation_prompt %}assistant: "
                   "<think>{% endif %}{# history drops it: </think> #}",
                   "think.jinja", go);
  std::string reasoning, content;
  ChatTurn t = chat.send(
      "hi", [&](const std::string &s) { content += s; },
      [&](const std::string &s) { reasoning += s; });
  ASSERT_FALSE(t.result.text.empty());
  EXPECT_EQ(reasoning, t.reasoning);
  EXPECT_EQ(content, t.content);
  const size_t close = t.result.text.find("</think>");
  if (close == std::string::npos) { // the usual case for random weights
    EXPECT_EQ(t.reasoning, t.result.text);
    EXPECT_EQ(t.content, "");
  } else {
    EXPECT_EQ(t.reasoning, t.result.text.substr(0, close));
  }
  EXPECT_EQ(chat.messages().back().thinking, t.reasoning);
  EXPECT_EQ(chat.messages().back().content, t.content);
}

} // namespace
} // namespace llmc
