//===- harmony_test.cpp - gpt-oss's replies split into reasoning, content -===//
//
// gpt-oss's tokenizer fixture (test/data/tokenizers/gpt-oss: harmony's
// markers, a cut vocabulary): a reply as gpt-oss writes it after the
// prompt's `<|start|>assistant`, encoded with its special tokens, split whole
// and token by token. Each part's text is compared as the vocabulary
// round-trips it.
//
//===----------------------------------------------------------------------===//
#include "llmc/text/harmony.h"

#include <gtest/gtest.h>

#include <memory>

namespace llmc::text {
namespace {

const tok::Tokenizer &gptOss() {
  static std::unique_ptr<tok::Tokenizer> t = tok::loadTokenizer(
      std::string(LLMC_DATA_DIR) + "/tokenizers/gpt-oss/tokenizer.json");
  return *t;
}

HarmonyReply::Delta whole(const std::string &reply) {
  const tok::Tokenizer &t = gptOss();
  ReplyParser::Whole w =
      HarmonyReply::split(t, *HarmonyReply::markersOf(t), t.encode(reply));
  HarmonyReply::Delta d{w.reasoning, w.content, {}};
  for (size_t i = 0; i < w.calls.size(); ++i)
    d.calls.push_back({static_cast<int32_t>(i), w.calls[i].id, w.calls[i].name,
                       w.calls[i].arguments});
  return d;
}

HarmonyReply::Delta tokenByToken(const std::string &reply) {
  const tok::Tokenizer &t = gptOss();
  HarmonyReply r(t, *HarmonyReply::markersOf(t));
  HarmonyReply::Delta all;
  auto add = [&](const HarmonyReply::Delta &d) {
    all.reasoning += d.reasoning;
    all.content += d.content;
    for (const auto &c : d.calls) {
      if (!c.name.empty())
        all.calls.push_back(c);
      else
        all.calls.back().arguments += c.arguments;
    }
  };
  for (int32_t id : t.encode(reply))
    add(r.push({id}));
  add(r.finish());
  return all;
}

/// `text` as the fixture's vocabulary encodes and decodes it.
std::string roundTrip(const std::string &text) {
  return gptOss().decode(gptOss().encode(text));
}

TEST(Harmony, AnalysisIsReasoningFinalIsContent) {
  const std::string thinking =
      "the user greets; answer briefly, in french — «bonjour» 😀.";
  const std::string answer = "bonjour ! comment puis-je vous aider ?";
  const std::string reply = "<|channel|>analysis<|message|>" + thinking +
                            "<|end|><|start|>assistant<|channel|>final"
                            "<|message|>" +
                            answer + "<|return|>";
  ASSERT_FALSE(roundTrip(answer).empty());
  for (auto split : {whole, tokenByToken}) {
    HarmonyReply::Delta d = split(reply);
    EXPECT_EQ(d.reasoning, roundTrip(thinking));
    EXPECT_EQ(d.content, roundTrip(answer));
  }
}

TEST(Harmony, CommentaryStaysVisibleAndHeadersDoNot) {
  // A preamble on the commentary channel, and a header naming a format
  // (this copy of the vocabulary has no <|constrain|> token: plain text).
  const std::string reply =
      "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>"
      "assistant<|channel|>commentary<|message|>Let me check.<|end|><|start|>"
      "assistant<|channel|>final json<|message|>{\"ok\": true}"
      "<|return|>ignored after the end";
  HarmonyReply::Delta d = tokenByToken(reply);
  EXPECT_EQ(d.reasoning, roundTrip("Need the weather."));
  EXPECT_EQ(d.content,
            roundTrip("Let me check.") + roundTrip("{\"ok\": true}"));
}

TEST(Harmony, AReplyThatOpensNoChannelIsContent) {
  // A model that ignores the format (a random-weight one) loses nothing.
  HarmonyReply::Delta d = whole("just text, no channel.");
  EXPECT_EQ(d.reasoning, "");
  EXPECT_EQ(d.content, roundTrip("just text, no channel."));
}

TEST(Harmony, AnUnfinishedReplyKeepsWhatItSaid) {
  // Cut by max_tokens inside the analysis.
  HarmonyReply::Delta d =
      tokenByToken("<|channel|>analysis<|message|>thinking");
  EXPECT_EQ(d.reasoning, roundTrip("thinking"));
  EXPECT_EQ(d.content, "");
}

TEST(Harmony, OtherTokenizersHaveNoMarkers) {
  std::unique_ptr<tok::Tokenizer> gpt2 = tok::loadTokenizer(
      std::string(LLMC_DATA_DIR) + "/models/tokenizers/gpt2/tokenizer.json");
  EXPECT_FALSE(HarmonyReply::markersOf(*gpt2));
  EXPECT_TRUE(HarmonyReply::markersOf(gptOss()));
  // The markers alone do not make a model's replies harmony: its template
  // must write channels.
  EXPECT_FALSE(HarmonyReply::forTemplate(gptOss(), "{{ messages }}"));
  EXPECT_TRUE(
      HarmonyReply::forTemplate(gptOss(), "<|start|>assistant<|channel|>"));
}

// Tool calls: the recipient after the channel (as gpt-oss mostly writes
// it) or in the role header (as its template renders history, and as a
// reply may start right after the prompt's `<|start|>assistant`).
TEST(Harmony, RecipientsMakeToolCalls) {
  const std::string args = "{\"city\":\"Paris\"}";
  // The fixture's vocabulary leaves <|call|> reserved: <|end|> closes.
  const std::string replies[] = {
      "<|channel|>analysis<|message|>need weather<|end|><|start|>assistant"
      "<|channel|>commentary to=functions.get_weather <|constrain|>json"
      "<|message|>" +
          args + "<|end|>",
      " to=functions.get_weather<|channel|>commentary json<|message|>" + args +
          "<|end|>",
  };
  for (const std::string &reply : replies)
    for (auto split : {whole, tokenByToken}) {
      SCOPED_TRACE(reply);
      HarmonyReply::Delta d = split(reply);
      ASSERT_EQ(d.calls.size(), 1u);
      EXPECT_EQ(d.calls[0].name, "get_weather");
      EXPECT_EQ(d.calls[0].arguments, roundTrip(args));
      EXPECT_FALSE(d.calls[0].id.empty());
      EXPECT_EQ(d.content, "");
    }
  EXPECT_EQ(whole(replies[0]).reasoning, roundTrip("need weather"));
  // Text that only looks like a header at first is content.
  for (auto split : {whole, tokenByToken}) {
    HarmonyReply::Delta d = split(" too late to=start");
    EXPECT_TRUE(d.calls.empty());
    EXPECT_EQ(d.content, roundTrip(" too late to=start"));
  }
}

} // namespace
} // namespace llmc::text
