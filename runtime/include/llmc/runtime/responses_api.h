//===- responses_api.h - OpenAI's Responses API over chat ------*- C++ -*-===//
//
// POST /v1/responses, stateless, as a translation to chat completions (the
// default of the OpenAI Agents SDK and of coding CLIs): the request's
// `input` items and `instructions` become chat messages, its function tools
// chat tools; the chat reply becomes `output` items (reasoning, message,
// function_call) and, streamed, Responses events. Nothing is stored:
// previous_response_id and conversation are 400s.
//
// Pure functions and one converter object per stream (the connection's
// thread).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/openai_api.h"

#include <nlohmann/json.hpp>

#include <string>

namespace llmc::api {

/// The chat completions body a Responses body asks for; throws ApiError
/// naming the Responses field.
std::string chatBodyForResponse(const nlohmann::ordered_json &body);

/// A finished chat completion (response()'s body) as a Response object.
/// `request` is the Responses body (its settings are echoed).
nlohmann::ordered_json responseFromChat(const nlohmann::ordered_json &chat,
                                        const nlohmann::ordered_json &request,
                                        const std::string &id,
                                        int64_t createdAt);

/// A streamed chat reply's chunks as Responses events (`event: TYPE` and
/// `data: {...}` SSE blocks, numbered by sequence_number).
class ResponseEvents {
public:
  ResponseEvents(nlohmann::ordered_json request, std::string id,
                 int64_t createdAt);
  /// response.created and response.in_progress.
  std::string start();
  /// A chat chunk's delta (and its usage, when it carries one).
  std::string push(const nlohmann::ordered_json &chatChunk);
  /// The open item's done events and response.completed (or incomplete).
  std::string finish();

private:
  enum class Kind { None, Reasoning, Message, Call };
  std::string event(const char *type, nlohmann::ordered_json data);
  std::string open(Kind kind, const nlohmann::ordered_json &call);
  std::string close();

  nlohmann::ordered_json request_;
  std::string id_;
  int64_t createdAt_;
  int64_t sequence_ = 0;
  Kind kind_ = Kind::None;
  nlohmann::ordered_json items_ = nlohmann::ordered_json::array(); // output
  std::string reasoning_, content_;
  nlohmann::ordered_json calls_ = nlohmann::ordered_json::array();
  nlohmann::ordered_json usage_;
  std::string finishReason_;
};

} // namespace llmc::api
