//===- openai_api.h - OpenAI request and response bodies --------*- C++ -*-===//
//
// Turns the JSON body of POST /v1/completions or /v1/chat/completions into
// a request for the scheduler, checking every field the server knows (a bad
// value or type is an ApiError naming the parameter and the value; unknown
// fields are ignored, as OpenAI's server does), and turns the scheduler's
// events and results back into OpenAI's response and SSE chunk bodies.
//
// Pure functions over immutable inputs: safe on any connection thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/text/harmony.h"
#include "llmc/text/tool_calls.h"

#include "llmc/grammar/grammar_cache.h"
#include "llmc/runtime/chat_format.h"
#include "llmc/runtime/chat_template.h"
#include "llmc/runtime/scheduler.h"
#include "llmc/tokenizer/tokenizer.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmc::api {

/// An error the client gets back: HTTP status and OpenAI's error body.
struct ApiError : std::exception {
  ApiError(int status, std::string message, std::string param = "",
           std::string type = "invalid_request_error", std::string code = "")
      : status(status), message(std::move(message)), param(std::move(param)),
        type(std::move(type)), code(std::move(code)) {}
  const char *what() const noexcept override { return message.c_str(); }
  /// {"error": {"message", "type", "param", "code"}}
  std::string body() const;

  int status;
  std::string message, param, type, code;
};

/// What every request is checked against (fixed while the server runs).
struct ModelInfo {
  std::string name;          // --served-model-name
  int64_t contextLength = 0; // tokens
  int64_t vocabSize = 0;
  int32_t maxNumSeqs = 1;
  std::vector<int64_t> eosIds;     // completions
  std::vector<int64_t> chatEosIds; // chat: plus the template's end of turn
  const tok::Tokenizer *tokenizer = nullptr;
  const ChatTemplate *chatTemplate = nullptr; // null: no chat endpoint
  /// Compiles response_format / grammar (null: structured output is
  /// refused with a 400).
  grammar::GrammarCache *grammars = nullptr;
  /// Schemas' objects without additionalProperties take only their listed
  /// keys (--disable-additional-properties; a request may say otherwise).
  bool strictObjects = false;
  /// gpt-oss's harmony format (the tokenizer has its markers and the chat
  /// template writes channels): chat replies are split into
  /// `reasoning_content` (the analysis channel) and `content`.
  std::optional<text::HarmonyReply::Markers> harmony;
  /// Where a reply's reasoning goes: `reasoning_content` (DeepSeek's and
  /// vLLM's name), `reasoning` (vLLM's newer one) or both.
  enum class ReasoningField { Content, Reasoning, Both };
  ReasoningField reasoningField = ReasoningField::Content;
};

/// Responses: chat completions under OpenAI's Responses API (responses_api.h).
enum class Endpoint { Completions, Chat, Responses };

struct ParsedRequest {
  Endpoint endpoint = Endpoint::Completions;
  std::string model;
  std::vector<int32_t> prompt;
  std::string promptText; // completions with echo
  RequestOptions options;
  int32_t n = 1;
  bool stream = false, includeUsage = false, echo = false;
  /// llmc's own field: false opts the request out of the server's
  /// speculative decoding.
  bool speculative = true;
  /// Chat: logprobs true -> top_logprobs alternatives; completions:
  /// logprobs k. -1: none.
  int32_t logprobs = -1;
  /// Chat: the reply is split by the template's markup (chat_format.h):
  /// tool calls when tools are on (null otherwise), reasoning when the
  /// template has a reasoning block.
  bool splitReply = false;
  ReplyMarkup markup;
  /// Ids of this many alphanumerics (0: "call_" and 24).
  int idLength = 0;
};

/// Parses and checks a body; throws ApiError (400 for a bad body or field,
/// 404 for an unknown model) naming the parameter. `response_format` (and
/// llmc's `grammar`, GBNF text, as llama.cpp's server takes it) is compiled
/// here, on the connection's thread: a schema with an unsupported keyword
/// is a 400 that names it.
ParsedRequest parseRequest(Endpoint endpoint, const std::string &body,
                           const ModelInfo &model);

/// POST /tokenize, as vLLM's: {"prompt", "add_special_tokens" (true)} or
/// {"messages", "add_generation_prompt" (true)} -> {"count",
/// "max_model_len", "tokens"} (and "token_strs" with "return_token_strs").
/// POST /detokenize: {"tokens"} -> {"prompt"}. ApiError (400, 404 for
/// another model) names the field.
nlohmann::ordered_json tokenize(const std::string &body, const ModelInfo &m);
nlohmann::ordered_json detokenize(const std::string &body, const ModelInfo &m);

/// The response bodies. `id` like "cmpl-..." / "chatcmpl-...", `created`
/// in Unix seconds.
struct ResponseContext {
  std::string id;
  int64_t created = 0;
  const ParsedRequest *request = nullptr;
  const ModelInfo *model = nullptr;
  /// A streamed harmony reply per sample, as chunk() builds them (the
  /// connection's thread only).
  mutable std::map<int32_t, text::HarmonyReply> harmony;
  /// A streamed reply per sample split by ParsedRequest::splitReply.
  mutable std::map<int32_t, text::ReplyParser> replies;
};

/// A tool call id: "call_" and 24 alphanumerics, or `length` of them.
std::string newToolCallId(int length = 0);

/// The whole non-streaming response.
nlohmann::ordered_json response(const ResponseContext &ctx,
                                const RequestResult &result);
/// One SSE chunk for a sample's new tokens (null when it has nothing to
/// say), and the chat role chunk sent first.
std::optional<nlohmann::ordered_json> chunk(const ResponseContext &ctx,
                                            const RequestEvent &event);
nlohmann::ordered_json roleChunk(const ResponseContext &ctx, int32_t index);
/// The last chunk with `usage` (stream_options.include_usage).
nlohmann::ordered_json usageChunk(const ResponseContext &ctx,
                                  const RequestResult &result);
/// "stop" for EOS and stop strings, "length" for max tokens and the
/// context, "abort" for an aborted request (a reply that made tool calls
/// and stopped: "tool_calls", which the caller decides).
const char *openaiFinishReason(FinishReason reason);

} // namespace llmc::api
