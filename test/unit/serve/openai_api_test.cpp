// parseRequest: every field checked with the parameter named, the context
// and model checks, and the response shapes.
#include "byte_tokenizer.h"

#include "llmc/runtime/openai_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>

namespace llmc::api {
namespace {

using ::testing::HasSubstr;

class OpenAiApi : public ::testing::Test {
protected:
  test::ByteTokenizer tokenizer;
  ChatTemplate chat{"{% for m in messages %}{{ m.role }}:{{ m.content }}|"
                    "{% endfor %}{% if add_generation_prompt %}A:{% endif %}",
                    "test template", tokenizer};
  ModelInfo model = [this] {
    ModelInfo m;
    m.name = "tiny";
    m.contextLength = 64;
    m.vocabSize = 256;
    m.maxNumSeqs = 4;
    m.eosIds = {0};
    m.chatEosIds = {0, 1};
    m.tokenizer = &tokenizer;
    m.chatTemplate = &chat;
    return m;
  }();

  ApiError errorOf(Endpoint e, const std::string &body) {
    try {
      parseRequest(e, body, model);
    } catch (const ApiError &err) {
      return err;
    }
    ADD_FAILURE() << "accepted: " << body;
    return ApiError(0, "");
  }
};

TEST_F(OpenAiApi, CompletionFields) {
  ParsedRequest r = parseRequest(
      Endpoint::Completions,
      R"({"model": "tiny", "prompt": "hey", "max_tokens": 5, "temperature": 0.5,
          "top_p": 0.9, "top_k": 3, "min_p": 0.1, "presence_penalty": 1,
          "frequency_penalty": -1, "repetition_penalty": 1.2, "seed": 7,
          "stop": ["x", "yz"], "n": 2, "logprobs": 3, "stream": true,
          "stream_options": {"include_usage": true}, "unknown": [1, 2]})",
      model);
  EXPECT_EQ(r.prompt, (std::vector<int32_t>{'h', 'e', 'y'}));
  EXPECT_EQ(r.options.maxNewTokens, 5);
  EXPECT_FLOAT_EQ(r.options.sampling.temperature, 0.5f);
  EXPECT_EQ(r.options.sampling.topK, 3);
  EXPECT_EQ(r.options.sampling.seed, 7u);
  EXPECT_EQ(r.options.stops, (std::vector<std::string>{"x", "yz"}));
  EXPECT_EQ(r.options.eosIds, (std::vector<int64_t>{0}));
  EXPECT_EQ(r.n, 2);
  EXPECT_EQ(r.logprobs, 3);
  EXPECT_TRUE(r.stream && r.includeUsage);
  // Token ids, a one-prompt list, defaults.
  r = parseRequest(Endpoint::Completions, R"({"prompt": [[5, 6]]})", model);
  EXPECT_EQ(r.prompt, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(r.options.maxNewTokens, 62); // the rest of the context
  EXPECT_FLOAT_EQ(r.options.sampling.temperature, 1.0f);
  r = parseRequest(Endpoint::Completions,
                   R"({"prompt": "a", "ignore_eos": true, "top_k": -1})",
                   model);
  EXPECT_TRUE(r.options.eosIds.empty());
  EXPECT_EQ(r.options.sampling.topK, 0);
}

TEST_F(OpenAiApi, ChatRendersTheTemplate) {
  ParsedRequest r =
      parseRequest(Endpoint::Chat,
                   R"({"messages": [{"role": "system", "content": "be"},
                       {"role": "user", "content": [{"type": "text", "text": "hi"}]}],
          "logprobs": true, "top_logprobs": 2, "max_completion_tokens": 3})",
                   model);
  EXPECT_EQ(tokenizer.decode(r.prompt, false), "system:be|user:hi|A:");
  EXPECT_EQ(r.options.eosIds, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(r.logprobs, 2);
  EXPECT_EQ(r.options.maxNewTokens, 3);
}

TEST_F(OpenAiApi, TheTemplateSeesBigIntegersDigitForDigit) {
  ChatTemplate tools{"{{ tools | tojson }}", "tools template", tokenizer};
  model.chatTemplate = &tools;
  model.contextLength = 256;
  ParsedRequest r = parseRequest(
      Endpoint::Chat,
      R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1,
          "tools": [{"type": "function", "function": {"name": "f",
                     "id": 12345678901234567890, "n": 123456789012345678901234567890}}]})",
      model);
  EXPECT_EQ(tokenizer.decode(r.prompt, false),
            R"([{"type": "function", "function": {"name": "f", )"
            R"("id": 12345678901234567890, )"
            R"("n": 123456789012345678901234567890}}])");
}

TEST_F(OpenAiApi, BadValuesNameTheParameter) {
  struct Case {
    Endpoint e;
    const char *body, *param, *message;
  } cases[] = {
      {Endpoint::Completions, R"({"prompt": "a", "top_p": 1.5})", "top_p",
       "top_p must be in (0, 1], got 1.5"},
      {Endpoint::Completions, R"({"prompt": "a", "temperature": "hot"})",
       "temperature", "'temperature' must be a number, got \"hot\""},
      {Endpoint::Completions, R"({"prompt": "a", "temperature": 1e300})",
       "temperature", "must be a finite number"},
      {Endpoint::Completions, R"({"prompt": "a", "max_tokens": 1e30})",
       "max_tokens", "must be an integer"},
      {Endpoint::Completions, R"({"prompt": "a", "max_tokens": 0})",
       "max_tokens", "in [1, "},
      {Endpoint::Completions, R"({"prompt": "a", "n": 99999999999999999})", "n",
       "'n' must be an integer in [1, 4]"},
      {Endpoint::Completions, R"({"prompt": "a", "stream": "yes"})", "stream",
       "true or false"},
      {Endpoint::Completions, R"({"prompt": "a", "stop": [1]})", "stop",
       "a string or a list of strings"},
      {Endpoint::Completions, R"({"prompt": "a", "stop": ""})", "stop",
       "non-empty"},
      {Endpoint::Completions, R"({"prompt": "a", "stream_options": {}})",
       "stream_options", "only allowed with 'stream': true"},
      {Endpoint::Completions, R"({"prompt": 3})", "prompt",
       "a string or a list of token ids"},
      {Endpoint::Completions, R"({"prompt": [1, 999]})", "prompt",
       "token id 999 is outside the vocabulary"},
      {Endpoint::Completions, R"({"prompt": ["a", "b"]})", "prompt",
       "one prompt per request"},
      {Endpoint::Completions, R"({})", "prompt", "'prompt' is required"},
      {Endpoint::Chat,
       R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:"}}]}]})",
       "messages[0].content",
       "image_url parts are not supported: llmc runs the text part of a model"},
      {Endpoint::Completions, R"({"prompt": "a", "logprobs": 21})", "logprobs",
       "in [0, 20]"},
      {Endpoint::Completions, R"({"prompt": "a", "echo": true, "logprobs": 1})",
       "echo", "not supported"},
      {Endpoint::Chat, R"({"messages": []})", "messages", "must not be empty"},
      {Endpoint::Chat, R"({"messages": "hi"})", "messages",
       "a list of messages"},
      {Endpoint::Chat, R"({"messages": [{"content": "x"}]})",
       "messages[0].role", "must be a string"},
      {Endpoint::Chat, R"({"messages": [{"role": "user"}]})",
       "messages[0].content", "is required"},
      {Endpoint::Chat,
       R"({"messages": [{"role": "user", "content": [{"type": "file"}]}]})",
       "messages[0].content", "only parts"},
      {Endpoint::Chat,
       R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})",
       "top_logprobs", "needs 'logprobs': true"},
  };
  for (const Case &c : cases) {
    ApiError e = errorOf(c.e, c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_THAT(e.message, HasSubstr(c.message)) << c.body;
    EXPECT_THAT(e.body(), HasSubstr("\"param\":\"" + std::string(c.param)));
  }
}

TEST_F(OpenAiApi, BodiesThatAreNotRequests) {
  for (const char *body :
       {"", "not json", "[1, 2]", "\"s\"", "{\"a\":", "nul"}) {
    ApiError e = errorOf(Endpoint::Completions, body);
    EXPECT_EQ(e.status, 400) << body;
    EXPECT_THAT(e.body(), HasSubstr("\"type\":\"invalid_request_error\""));
  }
}

TEST_F(OpenAiApi, UnknownModelIs404) {
  ApiError e =
      errorOf(Endpoint::Completions, R"({"model": "gpt-4", "prompt": "a"})");
  EXPECT_EQ(e.status, 404);
  EXPECT_EQ(e.code, "model_not_found");
  EXPECT_THAT(e.message, HasSubstr("gpt-4"));
}

TEST_F(OpenAiApi, ContextLimitGivesBothNumbers) {
  std::string prompt(40, 'a');
  ApiError e = errorOf(Endpoint::Completions,
                       R"({"prompt": ")" + prompt + R"(", "max_tokens": 30})");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "max_tokens");
  EXPECT_EQ(e.code, "context_length_exceeded");
  EXPECT_THAT(e.message, HasSubstr("maximum context length is 64 tokens"));
  EXPECT_THAT(e.message, HasSubstr("70 tokens (40 in the prompt, 30 in the "
                                   "completion)"));
  std::string full(64, 'a');
  e = errorOf(Endpoint::Completions, R"({"prompt": ")" + full + R"("})");
  EXPECT_EQ(e.param, "prompt");
}

TEST_F(OpenAiApi, ResponseShapes) {
  ParsedRequest r = parseRequest(
      Endpoint::Chat,
      R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true,
          "top_logprobs": 1, "stream": true, "stream_options": {"include_usage": true}})",
      model);
  ResponseContext ctx{"chatcmpl-1", 100, &r, &model, {}, {}};
  RequestResult result;
  SequenceOutput o;
  o.outputIds = {'o', 'k'};
  o.text = "ok";
  o.finishReason = FinishReason::Eos;
  o.logprobs = {{'o', -0.5f, {{'o', -0.5f}}}, {'k', -0.25f, {{'k', -0.25f}}}};
  result.outputs = {o};
  result.metrics.promptTokens = 7;
  result.cachedPromptTokens = 4;
  auto full = response(ctx, result);
  EXPECT_EQ(full["object"], "chat.completion");
  EXPECT_EQ(full["choices"][0]["message"]["content"], "ok");
  EXPECT_EQ(full["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(full["choices"][0]["logprobs"]["content"][1]["token"], "k");
  EXPECT_EQ(full["choices"][0]["logprobs"]["content"][1]["bytes"][0], 'k');
  EXPECT_EQ(full["usage"]["total_tokens"], 9);
  EXPECT_EQ(full["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
  RequestEvent e;
  e.tokens = {'o'};
  e.text = "o";
  e.logprobs = {o.logprobs[0]};
  auto c = chunk(ctx, e);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ((*c)["choices"][0]["delta"]["content"], "o");
  EXPECT_TRUE((*c)["usage"].is_null());
  EXPECT_EQ(roleChunk(ctx, 0)["choices"][0]["delta"]["role"], "assistant");
  auto u = usageChunk(ctx, result);
  EXPECT_TRUE(u["choices"].empty());
  EXPECT_EQ(u["usage"]["completion_tokens"], 2);
}

// tools and tool_choice as OpenAI defines them; what the server cannot
// honour yet (a reply forced to a tool call) is refused, not ignored.
TEST_F(OpenAiApi, ToolsAndToolChoiceAreChecked) {
  const std::string msg = R"("messages": [{"role": "user", "content": "hi"}])";
  const std::string tool =
      R"("tools": [{"type": "function", "function": {"name": "get_weather",
           "parameters": {"type": "object"}}}])";
  parseRequest(Endpoint::Chat, "{" + msg + ", " + tool + "}", model);
  parseRequest(Endpoint::Chat,
               "{" + msg + ", " + tool + R"(, "tool_choice": "auto",
                 "parallel_tool_calls": false})",
               model);
  parseRequest(Endpoint::Chat, "{" + msg + R"(, "tool_choice": "none"})",
               model);
  struct Case {
    std::string body, param, message;
  } cases[] = {
      {"{" + msg + R"(, "tools": []})", "tools", "must not be empty"},
      {"{" + msg + R"(, "tools": [{"type": "code"}]})", "tools[0].type",
       "must be \"function\""},
      {"{" + msg + R"(, "tools": [{"type": "function", "function": {}}]})",
       "tools[0].function.name", "must be a string"},
      {"{" + msg + R"(, "tool_choice": "auto"})", "tool_choice",
       "'tool_choice' needs 'tools'"},
      {"{" + msg + ", " + tool + R"(, "tool_choice": "sometimes"})",
       "tool_choice", "must be"},
      {"{" + msg + ", " + tool +
           R"(, "tool_choice": {"type": "function", "function": {"name": "nope"}}})",
       "tool_choice", "names function 'nope', which 'tools' does not define"},
      // This test template writes no tool calls.
      {"{" + msg + ", " + tool + R"(, "tool_choice": "required"})",
       "tool_choice", "writes no tool calls"},
      {"{" + msg + ", " + tool +
           R"(, "tool_choice": {"type": "function", "function": {"name": "get_weather"}}})",
       "tool_choice", "writes no tool calls"},
      {"{" + msg + ", " + tool + R"(, "parallel_tool_calls": 1})",
       "parallel_tool_calls", "must be true or false"},
      {"{" + msg +
           R"(, "tools": [{"type": "function", "function": {"name": "a b"}}]})",
       "tools[0].function.name", "letters, digits"},
      {"{" + msg +
           R"(, "tools": [{"type": "function", "function": {"name": "a"}},
                      {"type": "function", "function": {"name": "a"}}]})",
       "tools[1].function.name", "twice"},
      {"{" + msg +
           R"(, "tools": [{"type": "function", "function": {"name": "a", "parameters": 3}}]})",
       "tools[0].function.parameters", "a JSON Schema object"},
      {"{" + msg + R"(, "chat_template_kwargs": [1]})", "chat_template_kwargs",
       "an object"},
  };
  for (const Case &c : cases) {
    ApiError e = errorOf(Endpoint::Chat, c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_THAT(e.message, HasSubstr(c.message)) << c.body;
  }
}

// A real tool-calling template (Qwen2.5's) on bytes: the request is
// constrained, the reply split into content and calls, streamed alike.
class OpenAiApiTools : public OpenAiApi {
protected:
  std::string source = [] {
    std::ifstream in(std::string(LLMC_DATA_DIR) +
                     "/chat-templates/qwen2.5-instruct.jinja");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }();
  ChatTemplate qwen{source, "qwen2.5-instruct.jinja", tokenizer};
  grammar::GrammarCache grammars{
      std::make_shared<grammar::TokenVocabulary>(tokenizer, 256)};
  ModelInfo toolModel = [this] {
    ModelInfo m = model;
    m.chatTemplate = &qwen;
    m.contextLength = 4096;
    m.grammars = &grammars;
    return m;
  }();
  const std::string ask =
      R"({"messages": [{"role": "user", "content": "Weather?"}],
          "tools": [{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city":
              {"type": "string"}}, "required": ["city"]}}}])";
};

TEST_F(OpenAiApiTools, CallsParsedWholeAndStreamed) {
  ParsedRequest r = parseRequest(Endpoint::Chat, ask + "}", toolModel);
  ASSERT_TRUE(r.options.grammar); // auto: the lazy grammar
  EXPECT_TRUE(r.options.keepSpecialText);
  ASSERT_TRUE(r.markup.tools);
  r = parseRequest(Endpoint::Chat, ask + R"(, "tool_choice": "required"})",
                   toolModel);
  ASSERT_TRUE(r.options.grammar);
  const std::string reply =
      "Sure. <tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\": \"Paris\"}}\n</tool_call>";
  ResponseContext ctx{"chatcmpl-1", 100, &r, &toolModel, {}, {}};
  RequestResult result;
  SequenceOutput o;
  o.text = reply;
  o.finishReason = FinishReason::Eos;
  result.outputs = {o};
  auto full = response(ctx, result);
  const auto &msg = full["choices"][0]["message"];
  EXPECT_EQ(msg["content"], "Sure. ");
  ASSERT_EQ(msg["tool_calls"].size(), 1u);
  EXPECT_EQ(msg["tool_calls"][0]["type"], "function");
  EXPECT_EQ(msg["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(msg["tool_calls"][0]["function"]["arguments"],
            "{\"city\": \"Paris\"}");
  EXPECT_EQ(msg["tool_calls"][0]["id"].get<std::string>().substr(0, 5),
            "call_");
  EXPECT_EQ(full["choices"][0]["finish_reason"], "tool_calls");
  // Streamed in 5-byte pieces: the same content and arguments.
  std::string content, args, name;
  std::string finish;
  for (size_t i = 0; i < reply.size(); i += 5) {
    RequestEvent e;
    e.text = reply.substr(i, 5);
    if (i + 5 >= reply.size())
      e.finished = FinishReason::Eos;
    auto c = chunk(ctx, e);
    if (!c)
      continue;
    const auto &ch = (*c)["choices"][0];
    const auto &d = ch["delta"];
    if (d.contains("content"))
      content += d["content"].get<std::string>();
    if (d.contains("tool_calls")) {
      EXPECT_EQ(d["tool_calls"][0]["index"], 0);
      if (d["tool_calls"][0]["function"].contains("name"))
        name += d["tool_calls"][0]["function"]["name"].get<std::string>();
      args += d["tool_calls"][0]["function"]["arguments"].get<std::string>();
    }
    if (!ch["finish_reason"].is_null())
      finish = ch["finish_reason"];
  }
  EXPECT_EQ(content, "Sure. ");
  EXPECT_EQ(name, "get_weather");
  EXPECT_EQ(args, "{\"city\": \"Paris\"}");
  EXPECT_EQ(finish, "tool_calls");
}

// Other keys: allowed where the schema says nothing (JSON Schema); strict
// objects under OpenAI's strict mode, disable_additional_properties or the
// server's default.
TEST_F(OpenAiApiTools, StrictObjectsByRequestAndServer) {
  auto accepts = [&](const std::string &body, const ModelInfo &m,
                     const std::string &text) {
    ParsedRequest r = parseRequest(Endpoint::Completions, body, m);
    EXPECT_TRUE(r.options.grammar);
    grammar::Matcher matcher(r.options.grammar, {});
    for (unsigned char c : text)
      if (!matcher.accept(c))
        return false;
    return matcher.canEnd();
  };
  auto ask = [](const std::string &jsonSchemaExtra,
                const std::string &bodyExtra) {
    return R"({"prompt": "x", "response_format": {"type": "json_schema",
        "json_schema": {"name": "p", "schema": {"type": "object",
        "properties": {"a": {"type": "integer"}}})" +
           jsonSchemaExtra + "}}" + bodyExtra + "}";
  };
  const std::string extra = R"({"a":1,"b":2})", listed = R"({"a":1})";
  EXPECT_TRUE(accepts(ask("", ""), toolModel, extra));
  EXPECT_FALSE(accepts(ask(R"(, "strict": true)", ""), toolModel, extra));
  EXPECT_TRUE(accepts(ask(R"(, "strict": true)", ""), toolModel, listed));
  EXPECT_FALSE(accepts(ask("", R"(, "disable_additional_properties": true)"),
                       toolModel, extra));
  EXPECT_TRUE(accepts(
      ask(R"(, "strict": true)", R"(, "disable_additional_properties": false)"),
      toolModel, extra));
  ModelInfo strict = toolModel;
  strict.strictObjects = true;
  EXPECT_FALSE(accepts(ask("", ""), strict, extra));
  EXPECT_TRUE(accepts(ask("", R"(, "disable_additional_properties": false)"),
                      strict, extra));
  try {
    parseRequest(Endpoint::Completions,
                 ask("", R"(, "disable_additional_properties": 1)"), toolModel);
    ADD_FAILURE() << "a number accepted as disable_additional_properties";
  } catch (const ApiError &e) {
    EXPECT_EQ(e.param, "disable_additional_properties");
  }
  try {
    parseRequest(Endpoint::Chat, R"({"messages": [{"role": "user",
        "content": "x"}], "tools": [{"type": "function", "function":
        {"name": "f", "strict": "yes"}}]})",
                 toolModel);
    ADD_FAILURE() << "a string accepted as a tool's strict";
  } catch (const ApiError &e) {
    EXPECT_EQ(e.param, "tools[0].function.strict");
  }
}

TEST_F(OpenAiApiTools, WhatCannotBeHonouredIsA400) {
  auto err = [&](const std::string &body) {
    try {
      parseRequest(Endpoint::Chat, body, toolModel);
    } catch (const ApiError &x) {
      return x;
    }
    ADD_FAILURE() << "accepted: " << body;
    return ApiError(0, "");
  };
  ApiError x = err(R"({"messages": [{"role": "user", "content": "x"}],
      "tools": [{"type": "function", "function": {"name": "f", "parameters":
      {"type": "object", "properties": {"n": {"type": "integer", "not":
      {"const": 3}}}}}}], "tool_choice": "required"})");
  EXPECT_EQ(x.status, 400);
  EXPECT_EQ(x.param, "tools");
  EXPECT_THAT(x.message, HasSubstr("'not'"));
  x = err(ask + R"(, "response_format": {"type": "json_object"}})");
  EXPECT_EQ(x.param, "response_format");
  x = err(ask + R"(, "tool_choice": "required", "grammar": "root ::= \"a\""})");
  EXPECT_EQ(x.param, "grammar");
  // {"type": "text"}, $schema and strict from client helpers are fine.
  parseRequest(Endpoint::Chat,
               ask.substr(0, ask.size() - 4) +
                   R"(, "$schema": "http://json-schema.org/draft-07/schema#"},
                   "strict": true}}], "response_format": {"type": "text"}})",
               toolModel);
}

// /tokenize and /detokenize (vLLM's): a prompt or the chat template's
// rendering of messages, ids back to text, each bad field named.
TEST_F(OpenAiApi, TokenizeAndDetokenize) {
  auto t = tokenize(R"({"prompt": "hi!", "return_token_strs": true})", model);
  EXPECT_EQ(t["count"], 3);
  EXPECT_EQ(t["max_model_len"], 64);
  EXPECT_EQ(t["tokens"], nlohmann::json({'h', 'i', '!'}));
  EXPECT_EQ(t["token_strs"][2], "!");
  EXPECT_FALSE(tokenize(R"({"prompt": "x"})", model).contains("token_strs"));
  t = tokenize(R"({"messages": [{"role": "user", "content": "yo"}]})", model);
  std::vector<int32_t> want;
  for (char c : std::string("user:yo|A:"))
    want.push_back(c);
  EXPECT_EQ(t["tokens"], nlohmann::json(want));
  t = tokenize(R"({"messages": [{"role": "user", "content": "yo"}],
                   "add_generation_prompt": false})",
               model);
  EXPECT_EQ(t["count"], 8);
  EXPECT_EQ(
      detokenize(R"({"model": "tiny", "tokens": [104, 105]})", model)["prompt"],
      "hi");
  auto err = [&](bool encode, const std::string &body) {
    try {
      encode ? tokenize(body, model) : detokenize(body, model);
    } catch (const ApiError &e) {
      return e;
    }
    ADD_FAILURE() << "accepted: " << body;
    return ApiError(0, "");
  };
  EXPECT_EQ(err(true, "{").message, "the request body is not valid JSON");
  EXPECT_EQ(err(true, "{}").param, "prompt");
  EXPECT_EQ(err(true, R"({"prompt": 3})").param, "prompt");
  EXPECT_EQ(err(true, R"({"prompt": "a", "messages": []})").param, "prompt");
  EXPECT_EQ(err(true, R"({"messages": []})").param, "messages");
  EXPECT_EQ(err(true, R"({"prompt": "a", "model": "other"})").status, 404);
  EXPECT_EQ(err(false, "{}").param, "tokens");
  ApiError e = err(false, R"({"tokens": [104, 256]})");
  EXPECT_EQ(e.param, "tokens");
  EXPECT_THAT(e.message, HasSubstr("token id 256 is outside the vocabulary"));
  EXPECT_EQ(err(false, R"({"tokens": "hi"})").param, "tokens");
  EXPECT_EQ(err(false, R"({"tokens": [1.5]})").param, "tokens");
}

// gpt-oss: the analysis channel is reasoning_content, the final one content,
// whole and streamed (the tokenizer fixture's vocabulary is cut: the texts
// are compared as it round-trips them). The template's <|end|> does not end
// the turn; <|return|> does.
TEST(OpenAiApiHarmony, ChannelsSplitIntoReasoningAndContent) {
  std::unique_ptr<tok::Tokenizer> t = tok::loadTokenizer(
      std::string(LLMC_DATA_DIR) + "/tokenizers/gpt-oss/tokenizer.json");
  ChatTemplate chat("{% for m in messages %}<|start|>{{ m.role }}<|message|>"
                    "{{ m.content }}<|end|>{% endfor %}<|start|>assistant"
                    "<|channel|>",
                    "harmony-like template", *t);
  ModelInfo model;
  model.name = "gpt-oss";
  model.contextLength = 256;
  model.vocabSize = t->vocabSize();
  model.eosIds = {*t->tokenId("<|return|>")};
  model.chatEosIds = chat.eosIds(model.eosIds);
  EXPECT_EQ(model.chatEosIds, model.eosIds) << "<|end|> must not end a turn";
  model.tokenizer = t.get();
  model.chatTemplate = &chat;
  model.harmony = text::HarmonyReply::markersOf(*t);
  ASSERT_TRUE(model.harmony);
  ParsedRequest r = parseRequest(
      Endpoint::Chat, R"({"messages": [{"role": "user", "content": "hi"}]})",
      model);
  ResponseContext ctx{"chatcmpl-1", 100, &r, &model, {}, {}};
  auto rt = [&](const std::string &s) { return t->decode(t->encode(s)); };
  const std::vector<int32_t> ids = t->encode(
      "<|channel|>analysis<|message|>they said hi.<|end|><|start|>assistant"
      "<|channel|>final<|message|>hello there!<|return|>");
  RequestResult result;
  SequenceOutput o;
  o.outputIds = ids;
  o.text = t->decode(ids, true);
  o.finishReason = FinishReason::Eos;
  result.outputs = {o};
  auto full = response(ctx, result);
  EXPECT_EQ(full["choices"][0]["message"]["reasoning_content"],
            rt("they said hi."));
  EXPECT_EQ(full["choices"][0]["message"]["content"], rt("hello there!"));
  std::string reasoning, content;
  for (size_t i = 0; i < ids.size(); ++i) {
    RequestEvent e;
    e.tokens = {ids[i]};
    e.text = t->decode({ids[i]}, true);
    if (i + 1 == ids.size())
      e.finished = FinishReason::Eos;
    if (auto c = chunk(ctx, e)) {
      const auto &delta = (*c)["choices"][0]["delta"];
      if (delta.contains("reasoning_content"))
        reasoning += delta["reasoning_content"].get<std::string>();
      if (delta.contains("content"))
        content += delta["content"].get<std::string>();
    }
  }
  EXPECT_EQ(reasoning, rt("they said hi."));
  EXPECT_EQ(content, rt("hello there!"));

  // Tool calls: required is constrained (harmony's markers in the
  // grammar's vocabulary), a recipient's message is a call.
  grammar::GrammarCache grammars(std::make_shared<grammar::TokenVocabulary>(
      *t, t->vocabSize(), text::HarmonyReply::markerTexts()));
  model.grammars = &grammars;
  r = parseRequest(Endpoint::Chat,
                   R"({"messages": [{"role": "user", "content": "hi"}],
                       "tools": [{"type": "function", "function": {"name":
                       "get_weather"}}], "tool_choice": "required"})",
                   model);
  ASSERT_TRUE(r.options.grammar);
  grammar::Matcher m(r.options.grammar, {});
  for (int32_t id : t->encode("<|channel|>commentary to=functions.get_weather "
                              "<|constrain|>json<|message|>{}"))
    EXPECT_TRUE(m.accept(id)) << t->tokenText(id);
  EXPECT_TRUE(m.canEnd());
  o.outputIds = t->encode("<|channel|>commentary to=functions.get_weather "
                          "json<|message|>{}<|end|>");
  result.outputs = {o};
  full = response(ctx, result);
  const auto &calls = full["choices"][0]["message"]["tool_calls"];
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]["function"]["name"], "get_weather");
  EXPECT_EQ(calls[0]["function"]["arguments"], "{}");
  EXPECT_EQ(full["choices"][0]["finish_reason"], "tool_calls");
}

} // namespace
} // namespace llmc::api
