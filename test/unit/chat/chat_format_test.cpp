// The tool-call and reasoning markup derived from every real template in
// test/data/chat-templates, the parser on what those templates render and
// on malformed replies, and the reply grammar.
#include "llmc/runtime/chat_format.h"
#include "llmc/runtime/chat_template.h"
#include "llmc/runtime/tool_grammar.h"
#include "llmc/text/harmony.h"

#include "../grammar/grammar_test_util.h"
#include "../serve/byte_tokenizer.h"

#include "llmc/grammar/matcher.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace llmc {
namespace {

using json = nlohmann::ordered_json;
using text::ReplyParser;
using text::ToolCallFormat;

const std::string kData = LLMC_DATA_DIR;

/// Bytes as tokens, with BOS and EOS texts for templates that write them.
class TemplateTokenizer : public test::ByteTokenizer {
public:
  TemplateTokenizer() {
    bos = 1;
    eos = 2;
  }
  std::string tokenText(int32_t id) const override {
    return id == 1 ? "<s>" : id == 2 ? "</s>" : tokenBytes(id);
  }
};

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Loaded {
  TemplateTokenizer tokenizer;
  std::unique_ptr<ChatTemplate> chat;
};

std::unique_ptr<Loaded> load(const std::string &name) {
  auto l = std::make_unique<Loaded>();
  l->chat = std::make_unique<ChatTemplate>(
      readFile(kData + "/chat-templates/" + name + ".jinja"), name,
      l->tokenizer);
  return l;
}

std::string sequentialIds() {
  static int n = 0;
  return "call_" + std::to_string(++n);
}

TEST(ChatFormat, DerivedFromEachTemplate) {
  struct Want {
    const char *name, *describe, *trigger;
    bool argsText;
    int idLength;
    const char *reasoning;
  };
  const Want wants[] = {
      {"hermes-3-llama-3.1-tool-use",
       R"("<tool_call>\n{\"name\": \"NAME\", \"arguments\": ARGS}\n</tool_call>[\n...]")",
       "<tool_call>", false, 0, ""},
      {"qwen2.5-instruct",
       R"("<tool_call>\n{\"name\": \"NAME\", \"arguments\": ARGS}\n</tool_call>[\n...]")",
       "<tool_call>", false, 0, ""},
      {"qwen3",
       R"("<tool_call>\n{\"name\": \"NAME\", \"arguments\": ARGS}\n</tool_call>[\n...]")",
       "<tool_call>", false, 0, "<think>"},
      {"llama-3.2-instruct", R"("{\"name\": \"NAME\", \"parameters\": ARGS}")",
       "", false, 0, ""},
      {"mistral-nemo-instruct-2407",
       R"("[TOOL_CALLS][{\"name\": \"NAME\", \"arguments\": ARGS, \"id\": \"ID\"}[, ...]]")",
       "[TOOL_CALLS]", false, 9, ""},
      {"deepseek-r1",
       "\"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME"
       "\\n```json\\nARGS\\n```<｜tool▁call▁end｜>[\\n...]<｜tool▁calls▁end｜>"
       "\"",
       "<｜tool▁calls▁begin｜>", true, 0, "<think>"},
      // tool-formats/: more families (see its README).
      {"tool-formats/CohereForAI-c4ai-command-r-plus-tool_use",
       R"("Action:\n```json\n[\n    {\n        \"tool_name\": \"NAME\",\n        \"parameters\": ARGS\n    }[,...]\n]```")",
       "Action:", false, 0, ""},
      {"tool-formats/CohereForAI-c4ai-command-r7b-12-2024-tool_use",
       R"("<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"NAME\", \"parameters\": ARGS}\n]<|END_ACTION|>")",
       "<|START_ACTION|>", false, 0, "<|START_THINKING|>"},
      {"tool-formats/ibm-granite-granite-3.3-2B-Instruct",
       R"("<|tool_call|>[{\"name\": \"NAME\", \"arguments\": ARGS}[, ...]]")",
       "<|tool_call|>", false, 0, "<think>"},
      {"tool-formats/ibm-granite-granite-4.0",
       R"("<tool_call>\n{\"name\": \"NAME\", \"arguments\": ARGS}\n</tool_call>[\n...]")",
       "<tool_call>", false, 0, ""},
      {"tool-formats/meta-llama-Llama-3.1-8B-Instruct",
       R"("{\"name\": \"NAME\", \"parameters\": ARGS}")", "", false, 0, ""},
      {"tool-formats/Mistral-Small-3.2-24B-Instruct-2506",
       R"("[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]ARGS[...]")", "[TOOL_CALLS]", false,
       9, ""},
      {"tool-formats/deepseek-ai-DeepSeek-V3.1",
       "\"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜"
       "tool▁call▁end｜>[...]<｜tool▁calls▁end｜>\"",
       "<｜tool▁calls▁begin｜>", false, 0, "<think>"},
      {"tool-formats/meetkai-functionary-medium-v3.1",
       R"("<function=NAME>ARGS</function>[...]<|eom_id|>")",
       "<function=", false, 0, ""},
      {"tool-formats/NVIDIA-Nemotron-Nano-v2",
       R"("<TOOLCALL>[{\"name\": \"NAME\", \"arguments\": ARGS}[, ...]]</TOOLCALL>")",
       "<TOOLCALL>", false, 0, "<think>"},
  };
  for (const Want &w : wants) {
    SCOPED_TRACE(w.name);
    auto l = load(w.name);
    const ChatFormat &f = l->chat->format();
    ASSERT_TRUE(f.tools);
    EXPECT_EQ(f.tools->describe(), w.describe);
    EXPECT_EQ(f.tools->trigger, w.trigger);
    EXPECT_EQ(f.tools->argumentsAsText, w.argsText);
    EXPECT_EQ(f.tools->idLength, w.idLength);
    EXPECT_EQ(f.reasoning ? f.reasoning->open : "", w.reasoning);
  }
  // Templates without tool calls; gpt-oss's harmony is read elsewhere;
  // Gemma 4 writes arguments in a notation of its own, not JSON.
  for (const char *name :
       {"gpt-oss", "llama-3-instruct", "smollm2-instruct", "gemma-3-it",
        "zephyr-7b-beta", "tool-formats/google-gemma-4-31B-it"}) {
    auto l = load(name);
    EXPECT_FALSE(l->chat->format().tools) << name;
  }
}

/// What a model of each template writes: reasoning, text, two calls.
struct Reply {
  const char *name, *text;
  std::string reasoning, content;
  std::vector<std::pair<std::string, std::string>> calls; // name, args
};

const std::vector<Reply> &replies() {
  static const std::vector<Reply> r = {
      {"hermes-3-llama-3.1-tool-use",
       "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
       "{\"city\": \"Paris\", \"units\": {\"c\": [1, \"}\"]}}}\n</tool_call>\n"
       "<tool_call>\n{\"name\":\"get_time\",\"arguments\":{}}\n</tool_call>",
       "",
       "Checking.\n",
       {{"get_weather", R"({"city": "Paris", "units": {"c": [1, "}"]}})"},
        {"get_time", "{}"}}},
      {"qwen3",
       "<think>\nThe user wants weather.\n</think>\n\n<tool_call>\n{\"name\": "
       "\"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>",
       "\nThe user wants weather.\n",
       "",
       {{"get_weather", R"({"city": "Oslo"})"}}},
      {"llama-3.2-instruct",
       "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Rome\"}}",
       "",
       "",
       {{"get_weather", R"({"city": "Rome"})"}}},
      {"mistral-nemo-instruct-2407",
       "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": "
       "\"Paris\"}, \"id\": \"abcDEF123\"}, {\"name\": \"get_time\", "
       "\"arguments\": {}, \"id\": \"x12345678\"}]",
       "",
       "",
       {{"get_weather", R"({"city": "Paris"})"}, {"get_time", "{}"}}},
      {"tool-formats/CohereForAI-c4ai-command-r-plus-tool_use",
       "Action:\n```json\n[\n    {\n        \"tool_name\": \"get_weather\",\n"
       "        \"parameters\": {\n            \"city\": \"Paris\"\n        }\n"
       "    },\n    {\n        \"tool_name\": \"get_time\",\n        "
       "\"parameters\": {}\n    }\n]```",
       "",
       "",
       {{"get_weather", "{\n            \"city\": \"Paris\"\n        }"},
        {"get_time", "{}"}}},
      {"tool-formats/ibm-granite-granite-3.3-2B-Instruct",
       "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": "
       "\"Paris\"}}, {\"name\": \"get_time\", \"arguments\": {}}]",
       "",
       "",
       {{"get_weather", R"({"city": "Paris"})"}, {"get_time", "{}"}}},
      {"tool-formats/Mistral-Small-3.2-24B-Instruct-2506",
       "[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{\"city\": "
       "\"Paris\"}[TOOL_CALLS]get_time[CALL_ID]x12345678[ARGS]{}",
       "",
       "",
       {{"get_weather", R"({"city": "Paris"})"}, {"get_time", "{}"}}},
      {"deepseek-r1",
       "hmm\n</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<"
       "｜tool▁sep｜>get_weather\n```json\n{\"city\": "
       "\"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜"
       "tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁"
       "end｜>",
       "hmm\n",
       "",
       {{"get_weather", R"({"city": "Paris"})"}, {"get_time", "{}"}}},
  };
  return r;
}

/// The reply pushed in pieces of `step` bytes, deltas joined.
ReplyParser::Whole streamed(const ChatFormat &f, bool startsInReasoning,
                            std::string_view text, size_t step) {
  ReplyParser p(f.tools ? &*f.tools : nullptr, f.reasoning, startsInReasoning,
                sequentialIds);
  ReplyParser::Whole w;
  auto add = [&](const ReplyParser::Delta &d) {
    w.reasoning += d.reasoning;
    w.content += d.content;
    for (const auto &c : d.calls) {
      if (!c.name.empty()) {
        EXPECT_EQ(c.index, static_cast<int32_t>(w.calls.size()));
        EXPECT_FALSE(c.id.empty());
        w.calls.push_back({c.id, c.name, ""});
      }
      ASSERT_FALSE(w.calls.empty()) << "arguments before the call's name";
      EXPECT_EQ(c.index, static_cast<int32_t>(w.calls.size() - 1));
      w.calls.back().arguments += c.arguments;
    }
  };
  for (size_t i = 0; i < text.size(); i += step)
    add(p.push(text.substr(i, step)));
  add(p.finish());
  return w;
}

TEST(ReplyParser, EachTemplatesCallsWholeAndStreamed) {
  for (const Reply &r : replies()) {
    SCOPED_TRACE(r.name);
    auto l = load(r.name);
    const ChatFormat &f = l->chat->format();
    const bool inReasoning = std::string(r.name) == "deepseek-r1";
    for (size_t step : {size_t(1000), size_t(1), size_t(3), size_t(7)}) {
      SCOPED_TRACE(step);
      ReplyParser::Whole w = streamed(f, inReasoning, r.text, step);
      EXPECT_EQ(w.reasoning, r.reasoning);
      EXPECT_EQ(w.content, r.content);
      ASSERT_EQ(w.calls.size(), r.calls.size());
      for (size_t i = 0; i < r.calls.size(); ++i) {
        EXPECT_EQ(w.calls[i].name, r.calls[i].first);
        EXPECT_EQ(w.calls[i].arguments, r.calls[i].second);
      }
    }
  }
}

TEST(ReplyParser, CallsGoBackThroughTheTemplate) {
  // The parsed calls, sent back as history, render as the model wrote
  // them (arguments re-serialised by the template, so compared as JSON).
  for (const Reply &r : replies()) {
    SCOPED_TRACE(r.name);
    if (std::string(r.name).find("granite-3.3") != std::string::npos)
      continue; // its template drops an assistant's calls from history
    auto l = load(r.name);
    const ChatFormat &f = l->chat->format();
    json calls = json::array();
    int n = 0;
    for (const auto &[name, args] : r.calls)
      calls.push_back(
          {{"id", f.tools->idLength ? std::string("abcdefgh") + char('0' + n++)
                                    : "call_" + std::to_string(n++)},
           {"type", "function"},
           {"function", {{"name", name}, {"arguments", args}}}});
    json messages = json::array(
        {{{"role", "developer"}, {"content", "Be brief."}},
         {{"role", "user"}, {"content", "Weather?"}},
         {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", calls}},
         {{"role", "tool"},
          {"tool_call_id", calls[0]["id"]},
          {"content", "sunny"}}});
    if (calls.size() > 1)
      messages.push_back({{"role", "tool"},
                          {"tool_call_id", calls[1]["id"]},
                          {"content", "noon"}});
    messages = historyForTemplate(messages, f.tools);
    EXPECT_EQ(messages[0]["role"], "system");
    for (json &m : messages)
      if (m["content"].is_null())
        m["content"] = "";
    json tools = json::array();
    for (const auto &[name, args] : r.calls)
      tools.push_back({{"type", "function"},
                       {"function",
                        {{"name", name},
                         {"description", "d"},
                         {"parameters", {{"type", "object"}}}}}});
    const std::string rendered = l->chat->render(messages, tools);
    for (const auto &[name, args] : r.calls) {
      EXPECT_NE(rendered.find(name), std::string::npos) << rendered;
      const json want = json::parse(args);
      bool found = false;
      for (size_t at = rendered.find('{'); at != std::string::npos && !found;
           at = rendered.find('{', at + 1)) {
        for (size_t len = 2; at + len <= rendered.size() && len < 200; ++len) {
          json j = json::parse(rendered.substr(at, len), nullptr, false);
          if (!j.is_discarded() && j == want) {
            found = true;
            break;
          }
        }
      }
      EXPECT_TRUE(found) << args << " not in " << rendered;
    }
  }
}

TEST(ReplyParser, MalformedRepliesAreTextNotCrashes) {
  auto l = load("hermes-3-llama-3.1-tool-use");
  const ChatFormat &f = l->chat->format();
  auto whole = [&](std::string_view text) {
    ReplyParser::Whole a = streamed(f, false, text, 1000);
    ReplyParser::Whole b = streamed(f, false, text, 1);
    EXPECT_EQ(a.content, b.content) << text;
    EXPECT_EQ(a.calls.size(), b.calls.size()) << text;
    return a;
  };
  // Truncated arguments: the call keeps what it has.
  auto w = whole("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                 "{\"city\": \"Par");
  ASSERT_EQ(w.calls.size(), 1u);
  EXPECT_EQ(w.calls[0].arguments, "{\"city\": \"Par");
  // Not a call after all: text.
  w = whole("<tool_call> is how I call tools");
  EXPECT_EQ(w.content, "<tool_call> is how I call tools");
  EXPECT_TRUE(w.calls.empty());
  w = whole("a <tool_ca");
  EXPECT_EQ(w.content, "a <tool_ca");
  w = whole("<tool_call>\n{\"name\": 7}");
  EXPECT_TRUE(w.calls.empty());
  EXPECT_EQ(w.content, "<tool_call>\n{\"name\": 7}");
  // Text after a call is content.
  w = whole("<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>"
            "\nDone.");
  ASSERT_EQ(w.calls.size(), 1u);
  EXPECT_EQ(w.content, "Done.");
  // A name alone, then the end.
  w = whole("<tool_call>\n{\"name\": \"f\"");
  ASSERT_EQ(w.calls.size(), 1u);
  EXPECT_EQ(w.calls[0].arguments, "");
  // Random fragments: whole and streamed agree, nothing crashes.
  const char *pieces[] = {"<tool_call>",
                          "\n",
                          "{\"name\": \"",
                          "f",
                          "\"",
                          ", \"arguments\": ",
                          "{",
                          "}",
                          "\"x\"",
                          ":",
                          "</tool_call>",
                          "<think>",
                          "</think>",
                          "text ",
                          "\\",
                          "[",
                          "]"};
  uint64_t seed = 42;
  for (int round = 0; round < 300; ++round) {
    std::string text;
    for (int k = 0; k < 12; ++k) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      text += pieces[(seed >> 33) % (sizeof pieces / sizeof *pieces)];
    }
    whole(text);
  }
}

TEST(ReplyParser, ReasoningOnly) {
  text::ReasoningMarkers m{"<think>", "</think>"};
  auto w = ReplyParser::parse(nullptr, m, false, "<think>a</think>\n\nanswer",
                              sequentialIds);
  EXPECT_EQ(w.reasoning, "a");
  EXPECT_EQ(w.content, "answer");
  w = ReplyParser::parse(nullptr, m, true, "still thinking", sequentialIds);
  EXPECT_EQ(w.reasoning, "still thinking");
  EXPECT_EQ(w.content, "");
  w = ReplyParser::parse(nullptr, m, false, "no block <think>", sequentialIds);
  EXPECT_EQ(w.content, "no block <think>");
}

/// Whether `g` accepts exactly `text`, byte by byte.
bool accepts(const grammar::Grammar &g, const std::string &text) {
  return grammar::test::matches(grammar::test::compileForBytes(g, 16), text);
}

TEST(ToolGrammar, AcceptsTheTemplatesCallsAndNothingElse) {
  ToolRequest req;
  req.tools = {{"get_weather",
                R"({"type": "object", "properties": {"city": {"type":
                   "string"}}, "required": ["city"]})"},
               {"get_time", ""}};
  const std::map<std::string, std::string> exact = {
      {"hermes-3-llama-3.1-tool-use",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
       "\"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", "
       "\"arguments\": {}}\n</tool_call>"},
      {"llama-3.2-instruct",
       "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Rome\"}}"},
      {"mistral-nemo-instruct-2407",
       "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": "
       "\"Paris\"}, \"id\": \"abcDEF123\"}, {\"name\": \"get_time\", "
       "\"arguments\": {}, \"id\": \"x12345678\"}]"},
      {"tool-formats/ibm-granite-granite-3.3-2B-Instruct",
       "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": "
       "\"Paris\"}}, {\"name\": \"get_time\", \"arguments\": {}}]"},
      {"tool-formats/Mistral-Small-3.2-24B-Instruct-2506",
       "[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{\"city\": "
       "\"Paris\"}[TOOL_CALLS]get_time[CALL_ID]x12345678[ARGS]{}"},
  };
  for (const auto &[name, call] : exact) {
    SCOPED_TRACE(name);
    auto l = load(name);
    const ChatFormat &f = l->chat->format();
    req.choice = ToolRequest::Choice::Required;
    req.parallel = true;
    const ReplyMarkup mk = replyMarkup(f, "", true);
    grammar::Grammar required = replyGrammar(mk, &req, nullptr);
    EXPECT_TRUE(accepts(required, call));
    EXPECT_FALSE(accepts(required, "Hello"));
    EXPECT_FALSE(accepts(required, ""));
    std::string wrongName = call;
    wrongName.replace(wrongName.find("get_weather"), 11, "get_wether!");
    EXPECT_FALSE(accepts(required, wrongName));
    std::string badArgs = call;
    badArgs.replace(badArgs.find("\"city\""), 6, "\"town\"");
    EXPECT_FALSE(accepts(required, badArgs));
    req.choice = ToolRequest::Choice::Auto;
    grammar::Grammar lazy = replyGrammar(mk, &req, nullptr);
    EXPECT_TRUE(accepts(lazy, call));
    EXPECT_TRUE(accepts(lazy, "Hello there"));
    EXPECT_TRUE(accepts(lazy, ""));
    EXPECT_FALSE(accepts(lazy, wrongName));
    if (!f.tools->trigger.empty()) {
      EXPECT_TRUE(accepts(lazy, "Let me look. " + call));
      EXPECT_FALSE(accepts(lazy, "Let me look. " + wrongName));
    }
    req.parallel = false;
    grammar::Grammar single = replyGrammar(mk, &req, nullptr);
    EXPECT_EQ(accepts(single, call), !f.tools->parallel);
  }
  // gpt-oss's harmony, from HarmonyReply's description: an optional
  // analysis message, then one call in the commentary channel.
  {
    const ReplyMarkup harmony{&text::HarmonyReply::callFormat(),
                              text::HarmonyReply::analysisMarkers(), false};
    req.choice = ToolRequest::Choice::Required;
    grammar::Grammar g = replyGrammar(harmony, &req, nullptr);
    const std::string call = "<|channel|>commentary to=functions.get_weather "
                             "<|constrain|>json<|message|>{\"city\": \"Oslo\"}";
    EXPECT_TRUE(accepts(g, call));
    EXPECT_TRUE(accepts(g, "<|channel|>analysis<|message|>hm<|end|><|start|>"
                           "assistant" +
                               call));
    EXPECT_FALSE(accepts(g, "<|channel|>final<|message|>hi"));
    EXPECT_FALSE(accepts(g, call + call));
  }
  // Reasoning first: mandatory when the prompt opened it, then the call.
  auto l = load("qwen3");
  req.choice = ToolRequest::Choice::Required;
  const std::string call = "<tool_call>\n{\"name\": \"get_time\", "
                           "\"arguments\": {}}\n</tool_call>";
  const ChatFormat &f = l->chat->format();
  const std::string prompt = "<|im_start|>assistant\n";
  grammar::Grammar g =
      replyGrammar(replyMarkup(f, prompt, true), &req, nullptr);
  EXPECT_TRUE(accepts(g, call));
  EXPECT_TRUE(accepts(g, "<think>\nhmm <tool_call>\n</think>\n\n" + call));
  g = replyGrammar(replyMarkup(f, prompt + "<think>\n", true), &req, nullptr);
  EXPECT_FALSE(accepts(g, call));
  EXPECT_TRUE(accepts(g, "hmm\n</think>\n\n" + call));
  // Thinking switched off: no block.
  const ReplyMarkup off =
      replyMarkup(f, prompt + "<think>\n\n</think>\n\n", true);
  EXPECT_FALSE(off.reasoning);
  g = replyGrammar(off, &req, nullptr);
  EXPECT_TRUE(accepts(g, call));
  EXPECT_FALSE(accepts(g, "<think>\nhmm\n</think>\n\n" + call));
}

} // namespace
} // namespace llmc
