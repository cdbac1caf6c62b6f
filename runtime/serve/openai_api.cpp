//===- openai_api.cpp - OpenAI request and response bodies ----------------===//
#include "llmc/runtime/openai_api.h"

#include "llmc/grammar/response_format.h"
#include "llmc/runtime/tool_grammar.h"

#include "llmc/support/error.h"
#include "llmc/support/utf8.h"
#include "llmc/template/jinja.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace llmc::api {

using json = nlohmann::ordered_json;

std::string ApiError::body() const {
  json e = {{"message", message},
            {"type", type},
            {"param", param.empty() ? json(nullptr) : json(param)},
            {"code", code.empty() ? json(nullptr) : json(code)}};
  return json{{"error", e}}.dump(-1, ' ', false,
                                 json::error_handler_t::replace);
}

const char *openaiFinishReason(FinishReason reason) {
  switch (reason) {
  case FinishReason::Eos:
  case FinishReason::Stop:
    return "stop";
  case FinishReason::Length:
  case FinishReason::Context:
    return "length";
  case FinishReason::Abort:
    return "abort";
  case FinishReason::None:
    break;
  }
  return "";
}

namespace {

/// A value for messages: short, one line, valid UTF-8.
std::string show(const json &v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 80)
    s = s.substr(0, 77) + "...";
  return s;
}

[[noreturn]] void badField(const std::string &field, const std::string &what,
                           const json &v) {
  throw ApiError(400, "'" + field + "' must be " + what + ", got " + show(v),
                 field);
}

bool has(const json &body, const char *field) {
  return body.contains(field) && !body[field].is_null();
}

double number(const json &body, const char *field, double fallback) {
  if (!has(body, field))
    return fallback;
  const json &v = body[field];
  if (!v.is_number())
    badField(field, "a number", v);
  double d = v.get<double>();
  if (!std::isfinite(d) || std::fabs(d) > 1e30)
    badField(field, "a finite number", v);
  return d;
}

int64_t integer(const json &body, const char *field, int64_t fallback,
                int64_t lo, int64_t hi) {
  if (!has(body, field))
    return fallback;
  const json &v = body[field];
  if (!v.is_number_integer())
    badField(field, "an integer", v);
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    badField(field,
             "an integer in [" + std::to_string(lo) + ", " +
                 std::to_string(hi) + "]",
             v);
  int64_t i = v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>())
                                     : v.get<int64_t>();
  if (i < lo || i > hi)
    badField(field,
             "an integer in [" + std::to_string(lo) + ", " +
                 std::to_string(hi) + "]",
             v);
  return i;
}

bool boolean(const json &body, const char *field, bool fallback) {
  if (!has(body, field))
    return fallback;
  const json &v = body[field];
  if (!v.is_boolean())
    badField(field, "true or false", v);
  return v.get<bool>();
}

/// The text of a message's content: a string, or a list of text parts.
std::string contentText(const json &content, size_t index) {
  const std::string field = "messages[" + std::to_string(index) + "].content";
  if (content.is_string())
    return content.get<std::string>();
  if (content.is_null())
    return "";
  if (!content.is_array())
    badField(field, "a string or a list of text parts", content);
  std::string text;
  for (const json &part : content) {
    if (part.is_object() && part.contains("type") &&
        (part["type"] == "image_url" || part["type"] == "image" ||
         part["type"] == "input_image" || part["type"] == "input_audio"))
      throw ApiError(400,
                     "'" + field + "': " + part["type"].get<std::string>() +
                         " parts are not supported: llmc runs the text part "
                         "of a model (send text parts only)",
                     field);
    if (!part.is_object() || !part.contains("type") || part["type"] != "text" ||
        !part.contains("text") || !part["text"].is_string())
      throw ApiError(400,
                     "'" + field +
                         "': only parts {\"type\": \"text\", \"text\": ...} "
                         "are supported, got " +
                         show(part),
                     field);
    text += part["text"].get<std::string>();
  }
  return text;
}

json checkedMessages(const json &body) {
  if (!body.contains("messages"))
    throw ApiError(400, "'messages' is required", "messages");
  const json &messages = body["messages"];
  if (!messages.is_array())
    badField("messages", "a list of messages", messages);
  if (messages.empty())
    throw ApiError(400, "'messages' must not be empty", "messages");
  json out = json::array();
  for (size_t i = 0; i < messages.size(); ++i) {
    const json &m = messages[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object())
      badField(where, "an object with 'role' and 'content'", m);
    if (!m.contains("role") || !m["role"].is_string())
      throw ApiError(400, "'" + where + ".role' must be a string",
                     where + ".role");
    json copy = m;
    if (m.contains("content"))
      copy["content"] = contentText(m["content"], i);
    else if (m["role"] != "assistant")
      throw ApiError(400, "'" + where + ".content' is required",
                     where + ".content");
    out.push_back(std::move(copy));
  }
  return out;
}

std::vector<std::string> stops(const json &body) {
  std::vector<std::string> out;
  if (!has(body, "stop"))
    return out;
  const json &v = body["stop"];
  if (v.is_string()) {
    out.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    for (const json &s : v) {
      if (!s.is_string())
        badField("stop", "a string or a list of strings", v);
      out.push_back(s.get<std::string>());
    }
  } else {
    badField("stop", "a string or a list of strings", v);
  }
  if (out.size() > 16)
    throw ApiError(400,
                   "'stop' may hold at most 16 strings, got " +
                       std::to_string(out.size()),
                   "stop");
  for (const std::string &s : out)
    if (s.empty() || (static_cast<unsigned char>(s[0]) & 0xC0) == 0x80)
      throw ApiError(
          400, "'stop' strings must be non-empty text, got " + show(json(s)),
          "stop");
  return out;
}

/// A list of token ids in the vocabulary, or a 400 naming `field`.
std::vector<int32_t> tokenIds(const json &p, const char *field,
                              const ModelInfo &m) {
  if (!p.is_array())
    badField(field, "a list of token ids", p);
  std::vector<int32_t> ids;
  for (const json &id : p) {
    if (!id.is_number_integer())
      throw ApiError(400,
                     "'" + std::string(field) +
                         "' must be a string or a list of token ids "
                         "(one prompt per request), got " +
                         show(p),
                     field);
    int64_t v = id.is_number_unsigned()
                    ? static_cast<int64_t>(std::min<uint64_t>(
                          id.get<uint64_t>(), uint64_t(INT64_MAX)))
                    : id.get<int64_t>();
    if (v < 0 || v >= m.vocabSize)
      throw ApiError(400,
                     "'" + std::string(field) + "' token id " +
                         std::to_string(v) + " is outside the vocabulary [0, " +
                         std::to_string(m.vocabSize) + ")",
                     field);
    ids.push_back(static_cast<int32_t>(v));
  }
  return ids;
}

std::vector<int32_t> completionPrompt(const json &body, const ModelInfo &m,
                                      std::string &text) {
  if (!body.contains("prompt"))
    throw ApiError(400, "'prompt' is required", "prompt");
  json p = body["prompt"];
  // A list of one prompt is that prompt.
  if (p.is_array() && p.size() == 1 && (p[0].is_string() || p[0].is_array()))
    p = json(p[0]);
  if (p.is_string()) {
    text = p.get<std::string>();
    if (!m.tokenizer)
      throw ApiError(400,
                     "this model has no tokenizer: send 'prompt' as "
                     "token ids",
                     "prompt");
    return m.tokenizer->encode(text, /*addSpecial=*/true);
  }
  if (p.is_array()) {
    std::vector<int32_t> ids = tokenIds(p, "prompt", m);
    if (m.tokenizer)
      text = m.tokenizer->decode(ids);
    return ids;
  }
  badField("prompt", "a string or a list of token ids", p);
}

/// How schemas are read: `disable_additional_properties` (vLLM's name), else
/// strict objects under OpenAI's `strict: true` or the server's default.
grammar::JsonSchemaOptions schemaOptions(const json &body, const ModelInfo &m,
                                         bool strict) {
  return {.strictObjects = boolean(body, "disable_additional_properties",
                                   strict || m.strictObjects)};
}

/// The grammar of response_format or grammar; null for free text. With
/// `reasoning` (the template has a reasoning block) the constraint applies
/// after it.
std::shared_ptr<const grammar::CompiledGrammar>
structuredOutput(const json &body, const ModelInfo &m,
                 const ReplyMarkup *reasoning) {
  const bool format = has(body, "response_format"), gbnf = has(body, "grammar");
  if (!format && !gbnf)
    return nullptr;
  const char *field = format ? "response_format" : "grammar";
  if (format && gbnf)
    throw ApiError(400, "give 'response_format' or 'grammar', not both",
                   "grammar");
  std::optional<grammar::GrammarSource> source;
  try {
    if (format) {
      source = grammar::parseResponseFormat(body["response_format"]);
    } else {
      if (!body["grammar"].is_string())
        badField("grammar", "GBNF text", body["grammar"]);
      source =
          grammar::GrammarSource{grammar::SourceKind::Gbnf,
                                 body["grammar"].get<std::string>(), "grammar"};
    }
    if (!source)
      return nullptr;
    if (!m.grammars)
      throw ApiError(400,
                     std::string("'") + field +
                         "' needs a tokenizer, and this model has none",
                     field);
    const grammar::JsonSchemaOptions options =
        schemaOptions(body, m, source->strict);
    if (!reasoning)
      return m.grammars->get(source->kind, source->text, source->origin,
                             options);
    const std::string key =
        "answer:" + std::to_string(reasoning->startsInReasoning) +
        std::to_string(options.strictObjects) +
        std::to_string(static_cast<int>(source->kind)) + ":" + source->text;
    return m.grammars->get(key, [&] {
      grammar::Grammar answer = grammar::grammarOf(source->kind, source->text,
                                                   source->origin, options);
      return replyGrammar(*reasoning, nullptr, &answer);
    });
  } catch (const Error &e) {
    throw ApiError(400, e.what(), field);
  }
}

/// A request body: a JSON object, or a 400.
json parseBody(const std::string &text) {
  json body = json::parse(text, nullptr, false);
  if (body.is_discarded())
    throw ApiError(400, "the request body is not valid JSON");
  if (!body.is_object())
    throw ApiError(400,
                   "the request body must be a JSON object, got " + show(body));
  return body;
}

/// The body's `model`, checked to be this server's (404 otherwise).
std::string checkedModel(const json &body, const ModelInfo &m) {
  if (!has(body, "model"))
    return m.name;
  if (!body["model"].is_string())
    badField("model", "a string", body["model"]);
  std::string name = body["model"].get<std::string>();
  if (name != m.name)
    throw ApiError(404,
                   "The model '" + name +
                       "' does not exist (this "
                       "server serves '" +
                       m.name + "')",
                   "model", "invalid_request_error", "model_not_found");
  return name;
}

bool validToolName(const std::string &name) {
  if (name.empty() || name.size() > 64)
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

/// `tools` (OpenAI's: a non-empty list of {"type": "function", "function":
/// {"name", "description", "parameters", "strict"}}), `tool_choice` and
/// `parallel_tool_calls`, checked; null when no call may be made (no tools,
/// or tool_choice "none").
std::optional<ToolRequest> checkTools(const json &body) {
  ToolRequest req;
  if (has(body, "tools")) {
    const json &tools = body["tools"];
    if (!tools.is_array())
      badField("tools", "a list", tools);
    if (tools.empty())
      throw ApiError(400, "'tools' must not be empty (leave it out instead)",
                     "tools");
    for (size_t i = 0; i < tools.size(); ++i) {
      const json &t = tools[i];
      const std::string where = "tools[" + std::to_string(i) + "]";
      if (!t.is_object() || !t.contains("type") || t["type"] != "function")
        throw ApiError(400, "'" + where + ".type' must be \"function\"",
                       where + ".type");
      if (!t.contains("function") || !t["function"].is_object() ||
          !t["function"].contains("name") || !t["function"]["name"].is_string())
        throw ApiError(400, "'" + where + ".function.name' must be a string",
                       where + ".function.name");
      const json &fn = t["function"];
      ToolSpec spec;
      spec.name = fn["name"].get<std::string>();
      if (!validToolName(spec.name))
        throw ApiError(400,
                       "'" + where +
                           ".function.name' must be 1 to 64 letters, digits, "
                           "'_', '-' or '.', got " +
                           show(fn["name"]),
                       where + ".function.name");
      for (const ToolSpec &other : req.tools)
        if (other.name == spec.name)
          throw ApiError(400,
                         "'tools' defines function '" + spec.name + "' twice",
                         where + ".function.name");
      if (has(fn, "parameters")) {
        if (!fn["parameters"].is_object())
          badField(where + ".function.parameters", "a JSON Schema object",
                   fn["parameters"]);
        grammar::checkNesting(fn["parameters"], where + ".function.parameters");
        spec.parameters = fn["parameters"].dump();
      }
      if (has(fn, "strict")) {
        if (!fn["strict"].is_boolean())
          badField(where + ".function.strict", "true or false", fn["strict"]);
        spec.strict = fn["strict"].get<bool>();
      }
      req.tools.push_back(std::move(spec));
    }
  }
  req.parallel = boolean(body, "parallel_tool_calls", true);
  std::string named;
  if (has(body, "tool_choice")) {
    const json &choice = body["tool_choice"];
    if (choice.is_object()) {
      if (!choice.contains("function") || !choice["function"].is_object() ||
          !choice["function"].contains("name") ||
          !choice["function"]["name"].is_string())
        badField("tool_choice",
                 "\"none\", \"auto\", \"required\" or {\"type\": "
                 "\"function\", \"function\": {\"name\": ...}}",
                 choice);
      named = choice["function"]["name"].get<std::string>();
    } else if (!choice.is_string() ||
               (choice != "none" && choice != "auto" && choice != "required")) {
      badField("tool_choice",
               "\"none\", \"auto\", \"required\" or a named function", choice);
    }
    if (choice == "none")
      return std::nullopt;
    if (req.tools.empty())
      throw ApiError(400, "'tool_choice' needs 'tools'", "tool_choice");
    if (choice == "required")
      req.choice = ToolRequest::Choice::Required;
  }
  if (req.tools.empty())
    return std::nullopt;
  if (!named.empty()) {
    auto it = std::find_if(req.tools.begin(), req.tools.end(),
                           [&](const ToolSpec &t) { return t.name == named; });
    if (it == req.tools.end())
      throw ApiError(400,
                     "'tool_choice' names function '" + named +
                         "', which 'tools' does not define",
                     "tool_choice");
    req.tools = {*it};
    req.choice = ToolRequest::Choice::Required;
    req.parallel = false;
  }
  return req;
}

/// chat_template_kwargs and enable_thinking, for the template.
json templateKwargs(const json &body) {
  json kwargs = json::object();
  if (has(body, "chat_template_kwargs")) {
    if (!body["chat_template_kwargs"].is_object())
      badField("chat_template_kwargs", "an object",
               body["chat_template_kwargs"]);
    kwargs = body["chat_template_kwargs"];
  }
  if (has(body, "enable_thinking"))
    kwargs["enable_thinking"] = boolean(body, "enable_thinking", true);
  return kwargs;
}

/// The chat template's rendering of the body's messages (tools and
/// documents too). `text` is the raw body: the template sees integers
/// beyond 64 bits digit for digit, as Python's json.loads gives them.
std::string renderedChat(const std::string &text, const json &body,
                         const ModelInfo &m, bool addGenerationPrompt) {
  if (!m.chatTemplate)
    throw ApiError(400,
                   "this model has no chat template (start the server "
                   "with --chat-template FILE)",
                   "messages");
  json reparsed;
  const json &ctx = tmpl::mayHoldBigIntegers(text)
                        ? (reparsed = tmpl::parseContextJson(text))
                        : body;
  json messages =
      historyForTemplate(checkedMessages(ctx), m.chatTemplate->format().tools);
  json tools = has(ctx, "tools") ? ctx["tools"] : json(nullptr);
  json documents = has(ctx, "documents") ? ctx["documents"] : json(nullptr);
  if (!tools.is_null() && !tools.is_array())
    badField("tools", "a list", tools);
  if (!documents.is_null() && !documents.is_array())
    badField("documents", "a list", documents);
  try {
    return m.chatTemplate->render(messages, tools, documents,
                                  addGenerationPrompt, templateKwargs(ctx));
  } catch (const Error &e) {
    throw ApiError(400, e.what(), "messages");
  }
}

} // namespace

json tokenize(const std::string &text, const ModelInfo &m) {
  json body = parseBody(text);
  checkedModel(body, m);
  if (!m.tokenizer)
    throw ApiError(400, "this model has no tokenizer");
  std::vector<int32_t> ids;
  if (has(body, "messages")) {
    if (has(body, "prompt"))
      throw ApiError(400, "give either 'prompt' or 'messages', not both",
                     "prompt");
    ids = m.tokenizer->encode(
        renderedChat(text, body, m,
                     boolean(body, "add_generation_prompt", true)),
        /*addSpecial=*/false);
  } else {
    if (!has(body, "prompt"))
      throw ApiError(400, "'prompt' (or 'messages') is required", "prompt");
    if (!body["prompt"].is_string())
      badField("prompt", "a string", body["prompt"]);
    ids = m.tokenizer->encode(body["prompt"].get<std::string>(),
                              boolean(body, "add_special_tokens", true));
  }
  json out = {{"count", ids.size()},
              {"max_model_len", m.contextLength},
              {"tokens", ids}};
  if (boolean(body, "return_token_strs", false)) {
    json strs = json::array();
    for (int32_t id : ids)
      strs.push_back(m.tokenizer->tokenText(id));
    out["token_strs"] = std::move(strs);
  }
  return out;
}

json detokenize(const std::string &text, const ModelInfo &m) {
  json body = parseBody(text);
  checkedModel(body, m);
  if (!m.tokenizer)
    throw ApiError(400, "this model has no tokenizer");
  if (!has(body, "tokens"))
    throw ApiError(400, "'tokens' is required", "tokens");
  return {
      {"prompt", m.tokenizer->decode(tokenIds(body["tokens"], "tokens", m))}};
}

ParsedRequest parseRequest(Endpoint endpoint, const std::string &text,
                           const ModelInfo &m) {
  json body = parseBody(text);
  ParsedRequest r;
  r.endpoint = endpoint;
  r.model = checkedModel(body, m);

  RequestOptions &o = r.options;
  sample::SamplingParams &p = o.sampling;
  p.temperature = static_cast<float>(number(body, "temperature", 1.0));
  p.topP = static_cast<float>(number(body, "top_p", 1.0));
  int64_t topK = integer(body, "top_k", 0, -1, INT32_MAX);
  p.topK = topK < 0 ? 0 : static_cast<int>(topK); // -1 is "off" (vLLM)
  p.minP = static_cast<float>(number(body, "min_p", 0.0));
  p.presencePenalty = static_cast<float>(number(body, "presence_penalty", 0.0));
  p.frequencyPenalty =
      static_cast<float>(number(body, "frequency_penalty", 0.0));
  p.repetitionPenalty =
      static_cast<float>(number(body, "repetition_penalty", 1.0));
  p.seed =
      static_cast<uint64_t>(integer(body, "seed", 0, INT64_MIN, INT64_MAX));
  try {
    p.validate(sample::ParamNames::Json);
  } catch (const Error &e) {
    std::string msg = e.what();
    throw ApiError(400, msg, msg.substr(0, msg.find(' ')));
  }
  o.stops = stops(body);
  r.n = static_cast<int32_t>(integer(body, "n", 1, 1, m.maxNumSeqs));
  r.stream = boolean(body, "stream", false);
  if (has(body, "stream_options")) {
    const json &so = body["stream_options"];
    if (!so.is_object())
      badField("stream_options", "an object", so);
    if (!r.stream)
      throw ApiError(400,
                     "'stream_options' is only allowed with 'stream': "
                     "true",
                     "stream_options");
    r.includeUsage = boolean(so, "include_usage", false);
  }
  const bool ignoreEos = boolean(body, "ignore_eos", false);
  r.speculative = boolean(body, "speculative", true);

  std::optional<ToolRequest> tools;
  ReplyMarkup constrained; // what a tools grammar writes
  if (endpoint == Endpoint::Chat) {
    tools = checkTools(body);
    const std::string rendered = renderedChat(text, body, m, true);
    r.prompt = m.tokenizer->encode(rendered, /*addSpecial=*/false);
    if (!m.harmony) {
      r.markup =
          replyMarkup(m.chatTemplate->format(), rendered, tools.has_value());
      r.idLength = r.markup.tools ? r.markup.tools->idLength : 0;
      r.splitReply = r.markup.reasoning || r.markup.tools;
      o.keepSpecialText = r.splitReply;
    }
    // Harmony replies are read by HarmonyReply; their grammar is built
    // from its description of a call.
    constrained = r.markup;
    if (m.harmony && tools) {
      constrained.tools = &text::HarmonyReply::callFormat();
      constrained.reasoning = text::HarmonyReply::analysisMarkers();
    }
    if (tools && tools->choice == ToolRequest::Choice::Required &&
        !constrained.tools)
      throw ApiError(400,
                     "'tool_choice' required or named: this model's chat "
                     "template writes no tool calls llmc recognises",
                     "tool_choice");
    // llmc's `grammar` may steer a reply with tool_choice auto: it then
    // constrains the whole reply, which is read for calls as usual.
    // {"type": "text"} (the Agents SDK sends it) asks for nothing.
    const bool format =
        has(body, "response_format") &&
        !(body["response_format"].is_object() &&
          body["response_format"].value("type", json()) == "text");
    if (constrained.tools && format)
      throw ApiError(400,
                     "give 'tools' or a 'response_format', not both (or "
                     "tool_choice \"none\")",
                     "response_format");
    if (constrained.tools && has(body, "grammar") &&
        tools->choice != ToolRequest::Choice::Auto)
      throw ApiError(400, "'grammar' with 'tools' needs tool_choice \"auto\"",
                     "grammar");
    if (boolean(body, "logprobs", false))
      r.logprobs =
          static_cast<int32_t>(integer(body, "top_logprobs", 0, 0, 20));
    else if (has(body, "top_logprobs"))
      throw ApiError(400, "'top_logprobs' needs 'logprobs': true",
                     "top_logprobs");
    if (!ignoreEos)
      o.eosIds = m.chatEosIds;
  } else {
    r.prompt = completionPrompt(body, m, r.promptText);
    r.logprobs = static_cast<int32_t>(integer(body, "logprobs", -1, 0, 20));
    r.echo = boolean(body, "echo", false);
    if (r.echo && r.logprobs >= 0)
      throw ApiError(400,
                     "'echo' together with 'logprobs' is not supported "
                     "(prompt log-probabilities are not computed)",
                     "echo");
    if (!ignoreEos)
      o.eosIds = m.eosIds;
  }
  if (r.prompt.empty())
    throw ApiError(400, "the prompt is empty",
                   endpoint == Endpoint::Chat ? "messages" : "prompt");
  o.logprobs = r.logprobs;

  const int64_t P = static_cast<int64_t>(r.prompt.size());
  const char *maxField = has(body, "max_completion_tokens")
                             ? "max_completion_tokens"
                             : "max_tokens";
  const int64_t limit = std::numeric_limits<int32_t>::max();
  int64_t maxTokens = integer(body, maxField, -1, 1, limit);
  const char *what = endpoint == Endpoint::Chat ? "messages" : "prompt";
  if (P >= m.contextLength ||
      (maxTokens > 0 && P + maxTokens > m.contextLength))
    throw ApiError(400,
                   "This model's maximum context length is " +
                       std::to_string(m.contextLength) +
                       " tokens. However, you "
                       "requested " +
                       std::to_string(P + std::max<int64_t>(maxTokens, 0)) +
                       " tokens (" + std::to_string(P) + " in the " + what +
                       ", " + std::to_string(std::max<int64_t>(maxTokens, 0)) +
                       " in the completion). Please reduce the length of the " +
                       what + " or completion.",
                   maxTokens > 0 ? maxField : what, "invalid_request_error",
                   "context_length_exceeded");
  o.maxNewTokens = maxTokens > 0 ? maxTokens : m.contextLength - P;
  o.grammar = structuredOutput(
      body, m,
      r.markup.reasoning && !has(body, "grammar") ? &r.markup : nullptr);
  if (constrained.tools && !o.grammar) {
    if (!m.grammars)
      throw ApiError(400, "'tools' need a tokenizer, and this model has none",
                     "tools");
    json key = {constrained.startsInReasoning,
                constrained.reasoning.has_value(),
                tools->choice == ToolRequest::Choice::Auto, tools->parallel};
    for (ToolSpec &t : tools->tools) {
      t.strict = schemaOptions(body, m, t.strict).strictObjects;
      key.push_back({t.name, t.parameters, t.strict});
    }
    try {
      o.grammar = m.grammars->get("tools:" + key.dump(), [&] {
        return replyGrammar(constrained, &*tools, nullptr);
      });
    } catch (const Error &e) {
      throw ApiError(400, e.what(), "tools");
    }
  }
  return r;
}

namespace {

json bytesOf(const std::string &s) {
  json a = json::array();
  for (unsigned char c : s)
    a.push_back(c);
  return a;
}

std::string tokenString(const ModelInfo &m, int32_t id) {
  return m.tokenizer ? utf8::sanitizeUtf8(m.tokenizer->tokenBytes(id))
                     : std::to_string(id);
}

json chatLogprobs(const ModelInfo &m, const std::vector<TokenLogprobs> &lps) {
  json content = json::array();
  for (const TokenLogprobs &t : lps) {
    json top = json::array();
    for (const auto &[id, lp] : t.top) {
      std::string s = m.tokenizer ? m.tokenizer->tokenBytes(id) : "";
      top.push_back({{"token", tokenString(m, id)},
                     {"logprob", lp},
                     {"bytes", bytesOf(s)}});
    }
    std::string s = m.tokenizer ? m.tokenizer->tokenBytes(t.token) : "";
    content.push_back({{"token", tokenString(m, t.token)},
                       {"logprob", t.logprob},
                       {"bytes", bytesOf(s)},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
}

json completionLogprobs(const ModelInfo &m,
                        const std::vector<TokenLogprobs> &lps, int64_t offset) {
  json tokens = json::array(), values = json::array(), top = json::array(),
       offsets = json::array();
  for (const TokenLogprobs &t : lps) {
    std::string s = tokenString(m, t.token);
    tokens.push_back(s);
    values.push_back(t.logprob);
    json alt = json::object();
    for (const auto &[id, lp] : t.top)
      alt[tokenString(m, id)] = lp;
    top.push_back(alt);
    offsets.push_back(offset);
    offset += static_cast<int64_t>(s.size());
  }
  return {{"tokens", tokens},
          {"token_logprobs", values},
          {"top_logprobs", top},
          {"text_offset", offsets}};
}

json usage(const RequestResult &r) {
  int64_t completion = 0;
  for (const SequenceOutput &o : r.outputs)
    completion += static_cast<int64_t>(o.outputIds.size());
  const int64_t prompt = r.metrics.promptTokens;
  return {{"prompt_tokens", prompt},
          {"completion_tokens", completion},
          {"total_tokens", prompt + completion},
          {"prompt_tokens_details", {{"cached_tokens", r.cachedPromptTokens}}}};
}

json header(const ResponseContext &ctx, const char *object) {
  return {{"id", ctx.id},
          {"object", object},
          {"created", ctx.created},
          {"model", ctx.request->model}};
}

} // namespace

std::string newToolCallId(int length) {
  static const char kAlnum[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id = length > 0 ? "" : "call_";
  for (int i = 0; i < (length > 0 ? length : 24); ++i)
    id += kAlnum[rng() % (sizeof kAlnum - 1)];
  return id;
}

namespace {

/// `text` under the reasoning field(s) the server writes.
void putReasoning(json &message, const ModelInfo &m, const json &text) {
  if (m.reasoningField != ModelInfo::ReasoningField::Reasoning)
    message["reasoning_content"] = text;
  if (m.reasoningField != ModelInfo::ReasoningField::Content)
    message["reasoning"] = text;
}

json toolCallJson(const text::ToolCall &c) {
  return {{"id", c.id},
          {"type", "function"},
          {"function", {{"name", c.name}, {"arguments", c.arguments}}}};
}

std::function<std::string()> idMaker(const ParsedRequest &r) {
  return [n = r.idLength] { return newToolCallId(n); };
}

/// "tool_calls" for a reply that made calls and ended by itself.
std::string finishReason(FinishReason reason, bool calls) {
  if (calls && (reason == FinishReason::Eos || reason == FinishReason::Stop))
    return "tool_calls";
  return openaiFinishReason(reason);
}

} // namespace

/// A chat message's fields: {content}; for a harmony model or a template
/// with reasoning and tool-call markup, the reply split into
/// reasoning_content, content and tool_calls.
json chatMessage(const ResponseContext &ctx, const SequenceOutput &o) {
  const ParsedRequest &r = *ctx.request;
  json message = {{"role", "assistant"}};
  const bool harmony = ctx.model->harmony.has_value();
  if (!harmony && !r.splitReply) {
    message["content"] = o.text;
    return message;
  }
  const text::ReplyParser::Whole w =
      harmony ? text::HarmonyReply::split(*ctx.model->tokenizer,
                                          *ctx.model->harmony, o.outputIds,
                                          idMaker(r))
              : text::ReplyParser::parse(r.markup.tools, r.markup.reasoning,
                                         r.markup.startsInReasoning, o.text,
                                         idMaker(r));
  message["content"] =
      w.content.empty() && !w.calls.empty() ? json(nullptr) : json(w.content);
  if (harmony)
    putReasoning(message, *ctx.model, w.reasoning);
  else if (r.markup.reasoning)
    putReasoning(message, *ctx.model,
                 w.reasoning.empty() ? json(nullptr) : json(w.reasoning));
  if (!w.calls.empty()) {
    json calls = json::array();
    for (const text::ToolCall &c : w.calls)
      calls.push_back(toolCallJson(c));
    message["tool_calls"] = std::move(calls);
  }
  return message;
}

json response(const ResponseContext &ctx, const RequestResult &result) {
  const ParsedRequest &r = *ctx.request;
  const bool chat = r.endpoint == Endpoint::Chat;
  json out = header(ctx, chat ? "chat.completion" : "text_completion");
  json choices = json::array();
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const SequenceOutput &o = result.outputs[i];
    json c = {{"index", i}};
    if (chat) {
      c["message"] = chatMessage(ctx, o);
      c["logprobs"] = r.logprobs >= 0 ? chatLogprobs(*ctx.model, o.logprobs)
                                      : json(nullptr);
    } else {
      c["text"] = r.echo ? r.promptText + o.text : o.text;
      c["logprobs"] = r.logprobs >= 0
                          ? completionLogprobs(*ctx.model, o.logprobs, 0)
                          : json(nullptr);
    }
    c["finish_reason"] = finishReason(
        o.finishReason, chat && c["message"].contains("tool_calls"));
    choices.push_back(std::move(c));
  }
  out["choices"] = std::move(choices);
  out["usage"] = usage(result);
  return out;
}

/// A streamed chat delta: {content}, or the new part of each field of a
/// split reply (harmony, reasoning, tool calls).
namespace {

/// A streamed reply's delta for new input, and at its end what was held
/// back (a call's last arguments joined to its delta).
template <class Reply, class Input>
auto replyDelta(Reply &reply, const Input &input, bool finished) {
  auto d = reply.push(input);
  if (!finished)
    return d;
  auto tail = reply.finish();
  d.reasoning += tail.reasoning;
  d.content += tail.content;
  for (auto &c : tail.calls) {
    if (!d.calls.empty() && d.calls.back().index == c.index && c.name.empty())
      d.calls.back().arguments += c.arguments;
    else
      d.calls.push_back(std::move(c));
  }
  return d;
}

} // namespace

json chatDelta(const ResponseContext &ctx, const RequestEvent &e) {
  const ParsedRequest &r = *ctx.request;
  const bool finished = e.finished != FinishReason::None;
  std::string reasoning, content;
  std::vector<text::ReplyParser::CallDelta> calls;
  if (ctx.model->harmony) {
    auto it = ctx.harmony
                  .try_emplace(e.index, *ctx.model->tokenizer,
                               *ctx.model->harmony, idMaker(r))
                  .first;
    auto d = replyDelta(it->second, e.tokens, finished);
    reasoning = std::move(d.reasoning);
    content = std::move(d.content);
    calls = std::move(d.calls);
  } else if (r.splitReply) {
    auto it = ctx.replies
                  .try_emplace(e.index, r.markup.tools, r.markup.reasoning,
                               r.markup.startsInReasoning, idMaker(r))
                  .first;
    auto d = replyDelta(it->second, e.text, finished);
    reasoning = std::move(d.reasoning);
    content = std::move(d.content);
    calls = std::move(d.calls);
  } else {
    content = e.text;
  }
  json delta = json::object();
  if (!reasoning.empty())
    putReasoning(delta, *ctx.model, reasoning);
  if (!content.empty())
    delta["content"] = content;
  if (!calls.empty()) {
    json list = json::array();
    for (const auto &c : calls) {
      json item = {{"index", c.index}};
      if (!c.name.empty()) {
        item["id"] = c.id;
        item["type"] = "function";
        item["function"] = {{"name", c.name}, {"arguments", c.arguments}};
      } else {
        item["function"] = {{"arguments", c.arguments}};
      }
      list.push_back(std::move(item));
    }
    delta["tool_calls"] = std::move(list);
  }
  return delta;
}

/// Whether sample `index` of a streamed reply made tool calls.
bool madeCalls(const ResponseContext &ctx, int32_t index) {
  auto it = ctx.replies.find(index);
  auto h = ctx.harmony.find(index);
  return (it != ctx.replies.end() && !it->second.calls().empty()) ||
         (h != ctx.harmony.end() && !h->second.calls().empty());
}

std::optional<json> chunk(const ResponseContext &ctx, const RequestEvent &e) {
  const ParsedRequest &r = *ctx.request;
  const bool chat = r.endpoint == Endpoint::Chat;
  json delta = chat ? chatDelta(ctx, e) : json();
  if ((chat ? delta.empty() : e.text.empty()) &&
      e.finished == FinishReason::None && r.logprobs < 0)
    return std::nullopt; // a token whose text is still held back
  json out = header(ctx, chat ? "chat.completion.chunk" : "text_completion");
  json c = {{"index", e.index}};
  if (chat) {
    c["delta"] = std::move(delta);
    c["logprobs"] =
        r.logprobs >= 0 ? chatLogprobs(*ctx.model, e.logprobs) : json(nullptr);
  } else {
    c["text"] = e.text;
    c["logprobs"] = r.logprobs >= 0
                        ? completionLogprobs(*ctx.model, e.logprobs, 0)
                        : json(nullptr);
  }
  c["finish_reason"] =
      e.finished == FinishReason::None
          ? json(nullptr)
          : json(finishReason(e.finished, chat && madeCalls(ctx, e.index)));
  out["choices"] = json::array({c});
  if (r.includeUsage)
    out["usage"] = nullptr;
  return out;
}

json roleChunk(const ResponseContext &ctx, int32_t index) {
  json out = header(ctx, "chat.completion.chunk");
  out["choices"] =
      json::array({{{"index", index},
                    {"delta", {{"role", "assistant"}, {"content", ""}}},
                    {"logprobs", nullptr},
                    {"finish_reason", nullptr}}});
  if (ctx.request->includeUsage)
    out["usage"] = nullptr;
  return out;
}

json usageChunk(const ResponseContext &ctx, const RequestResult &result) {
  json out = header(ctx, ctx.request->endpoint == Endpoint::Chat
                             ? "chat.completion.chunk"
                             : "text_completion");
  out["choices"] = json::array();
  out["usage"] = usage(result);
  return out;
}

} // namespace llmc::api
