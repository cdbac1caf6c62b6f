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

const ToolCallFormat &HarmonyReply::callFormat() {
  static const ToolCallFormat f = [] {
    ToolCallFormat f;
    f.literals = {"<|channel|>commentary to=functions.",
                  " <|constrain|>json<|message|>", ""};
    f.slots = {ToolCallFormat::Slot::Name, ToolCallFormat::Slot::Arguments};
    f.trigger = "<|channel|>commentary to=";
    f.parallel = false;
    return f;
  }();
  return f;
}

const ReasoningMarkers &HarmonyReply::analysisMarkers() {
  static const ReasoningMarkers m{"<|channel|>analysis<|message|>",
                                  "<|end|><|start|>assistant"};
  return m;
}

std::vector<std::string> HarmonyReply::markerTexts() {
  return {"<|start|>", "<|channel|>", "<|message|>", "<|end|>",
          "<|constrain|>"};
}

ReplyParser::Whole HarmonyReply::split(const Tokenizer &tokenizer,
                                       Markers markers,
                                       const std::vector<int32_t> &tokens,
                                       std::function<std::string()> newId) {
  HarmonyReply reply(tokenizer, markers, std::move(newId));
  Delta d = reply.push(tokens), tail = reply.finish();
  return {d.reasoning + tail.reasoning, d.content + tail.content,
          reply.calls()};
}

HarmonyReply::HarmonyReply(const Tokenizer &tokenizer, Markers markers,
                           std::function<std::string()> newId)
    : tokenizer_(tokenizer), m_(markers), body_(tokenizer, true),
      newId_(std::move(newId)) {}

namespace {

/// The recipient of a message from its headers: `to=functions.NAME` gives
/// NAME (another namespace: the whole recipient); none gives "".
std::string recipient(const std::string &headers) {
  const size_t to = headers.find("to=");
  if (to == std::string::npos)
    return "";
  std::string r = headers.substr(to + 3);
  r = r.substr(0, r.find_first_of(" <\n"));
  return r.rfind("functions.", 0) == 0 ? r.substr(10) : r;
}

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\t'; }

} // namespace

void HarmonyReply::route(std::string text, Delta &d) {
  if (text.empty())
    return;
  if (call_) {
    calls_.back().arguments += text;
    if (!d.calls.empty() &&
        d.calls.back().index == static_cast<int32_t>(calls_.size() - 1))
      d.calls.back().arguments += text;
    else
      d.calls.push_back(
          {static_cast<int32_t>(calls_.size() - 1), "", "", text});
    return;
  }
  (reasoning_ ? d.reasoning : d.content) += text;
}

void HarmonyReply::open(Delta &d) {
  const std::string name = channel_.substr(0, channel_.find(' '));
  const std::string to = recipient(header_ + " " + channel_);
  call_ = !to.empty();
  reasoning_ = !call_ && name == "analysis";
  if (!call_)
    return;
  calls_.push_back(
      {newId_ ? newId_() : "call_" + std::to_string(calls_.size()), to, ""});
  d.calls.push_back(
      {static_cast<int32_t>(calls_.size() - 1), calls_.back().id, to, ""});
}

HarmonyReply::Delta HarmonyReply::push(const std::vector<int32_t> &tokens) {
  Delta d;
  for (int32_t t : tokens) {
    if (state_ == State::Done)
      break;
    const bool marker = t == m_.ret || t == m_.call || t == m_.end ||
                        t == m_.start || t == m_.channel || t == m_.message;
    if (!marker && state_ == State::Header && !started_) {
      // A reply that never opens a channel is all content; one that starts
      // with a recipient (the prompt ended in `<|start|>assistant`) is a
      // header: held while it may be one.
      pending_ += body_.push(t);
      size_t i = 0;
      while (i < pending_.size() && isSpace(pending_[i]))
        ++i;
      const std::string_view rest = std::string_view(pending_).substr(i);
      plain_ = plain_ || rest.substr(0, 3) !=
                             std::string_view("to=").substr(0, rest.size());
      if (plain_) {
        route(std::move(pending_), d);
        pending_.clear();
      }
      continue;
    }
    if (marker && !started_) {
      header_ = std::move(pending_);
      pending_.clear();
    }
    started_ |= marker;
    if (t == m_.ret || t == m_.call) {
      route(body_.flush(), d);
      state_ = State::Done;
    } else if (t == m_.end) {
      route(body_.flush(), d);
      call_ = false;
      state_ = State::Header;
      header_.clear();
    } else if (t == m_.start) {
      state_ = State::Header; // a role and maybe a recipient follow
      header_.clear();
    } else if (t == m_.channel) {
      state_ = State::Channel;
      channel_.clear();
    } else if (t == m_.message) {
      // "analysis" is the chain of thought; "final" the answer;
      // "commentary" (preambles) stays visible; a recipient makes a call.
      open(d);
      state_ = State::Body;
    } else if (state_ == State::Channel) {
      if (t != m_.constrain)
        channel_ += tokenizer_.decode({t}, true);
    } else if (state_ == State::Body) {
      route(body_.push(t), d);
    } else if (state_ == State::Header) {
      header_ += tokenizer_.decode({t}, true);
    }
  }
  return d;
}

HarmonyReply::Delta HarmonyReply::finish() {
  Delta d;
  if (state_ == State::Body || !started_) {
    if (!started_) {
      route(std::move(pending_), d);
      pending_.clear();
    }
    route(body_.flush(), d);
  }
  return d;
}

} // namespace llmc::text
