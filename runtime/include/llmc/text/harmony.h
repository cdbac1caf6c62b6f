//===- harmony.h - gpt-oss's harmony channels of a reply --------*- C++ -*-===//
//
// gpt-oss answers in OpenAI's harmony format: after the prompt's
// `<|start|>assistant`, a reply is messages of
//   <|channel|>NAME[ to=RECIPIENT][<|constrain|>TYPE]<|message|>TEXT<|end|>
// each next one opened by `<|start|>ROLE`, the last closed by `<|return|>`
// (or `<|call|>` for a tool call). HarmonyReply splits the tokens of a reply,
// as they stream, into the `analysis` channel's text (reasoning) and the
// `final` and `commentary` channels' (content); the special tokens and the
// headers appear in neither. One reply (one sample) per object; the caller
// owns it and feeds it from one thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/text/stream_decoder.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmc::text {

class HarmonyReply {
public:
  /// The markers by id, or nullopt when the tokenizer lacks one of start,
  /// channel, message, end and return (not a harmony model); call and
  /// constrain are -1 where the vocabulary leaves them reserved.
  struct Markers {
    int32_t start, channel, message, end, ret, call, constrain;
  };
  static std::optional<Markers> markersOf(const Tokenizer &tokenizer);
  /// The markers when a chat template writes harmony's channels and the
  /// tokenizer has them: whether a model's replies are harmony.
  static std::optional<Markers> forTemplate(const Tokenizer &tokenizer,
                                            std::string_view templateSource);

  HarmonyReply(const Tokenizer &tokenizer, Markers markers);

  /// The text the new tokens add to each part; a part with nothing new is
  /// "". UTF-8 split across tokens is held back until whole.
  struct Delta {
    std::string reasoning, content;
  };
  Delta push(const std::vector<int32_t> &tokens);
  /// What is held back, at the end of the reply.
  Delta flush();
  /// A whole reply, split.
  static Delta split(const Tokenizer &tokenizer, Markers markers,
                     const std::vector<int32_t> &tokens);

private:
  enum class State { Header, Channel, Body, Done };
  void route(std::string text, Delta &d) const;

  const Tokenizer &tokenizer_;
  Markers m_;
  StreamDecoder body_;
  State state_ = State::Header;
  std::string channel_; // the current message's header text
  bool reasoning_ = false;
  bool started_ = false; // a marker was seen (else all text is content)
};

} // namespace llmc::text
