//===- chat_session.cpp - Chat turns that reuse the KV cache --------------===//

#include "llmc/runtime/chat.h"

#include "llmc/support/error.h"

#include <algorithm>
#include <ctime>

namespace llmc {
ChatSession::ChatSession(Engine &engine, const tok::Tokenizer &tokenizer,
                         const std::string &templateSource, std::string origin,
                         GenerateOptions options, std::string system)
    : engine_(engine), tokenizer_(tokenizer),
      template_(templateSource, std::move(origin), tokenizer),
      system_(std::move(system)), options_(std::move(options)) {
  harmony_ = text::HarmonyReply::forTemplate(tokenizer, templateSource);
  reset();
}

ChatSession::~ChatSession() {
  if (seq_ >= 0)
    engine_.releaseSequence(seq_);
}

void ChatSession::reset() {
  messages_.clear();
  if (!system_.empty())
    messages_.push_back({"system", system_, ""});
  if (seq_ >= 0)
    engine_.releaseSequence(seq_);
  seq_ = engine_.newSequence();
  cached_.clear();
}

std::string ChatSession::render() const {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  for (const ChatMessage &m : messages_) {
    nlohmann::ordered_json j = {{"role", m.role}, {"content", m.content}};
    if (!m.thinking.empty()) // harmony's name, and the OpenAI API's
      j["thinking"] = j["reasoning_content"] = m.thinking;
    messages.push_back(std::move(j));
  }
  return template_.render(messages);
}

ChatTurn
ChatSession::send(const std::string &user,
                  const std::function<void(const std::string &)> &onText,
                  const std::function<void(const std::string &)> &onReasoning) {
  messages_.push_back({"user", user, ""});
  ChatTurn turn;
  std::optional<text::ReplyParser> parser;
  try {
    const std::string rendered = render();
    turn.promptIds = tokenizer_.encode(rendered, /*addSpecial=*/false);
    if (turn.promptIds.empty())
      throw Error(template_.origin() +
                  ": the chat template rendered no tokens");
    if (static_cast<int64_t>(turn.promptIds.size()) >= engine_.contextLength())
      throw Error("the conversation has " +
                  std::to_string(turn.promptIds.size()) +
                  " tokens but the context length is " +
                  std::to_string(engine_.contextLength()) +
                  ", leaving no room for a reply; /reset starts over");
    // Longest common prefix of the cache and the new rendering; at least
    // one token is always prefilled, since its logits pick the next token.
    size_t lcp = 0;
    while (lcp < cached_.size() && lcp < turn.promptIds.size() &&
           cached_[lcp] == turn.promptIds[lcp])
      ++lcp;
    lcp = std::min(lcp, turn.promptIds.size() - 1);
    engine_.truncate(seq_, static_cast<int64_t>(lcp));
    cached_.resize(lcp);
    // A reasoning block is split from the text as it streams.
    const ReplyMarkup markup = replyMarkup(template_.format(), rendered, false);
    if (markup.reasoning && !harmony_)
      parser.emplace(nullptr, markup.reasoning, markup.startsInReasoning,
                     nullptr);
    auto route = [&](const text::ReplyParser::Delta &d) {
      turn.reasoning += d.reasoning;
      turn.content += d.content;
      if (onReasoning && !d.reasoning.empty())
        onReasoning(d.reasoning);
      if (onText && !d.content.empty())
        onText(d.content);
    };
    std::function<void(const std::string &)> streamed = onText;
    if (parser)
      streamed = [&](const std::string &s) { route(parser->push(s)); };
    turn.result = generateOn(engine_, &tokenizer_, seq_, turn.promptIds,
                             options_, harmony_ ? nullptr : streamed);
    if (parser)
      route(parser->finish());
  } catch (...) {
    messages_.pop_back();
    // A failed prefill may have written part of the new tokens.
    if (engine_.length(seq_) > static_cast<int64_t>(cached_.size()))
      engine_.truncate(seq_, static_cast<int64_t>(cached_.size()));
    throw;
  }
  turn.reused = turn.result.metrics.reusedPromptTokens;
  turn.prefilled = static_cast<int64_t>(turn.promptIds.size()) - turn.reused;
  // The cache now holds the rendering and every sampled token but the last.
  cached_ = turn.promptIds;
  cached_.insert(cached_.end(), turn.result.outputIds.begin(),
                 turn.result.outputIds.end());
  cached_.resize(static_cast<size_t>(engine_.length(seq_)));
  if (!parser)
    turn.content = turn.result.text;
  if (harmony_) {
    const text::ReplyParser::Whole d =
        text::HarmonyReply::split(tokenizer_, *harmony_, turn.result.outputIds);
    turn.reasoning = d.reasoning;
    turn.content = d.content;
    if (onReasoning && !turn.reasoning.empty())
      onReasoning(turn.reasoning);
    if (onText && !turn.content.empty())
      onText(turn.content);
  }
  messages_.push_back({"assistant", turn.content, turn.reasoning});
  return turn;
}

} // namespace llmc
