//===- responses_api.cpp - OpenAI's Responses API over chat ---------------===//
#include "llmc/runtime/responses_api.h"

#include <random>

namespace llmc::api {

using json = nlohmann::ordered_json;

namespace {

[[noreturn]] void bad(const std::string &field, const std::string &what) {
  throw ApiError(400, "'" + field + "' " + what, field);
}

std::string itemId(const char *prefix) {
  static const char kHex[] = "0123456789abcdef";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string id = prefix;
  id += '_';
  for (int i = 0; i < 32; ++i)
    id += kHex[rng() % 16];
  return id;
}

/// A Responses content list (input_text / output_text parts) as chat text
/// parts; images pass through for the chat checker to refuse.
json contentOf(const json &content, const std::string &field) {
  if (content.is_string() || content.is_null())
    return content;
  if (!content.is_array())
    bad(field, "must be a string or a list of content parts");
  json parts = json::array();
  for (const json &p : content) {
    if (p.is_object() && p.contains("type") &&
        (p["type"] == "input_text" || p["type"] == "output_text" ||
         p["type"] == "text") &&
        p.contains("text"))
      parts.push_back({{"type", "text"}, {"text", p["text"]}});
    else
      parts.push_back(p);
  }
  return parts;
}

json messagesOf(const json &body) {
  json messages = json::array();
  if (body.contains("instructions") && !body["instructions"].is_null()) {
    if (!body["instructions"].is_string())
      bad("instructions", "must be a string");
    messages.push_back({{"role", "system"}, {"content", body["instructions"]}});
  }
  if (!body.contains("input"))
    bad("input", "is required");
  const json &input = body["input"];
  if (input.is_string()) {
    messages.push_back({{"role", "user"}, {"content", input}});
    return messages;
  }
  if (!input.is_array())
    bad("input", "must be a string or a list of items");
  for (size_t i = 0; i < input.size(); ++i) {
    const json &item = input[i];
    const std::string where = "input[" + std::to_string(i) + "]";
    if (!item.is_object())
      bad(where, "must be an object");
    const std::string type = item.contains("type") && item["type"].is_string()
                                 ? item["type"].get<std::string>()
                                 : "message";
    if (type == "message") {
      if (!item.contains("role") || !item["role"].is_string())
        bad(where + ".role", "must be a string");
      messages.push_back({{"role", item["role"]},
                          {"content", contentOf(item.value("content", json()),
                                                where + ".content")}});
    } else if (type == "function_call") {
      for (const char *f : {"call_id", "name", "arguments"})
        if (!item.contains(f) || !item[f].is_string())
          bad(where + "." + f, "must be a string");
      json call = {
          {"id", item["call_id"]},
          {"type", "function"},
          {"function",
           {{"name", item["name"]}, {"arguments", item["arguments"]}}}};
      // Calls of one turn go into one assistant message.
      if (!messages.empty() && messages.back()["role"] == "assistant" &&
          messages.back().contains("tool_calls"))
        messages.back()["tool_calls"].push_back(std::move(call));
      else
        messages.push_back({{"role", "assistant"},
                            {"content", nullptr},
                            {"tool_calls", json::array({call})}});
    } else if (type == "function_call_output") {
      if (!item.contains("call_id") || !item["call_id"].is_string())
        bad(where + ".call_id", "must be a string");
      json output = item.value("output", json(""));
      messages.push_back(
          {{"role", "tool"},
           {"tool_call_id", item["call_id"]},
           {"content", output.is_string()
                           ? output
                           : contentOf(output, where + ".output")}});
    } else if (type == "reasoning") {
      continue; // the template drops past reasoning, or re-reads it as text
    } else {
      bad(where + ".type",
          "'" + type +
              "' is not supported (llmc's /v1/responses is stateless: "
              "messages, function_call and function_call_output items)");
    }
  }
  return messages;
}

json toolsOf(const json &tools) {
  if (!tools.is_array())
    bad("tools", "must be a list");
  json out = json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    const json &t = tools[i];
    const std::string where = "tools[" + std::to_string(i) + "]";
    if (!t.is_object() || t.value("type", json()) != "function")
      bad(where + ".type", "must be \"function\" (llmc runs no hosted tools)");
    json fn = {{"name", t.value("name", json())}};
    for (const char *f : {"description", "parameters", "strict"})
      if (t.contains(f) && !t[f].is_null())
        fn[f] = t[f];
    out.push_back({{"type", "function"}, {"function", std::move(fn)}});
  }
  return out;
}

/// The envelope of a Response with these output items.
json envelope(const json &request, const std::string &id, int64_t createdAt,
              const json &output, const json &usage,
              const std::string &finishReason, bool done) {
  const bool incomplete = finishReason == "length";
  json r = {
      {"id", id},
      {"object", "response"},
      {"created_at", createdAt},
      {"status", !done        ? "in_progress"
                 : incomplete ? "incomplete"
                              : "completed"},
      {"error", nullptr},
      {"incomplete_details", incomplete && done
                                 ? json{{"reason", "max_output_tokens"}}
                                 : json(nullptr)},
      {"instructions", request.value("instructions", json())},
      {"max_output_tokens", request.value("max_output_tokens", json())},
      {"model", request.value("model", json())},
      {"output", output},
      {"parallel_tool_calls", request.value("parallel_tool_calls", true)},
      {"previous_response_id", nullptr},
      {"reasoning", {{"effort", nullptr}, {"summary", nullptr}}},
      {"store", false},
      {"temperature", request.value("temperature", json(1.0))},
      {"text", request.value("text", json{{"format", {{"type", "text"}}}})},
      {"tool_choice", request.value("tool_choice", json("auto"))},
      {"tools", request.value("tools", json::array())},
      {"top_p", request.value("top_p", json(1.0))},
      {"truncation", "disabled"},
      {"usage", nullptr},
      {"metadata", request.value("metadata", json::object())}};
  if (!usage.is_null()) {
    const json cached =
        usage.contains("prompt_tokens_details")
            ? usage["prompt_tokens_details"].value("cached_tokens", json(0))
            : json(0);
    r["usage"] = {{"input_tokens", usage.value("prompt_tokens", json(0))},
                  {"input_tokens_details", {{"cached_tokens", cached}}},
                  {"output_tokens", usage.value("completion_tokens", json(0))},
                  {"output_tokens_details", {{"reasoning_tokens", 0}}},
                  {"total_tokens", usage.value("total_tokens", json(0))}};
  }
  return r;
}

json reasoningItem(const std::string &id, const std::string &text) {
  return {
      {"type", "reasoning"},
      {"id", id},
      {"summary", json::array()},
      {"content", json::array({{{"type", "reasoning_text"}, {"text", text}}})}};
}

json messageItem(const std::string &id, const std::string &text,
                 const char *status) {
  return {{"type", "message"},
          {"id", id},
          {"status", status},
          {"role", "assistant"},
          {"content", json::array({{{"type", "output_text"},
                                    {"text", text},
                                    {"annotations", json::array()},
                                    {"logprobs", json::array()}}})}};
}

json callItem(const std::string &id, const json &call, const char *status) {
  return {{"type", "function_call"},
          {"id", id},
          {"call_id", call["id"]},
          {"name", call["function"]["name"]},
          {"arguments", call["function"]["arguments"]},
          {"status", status}};
}

std::string reasoningOf(const json &m) {
  for (const char *f : {"reasoning_content", "reasoning"})
    if (m.contains(f) && m[f].is_string())
      return m[f].get<std::string>();
  return "";
}

} // namespace

std::string chatBodyForResponse(const json &body) {
  for (const char *f : {"previous_response_id", "conversation"})
    if (body.contains(f) && !body[f].is_null())
      bad(f, "is not supported: llmc's /v1/responses is stateless (send the "
             "whole conversation in 'input')");
  if (body.contains("background") && body["background"] == true)
    bad("background", "is not supported");
  json chat = {{"messages", messagesOf(body)}};
  for (const char *f :
       {"model", "temperature", "top_p", "stream", "parallel_tool_calls",
        "seed", "stop", "top_k", "min_p", "chat_template_kwargs"})
    if (body.contains(f))
      chat[f] = body[f];
  if (body.contains("max_output_tokens") &&
      !body["max_output_tokens"].is_null())
    chat["max_tokens"] = body["max_output_tokens"];
  if (body.contains("tools") && !body["tools"].is_null())
    chat["tools"] = toolsOf(body["tools"]);
  if (body.contains("tool_choice") && !body["tool_choice"].is_null()) {
    const json &c = body["tool_choice"];
    if (c.is_object() && c.value("type", json()) == "function")
      chat["tool_choice"] = {{"type", "function"},
                             {"function", {{"name", c.value("name", json())}}}};
    else
      chat["tool_choice"] = c;
  }
  if (body.contains("text") && body["text"].is_object() &&
      body["text"].contains("format")) {
    json format = body["text"]["format"];
    if (format.is_object() && format.value("type", json()) == "json_schema") {
      json schema = {{"name", format.value("name", json("response"))},
                     {"schema", format.value("schema", json::object())}};
      if (format.contains("strict"))
        schema["strict"] = format["strict"];
      format = {{"type", "json_schema"}, {"json_schema", schema}};
    }
    chat["response_format"] = format;
  }
  if (chat.value("stream", false))
    chat["stream_options"] = {{"include_usage", true}};
  return chat.dump();
}

json responseFromChat(const json &chat, const json &request,
                      const std::string &id, int64_t createdAt) {
  const json &choice = chat["choices"][0];
  const json &m = choice["message"];
  json output = json::array();
  const std::string reasoning = reasoningOf(m);
  if (!reasoning.empty())
    output.push_back(reasoningItem(itemId("rs"), reasoning));
  if (m.contains("content") && m["content"].is_string() &&
      !m["content"].get<std::string>().empty())
    output.push_back(messageItem(itemId("msg"), m["content"], "completed"));
  if (m.contains("tool_calls"))
    for (const json &c : m["tool_calls"])
      output.push_back(callItem(itemId("fc"), c, "completed"));
  return envelope(request, id, createdAt, output, chat["usage"],
                  choice["finish_reason"].get<std::string>(), true);
}

ResponseEvents::ResponseEvents(json request, std::string id, int64_t createdAt)
    : request_(std::move(request)), id_(std::move(id)), createdAt_(createdAt) {}

std::string ResponseEvents::event(const char *type, json data) {
  json e = {{"type", type}, {"sequence_number", sequence_++}};
  e.update(data);
  return std::string("event: ") + type +
         "\ndata: " + e.dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n\n";
}

std::string ResponseEvents::start() {
  const json r =
      envelope(request_, id_, createdAt_, json::array(), nullptr, "", false);
  std::string out = event("response.created", {{"response", r}});
  return out + event("response.in_progress", {{"response", r}});
}

std::string ResponseEvents::open(Kind kind, const json &call) {
  std::string out = close();
  kind_ = kind;
  json item;
  if (kind == Kind::Reasoning)
    item = reasoningItem(itemId("rs"), "");
  else if (kind == Kind::Message)
    item = messageItem(itemId("msg"), "", "in_progress");
  else
    item = callItem(itemId("fc"), call, "in_progress");
  if (kind == Kind::Message) // the part comes with its own event
    item["content"] = json::array();
  if (kind == Kind::Reasoning)
    item["content"] = json::array();
  items_.push_back(item);
  const size_t index = items_.size() - 1;
  out += event("response.output_item.added",
               {{"output_index", index}, {"item", item}});
  if (kind == Kind::Message)
    out += event("response.content_part.added",
                 {{"item_id", item["id"]},
                  {"output_index", index},
                  {"content_index", 0},
                  {"part",
                   {{"type", "output_text"},
                    {"text", ""},
                    {"annotations", json::array()}}}});
  return out;
}

std::string ResponseEvents::close() {
  if (kind_ == Kind::None)
    return "";
  json &item = items_.back();
  const size_t index = items_.size() - 1;
  const json itemId = item["id"];
  std::string out;
  if (kind_ == Kind::Reasoning) {
    out += event("response.reasoning_text.done", {{"item_id", itemId},
                                                  {"output_index", index},
                                                  {"content_index", 0},
                                                  {"text", reasoning_}});
    item = reasoningItem(itemId.get<std::string>(), reasoning_);
    reasoning_.clear();
  } else if (kind_ == Kind::Message) {
    out += event("response.output_text.done", {{"item_id", itemId},
                                               {"output_index", index},
                                               {"content_index", 0},
                                               {"text", content_},
                                               {"logprobs", json::array()}});
    item = messageItem(itemId.get<std::string>(), content_, "completed");
    out += event("response.content_part.done", {{"item_id", itemId},
                                                {"output_index", index},
                                                {"content_index", 0},
                                                {"part", item["content"][0]}});
    content_.clear();
  } else {
    item = callItem(itemId.get<std::string>(), calls_.back(), "completed");
    out += event("response.function_call_arguments.done",
                 {{"item_id", itemId},
                  {"output_index", index},
                  {"arguments", item["arguments"]}});
  }
  out += event("response.output_item.done",
               {{"output_index", index}, {"item", item}});
  kind_ = Kind::None;
  return out;
}

std::string ResponseEvents::push(const json &chunk) {
  std::string out;
  if (chunk.contains("usage") && !chunk["usage"].is_null())
    usage_ = chunk["usage"];
  if (!chunk.contains("choices") || chunk["choices"].empty())
    return out;
  const json &choice = chunk["choices"][0];
  const json &d = choice["delta"];
  const std::string reasoning = reasoningOf(d);
  if (!reasoning.empty()) {
    if (kind_ != Kind::Reasoning)
      out += open(Kind::Reasoning, nullptr);
    reasoning_ += reasoning;
    out += event("response.reasoning_text.delta",
                 {{"item_id", items_.back()["id"]},
                  {"output_index", items_.size() - 1},
                  {"content_index", 0},
                  {"delta", reasoning}});
  }
  if (d.contains("content") && d["content"].is_string() &&
      !d["content"].get<std::string>().empty()) {
    if (kind_ != Kind::Message)
      out += open(Kind::Message, nullptr);
    content_ += d["content"].get<std::string>();
    out += event("response.output_text.delta",
                 {{"item_id", items_.back()["id"]},
                  {"output_index", items_.size() - 1},
                  {"content_index", 0},
                  {"delta", d["content"]},
                  {"logprobs", json::array()}});
  }
  if (d.contains("tool_calls"))
    for (const json &c : d["tool_calls"]) {
      if (c.contains("id")) {
        calls_.push_back(
            {{"id", c["id"]},
             {"function",
              {{"name", c["function"]["name"]}, {"arguments", ""}}}});
        out += open(Kind::Call, calls_.back());
      }
      const std::string args = c["function"].value("arguments", "");
      if (args.empty() || calls_.empty())
        continue;
      calls_.back()["function"]["arguments"] =
          calls_.back()["function"]["arguments"].get<std::string>() + args;
      out += event("response.function_call_arguments.delta",
                   {{"item_id", items_.back()["id"]},
                    {"output_index", items_.size() - 1},
                    {"delta", args}});
    }
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
    finishReason_ = choice["finish_reason"];
  return out;
}

std::string ResponseEvents::finish() {
  std::string out = close();
  const json r =
      envelope(request_, id_, createdAt_, items_, usage_, finishReason_, true);
  out += event(r["status"] == "incomplete" ? "response.incomplete"
                                           : "response.completed",
               {{"response", r}});
  return out;
}

} // namespace llmc::api
