//===- chat_session.cpp - Chat turns that reuse the KV cache
//---------------===//

#include "llmc/runtime/chat.h"

#include "llmc/support/error.h"

#include <algorithm>
#include <ctime>

namespace llmc {
namespace {

std::string localNowIso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

nlohmann::ordered_json message(const std::string &role,
                               const std::string &content) {
  nlohmann::ordered_json m = nlohmann::ordered_json::object();
  m["role"] = role;
  m["content"] = content;
  return m;
}

} // namespace

std::vector<int64_t> chatEosIds(const std::vector<int64_t> &configEos,
                                const tok::Tokenizer &tokenizer,
                                const std::string &templateSource) {
  std::vector<int64_t> ids = configEos;
  for (const char *marker : kEndOfTurnMarkers)
    if (templateSource.find(marker) != std::string::npos)
      if (auto id = tokenizer.tokenId(marker))
        ids.push_back(*id);
  // Templates such as Mistral's and Llama 2's end a turn with the
  // eos_token variable rather than a literal marker.
  if (tokenizer.eos && templateSource.find("eos_token") != std::string::npos)
    ids.push_back(*tokenizer.eos);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

ChatSession::ChatSession(Engine &engine, const tok::Tokenizer &tokenizer,
                         const std::string &templateSource, std::string origin,
                         GenerateOptions options, std::string system)
    : engine_(engine), tokenizer_(tokenizer), template_([&] {
        try {
          return tmpl::Template(templateSource);
        } catch (const tmpl::TemplateError &e) {
          throw Error(origin + ": " + e.what());
        }
      }()),
      origin_(std::move(origin)), system_(std::move(system)),
      options_(std::move(options)) {
  reset();
}

ChatSession::~ChatSession() {
  if (seq_ >= 0)
    engine_.releaseSequence(seq_);
}

void ChatSession::reset() {
  messages_ = nlohmann::ordered_json::array();
  if (!system_.empty())
    messages_.push_back(message("system", system_));
  if (seq_ >= 0)
    engine_.releaseSequence(seq_);
  seq_ = engine_.newSequence();
  cached_.clear();
}

std::string ChatSession::render() const {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  ctx["messages"] = messages_;
  ctx["tools"] = nullptr;
  ctx["documents"] = nullptr;
  ctx["add_generation_prompt"] = true;
  // As transformers passes them: the special tokens' text from the
  // tokenizer config; undefined when the tokenizer has none.
  if (tokenizer_.bos)
    ctx["bos_token"] = tokenizer_.tokenText(*tokenizer_.bos);
  if (tokenizer_.eos)
    ctx["eos_token"] = tokenizer_.tokenText(*tokenizer_.eos);
  tmpl::RenderOptions ro;
  ro.strftimeNow = localNowIso();
  try {
    return template_.render(ctx, ro);
  } catch (const tmpl::RaisedException &e) {
    throw Error(origin_ +
                ": the chat template raised an exception: " + e.what());
  } catch (const tmpl::TemplateError &e) {
    throw Error(origin_ + ": the chat template failed to render: " + e.what());
  }
}

ChatTurn
ChatSession::send(const std::string &user,
                  const std::function<void(const std::string &)> &onText) {
  messages_.push_back(message("user", user));
  ChatTurn turn;
  try {
    turn.promptIds = tokenizer_.encode(render(), /*addSpecial=*/false);
    if (turn.promptIds.empty())
      throw Error(origin_ + ": the chat template rendered no tokens");
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
    turn.result = generateOn(engine_, &tokenizer_, seq_, turn.promptIds,
                             options_, onText);
  } catch (...) {
    messages_.erase(messages_.size() - 1);
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
  messages_.push_back(message("assistant", turn.result.text));
  return turn;
}

} // namespace llmc
