//===- harmony.cpp - Splitting a harmony reply into reasoning and content -===//
#include "llmc/text/harmony.h"

namespace llmc::text {

std::optional<HarmonyReply::Markers>
HarmonyReply::markersOf(const Tokenizer &tokenizer) {
  Markers m{};
  const std::pair<int32_t *, const char *> names[] = {
      {&m.start, "<|start|>"},
      {&m.channel, "<|channel|>"},
      {&m.message, "<|message|>"},
      {&m.end, "<|end|>"},
      {&m.ret, "<|return|>"}};
  for (auto [id, name] : names) {
    std::optional<int32_t> t = tokenizer.tokenId(name);
    if (!t)
      return std::nullopt;
    *id = *t;
  }
  // Tool calls' markers; some copies of the vocabulary leave them reserved.
  m.call = tokenizer.tokenId("<|call|>").value_or(-1);
  m.constrain = tokenizer.tokenId("<|constrain|>").value_or(-1);
  return m;
}

std::optional<HarmonyReply::Markers>
HarmonyReply::forTemplate(const Tokenizer &tokenizer,
                          std::string_view templateSource) {
  if (templateSource.find("<|channel|>") == std::string_view::npos)
    return std::nullopt;
  return markersOf(tokenizer);
}

HarmonyReply::Delta HarmonyReply::split(const Tokenizer &tokenizer,
                                        Markers markers,
                                        const std::vector<int32_t> &tokens) {
  HarmonyReply reply(tokenizer, markers);
  Delta d = reply.push(tokens), tail = reply.flush();
  return {d.reasoning + tail.reasoning, d.content + tail.content};
}

HarmonyReply::HarmonyReply(const Tokenizer &tokenizer, Markers markers)
    : tokenizer_(tokenizer), m_(markers), body_(tokenizer, true) {}

void HarmonyReply::route(std::string text, Delta &d) const {
  (reasoning_ ? d.reasoning : d.content) += text;
}

HarmonyReply::Delta HarmonyReply::push(const std::vector<int32_t> &tokens) {
  Delta d;
  for (int32_t t : tokens) {
    if (state_ == State::Done)
      break;
    const bool marker = t == m_.ret || t == m_.call || t == m_.end ||
                        t == m_.start || t == m_.channel || t == m_.message;
    if (!marker && state_ == State::Header && !started_) {
      // A reply that never opens a channel is all content.
      route(body_.push(t), d);
      continue;
    }
    started_ |= marker;
    if (t == m_.ret || t == m_.call) {
      route(body_.flush(), d);
      state_ = State::Done;
    } else if (t == m_.end) {
      route(body_.flush(), d);
      state_ = State::Header;
    } else if (t == m_.start) {
      state_ = State::Header; // a role follows; it is not text
    } else if (t == m_.channel) {
      state_ = State::Channel;
      channel_.clear();
    } else if (t == m_.message) {
      // "analysis" is the chain of thought; "final" the answer;
      // "commentary" (preambles, tool calls: issue 37) stays visible.
      const std::string name = channel_.substr(0, channel_.find(' '));
      reasoning_ = name == "analysis";
      state_ = State::Body;
    } else if (state_ == State::Channel) {
      if (t != m_.constrain)
        channel_ += tokenizer_.decode({t}, true);
    } else if (state_ == State::Body) {
      route(body_.push(t), d);
    }
    // Header tokens (the role) are dropped.
  }
  return d;
}

HarmonyReply::Delta HarmonyReply::flush() {
  Delta d;
  if (state_ == State::Body || !started_)
    route(body_.flush(), d);
  return d;
}

} // namespace llmc::text
