//===- chat.h - Multi-turn chat over one KV-cache sequence -----*- C++ -*-===//
//
// A ChatSession renders the whole conversation with the model's chat template
// on every turn, tokenizes it without adding special tokens (the template
// writes BOS itself), and keeps one engine sequence across turns. Because a
// rendering normally starts with the previous one, only the new tokens are
// prefilled. Where it does not (templates that rewrite history, or the
// template's rendering of the assistant turn differing from the raw sampled
// tokens, e.g. an added end-of-turn marker or a different BPE split), the
// sequence is truncated to the longest common prefix of what is cached and
// the new rendering, and only the rest is prefilled, so the result is always
// exactly what a fresh prefill of the rendering would give.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/chat_template.h"
#include "llmc/runtime/generate.h"
#include "llmc/text/harmony.h"

#include <optional>
#include <string>
#include <vector>

namespace llmc {

struct ChatMessage {
  std::string role; // "system", "user", "assistant"
  std::string content;
  std::string thinking; // the reply's reasoning (harmony's analysis, a
                        // <think> block), else ""
};

struct ChatTurn {
  GenerateResult result; // metrics.reusedPromptTokens = cache hits
  /// The reply's reasoning (gpt-oss's analysis channel, a template's
  /// <think> block) and the rest, the assistant message (result.text keeps
  /// the whole reply's text).
  std::string reasoning, content;
  std::vector<int32_t> promptIds; // the whole conversation's rendering
  int64_t reused = 0, prefilled = 0;
};

class ChatSession {
public:
  /// `engine` and `tokenizer` must outlive the session. `origin` names the
  /// template in errors (the plan, or the --chat-template file). Throws
  /// llmc::Error if the template does not parse.
  ChatSession(Engine &engine, const tok::Tokenizer &tokenizer,
              const std::string &templateSource, std::string origin,
              GenerateOptions options, std::string system = "");
  ~ChatSession();
  ChatSession(const ChatSession &) = delete;
  ChatSession &operator=(const ChatSession &) = delete;

  /// Adds the user's message, generates the assistant's reply (streamed to
  /// `onText`) and adds it to the history. On error the history and cache
  /// are as before the call. A template that fails to render throws
  /// llmc::Error with the interpreter's message (it names the construct).
  /// A template with a reasoning block (chat_format.h) streams the block to
  /// `onReasoning` and the rest to `onText`; a harmony template (gpt-oss)
  /// sends the analysis and the answer once the reply is complete (the
  /// split needs the reply's tokens).
  ChatTurn
  send(const std::string &user,
       const std::function<void(const std::string &)> &onText = {},
       const std::function<void(const std::string &)> &onReasoning = {});
  /// Forgets the conversation (the system message stays) and the cache.
  void reset();

  /// The rendering of the history plus the generation prompt.
  std::string render() const;
  const std::vector<ChatMessage> &messages() const { return messages_; }
  /// The tokens whose K/V the session's sequence holds.
  const std::vector<int32_t> &cachedTokens() const { return cached_; }
  const GenerateOptions &options() const { return options_; }

private:
  Engine &engine_;
  const tok::Tokenizer &tokenizer_;
  ChatTemplate template_;
  std::string system_;
  GenerateOptions options_;
  std::vector<ChatMessage> messages_;
  std::optional<text::HarmonyReply::Markers> harmony_;
  int32_t seq_ = -1;
  std::vector<int32_t> cached_;
};

} // namespace llmc
