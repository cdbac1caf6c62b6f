//===- tool_calls.cpp - Tool calls and reasoning in a reply's text --------===//
#include "llmc/text/tool_calls.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

namespace llmc::text {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
bool isPunct(char c) { return std::strchr("{}[],:\"", c) != nullptr; }
bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}
bool isAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

/// The longest suffix of `text` that is a proper prefix of `marker`: text
/// that may still become the marker.
size_t partialSuffix(std::string_view text, std::string_view marker) {
  for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n)
    if (text.substr(text.size() - n) == marker.substr(0, n))
      return n;
  return 0;
}

} // namespace

std::string ToolCallFormat::describe() const {
  std::string s = blockOpen + literals.front();
  for (size_t i = 0; i < slots.size(); ++i) {
    s += slots[i] == Slot::Name ? "NAME" : slots[i] == Slot::Id ? "ID" : "ARGS";
    s += literals[i + 1];
  }
  s += parallel ? "[" + separator + "...]" : "";
  s += blockClose;
  return nlohmann::json(s).dump();
}

ReplyParser::ReplyParser(const ToolCallFormat *format,
                         std::optional<ReasoningMarkers> reasoning,
                         bool startsInReasoning,
                         std::function<std::string()> newId)
    : format_(format), reasoning_(std::move(reasoning)),
      newId_(std::move(newId)) {
  if (reasoning_ && startsInReasoning)
    state_ = State::Reasoning;
}

void ReplyParser::emitContent(Delta &d, std::string_view s) {
  if (stripLeading_) {
    while (!s.empty() && isSpace(s.front()))
      s.remove_prefix(1);
    if (s.empty())
      return;
    stripLeading_ = false;
  }
  d.content += s;
}

ReplyParser::Match ReplyParser::literal(const std::string &lit, size_t &at,
                                        size_t &litAt, bool final) const {
  auto skipSpace = [&] {
    while (at < buf_.size() && isSpace(buf_[at]))
      ++at;
    return at < buf_.size() || final;
  };
  while (litAt < lit.size()) {
    const char c = lit[litAt];
    if (isSpace(c)) {
      if (!skipSpace())
        return Match::More;
      ++litAt;
      continue;
    }
    if (isPunct(c) && !skipSpace())
      return Match::More;
    if (at == buf_.size())
      return final ? Match::No : Match::More;
    if (buf_[at] != c)
      return Match::No;
    ++at;
    ++litAt;
  }
  return Match::Yes;
}

void ReplyParser::startCall(Delta &d) {
  named_ = true;
  calls_.push_back({newId_(), name_, pendingArgs_});
  CallDelta c;
  c.index = static_cast<int32_t>(calls_.size() - 1);
  c.id = calls_.back().id;
  c.name = name_;
  c.arguments = pendingArgs_;
  pendingArgs_.clear();
  d.calls.push_back(std::move(c));
}

void ReplyParser::abandonCall(Delta &d) {
  if (named_) {
    // The call was announced: it keeps what it has; the rest is text.
    state_ = State::Tail;
    stripLeading_ = true;
    return;
  }
  // Not a call after all: the text from where it seemed to start is
  // content, and the search goes on after its first character (or the
  // whole trigger).
  pos_ = callStart_;
  const size_t skip =
      std::max<size_t>(1, firstCall_ ? format_->trigger.size() : 0);
  emitContent(d, std::string_view(buf_).substr(pos_, skip));
  pos_ += std::min(skip, buf_.size() - pos_);
  state_ = firstCall_ ? State::Content : State::Tail;
  pendingArgs_.clear();
  name_.clear();
}

bool ReplyParser::stepCall(Delta &d, bool final) {
  const ToolCallFormat &f = *format_;
  for (;;) {
    if (!inSlot_) {
      const std::string lit =
          piece_ == 0 && firstCall_ ? f.opening() : f.literals[piece_];
      // Matched from its start each time: a partial match moves nothing,
      // so a mismatch found later settles the text as a whole reply would.
      size_t at = pos_, litAt = 0;
      Match m = literal(lit, at, litAt, final);
      if (m == Match::More)
        return false;
      if (m == Match::No) {
        abandonCall(d);
        return true;
      }
      pos_ = at;
      if (piece_ == f.slots.size()) {
        if (!named_) { // a format without a name slot cannot happen
          abandonCall(d);
          return true;
        }
        state_ = State::AfterCall;
        firstCall_ = false;
        return true;
      }
      inSlot_ = true;
      continue;
    }
    const ToolCallFormat::Slot slot = f.slots[piece_];
    if (slot == ToolCallFormat::Slot::Name ||
        slot == ToolCallFormat::Slot::Id) {
      const bool name = slot == ToolCallFormat::Slot::Name;
      size_t at = pos_;
      while (at < buf_.size() &&
             (name ? isNameChar(buf_[at]) : isAlnum(buf_[at])))
        ++at;
      if (name)
        name_ += buf_.substr(pos_, at - pos_);
      pos_ = at;
      if (at == buf_.size() && !final)
        return false;
      if (name) {
        if (name_.empty()) {
          abandonCall(d);
          return true;
        }
        startCall(d);
      }
      ++piece_;
      inSlot_ = false;
      continue;
    }
    // Arguments: a JSON value, passed through as written.
    std::string taken;
    bool done = false;
    while (pos_ < buf_.size() && !done) {
      const char c = buf_[pos_];
      if (!argsStarted_) {
        if (isSpace(c)) {
          ++pos_;
          continue;
        }
        if (c != '{' && c != '[') {
          abandonCall(d);
          return true;
        }
        argsStarted_ = true;
      }
      taken += c;
      ++pos_;
      if (inString_) {
        if (escaped_)
          escaped_ = false;
        else if (c == '\\')
          escaped_ = true;
        else if (c == '"')
          inString_ = false;
      } else if (c == '"') {
        inString_ = true;
      } else if (c == '{' || c == '[') {
        ++depth_;
      } else if (c == '}' || c == ']') {
        done = --depth_ == 0;
      }
    }
    if (named_) {
      calls_.back().arguments += taken;
      if (!taken.empty()) {
        if (!d.calls.empty() &&
            d.calls.back().index == static_cast<int32_t>(calls_.size() - 1))
          d.calls.back().arguments += taken;
        else
          d.calls.push_back(
              {static_cast<int32_t>(calls_.size() - 1), "", "", taken});
      }
    } else {
      pendingArgs_ += taken;
    }
    if (!done) {
      if (!final)
        return false;
      if (!argsStarted_ && !named_) {
        abandonCall(d);
        return true;
      }
    }
    argsStarted_ = inString_ = escaped_ = false;
    depth_ = 0;
    ++piece_;
    inSlot_ = false;
    if (!done) { // final, unfinished: the call keeps what it has
      state_ = State::Tail;
      return true;
    }
  }
}

bool ReplyParser::step(Delta &d, bool final) {
  std::string_view rest = std::string_view(buf_).substr(pos_);
  switch (state_) {
  case State::Start: {
    size_t ws = 0;
    while (ws < rest.size() && isSpace(rest[ws]))
      ++ws;
    std::string_view body = rest.substr(ws);
    if (body.empty() && !final)
      return false;
    if (reasoning_ && !body.empty()) {
      const std::string &open = reasoning_->open;
      if (body.substr(0, open.size()) == open) {
        pos_ += ws + open.size();
        state_ = State::Reasoning;
        return true;
      }
      if (body.size() < open.size() &&
          open.compare(0, body.size(), body) == 0 && !final)
        return false;
    }
    reasoning_.reset(); // one block, at the start
    if (format_ && format_->trigger.empty() && !body.empty() &&
        body.front() == '{') {
      callStart_ = pos_;
      state_ = State::Call;
      return true;
    }
    state_ = State::Content;
    return true;
  }
  case State::Reasoning: {
    const std::string &close = reasoning_->close;
    const size_t at = rest.find(close);
    if (at != std::string_view::npos) {
      d.reasoning += rest.substr(0, at);
      pos_ += at + close.size();
      stripLeading_ = true;
      state_ = State::Start;
      reasoning_.reset();
      return true;
    }
    const size_t hold = final ? 0 : partialSuffix(rest, close);
    d.reasoning += rest.substr(0, rest.size() - hold);
    pos_ += rest.size() - hold;
    return false;
  }
  case State::Content: {
    if (format_ && !format_->trigger.empty()) {
      const size_t at = rest.find(format_->trigger);
      if (at != std::string_view::npos) {
        emitContent(d, rest.substr(0, at));
        pos_ += at;
        callStart_ = pos_;
        state_ = State::Call;
        return true;
      }
      const size_t hold = final ? 0 : partialSuffix(rest, format_->trigger);
      emitContent(d, rest.substr(0, rest.size() - hold));
      pos_ += rest.size() - hold;
      return false;
    }
    emitContent(d, rest);
    pos_ = buf_.size();
    return false;
  }
  case State::Call:
    return stepCall(d, final);
  case State::AfterCall: {
    const ToolCallFormat &f = *format_;
    size_t at = pos_, litAt = 0;
    Match next = literal(f.separator + f.literals.front(), at, litAt, final);
    if (next == Match::Yes) {
      callStart_ = pos_;
      pos_ = at;
      piece_ = 0;
      inSlot_ = true;
      named_ = false;
      name_.clear();
      state_ = State::Call;
      return true;
    }
    if (next == Match::More)
      return false;
    at = pos_;
    litAt = 0;
    Match close = literal(f.blockClose, at, litAt, final);
    if (close == Match::More)
      return false;
    if (close == Match::Yes)
      pos_ = at;
    state_ = State::Tail;
    stripLeading_ = true;
    return true;
  }
  case State::Tail:
    emitContent(d, rest);
    pos_ = buf_.size();
    return false;
  }
  return false;
}

ReplyParser::Delta ReplyParser::push(std::string_view text) {
  buf_ += text;
  Delta d;
  while (step(d, false)) {
  }
  return d;
}

ReplyParser::Delta ReplyParser::finish() {
  Delta d;
  while (step(d, true)) {
  }
  return d;
}

ReplyParser::Whole ReplyParser::parse(const ToolCallFormat *format,
                                      std::optional<ReasoningMarkers> reasoning,
                                      bool startsInReasoning,
                                      std::string_view text,
                                      std::function<std::string()> newId) {
  ReplyParser p(format, std::move(reasoning), startsInReasoning,
                std::move(newId));
  Whole w;
  for (Delta d : {p.push(text), p.finish()}) {
    w.reasoning += d.reasoning;
    w.content += d.content;
  }
  w.calls = p.calls();
  return w;
}

} // namespace llmc::text
