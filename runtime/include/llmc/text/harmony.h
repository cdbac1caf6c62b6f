//===- harmony.h - gpt-oss's harmony channels of a reply --------*- C++ -*-===//
//
// gpt-oss answers in OpenAI's harmony format: after the prompt's
// `<|start|>assistant`, a reply is messages of
//   <|channel|>NAME[ to=RECIPIENT][<|constrain|>TYPE]<|message|>TEXT<|end|>
// each next one opened by `<|start|>ROLE`, the last closed by `<|return|>`
// (or `<|call|>` for a tool call). HarmonyReply splits the tokens of a reply,
// as they stream, into the `analysis` channel's text (reasoning), the
// `final` and `commentary` channels' (content) and tool calls: a message
// with a recipient (` to=functions.NAME`, in its role header or after its
// channel, the two places gpt-oss writes it) is a call of NAME whose body is
// the arguments; the special tokens and the headers appear in none. One
// reply (one sample) per object; the caller owns it and feeds it from one
// thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/text/stream_decoder.h"
#include "llmc/text/tool_calls.h"

#include <functional>
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

  /// `newId` names each call (null: "call_0", "call_1", ...).
  HarmonyReply(const Tokenizer &tokenizer, Markers markers,
               std::function<std::string()> newId = nullptr);

  /// The text the new tokens add to each part; a part with nothing new is
  /// "". UTF-8 split across tokens is held back until whole. A call's
  /// first delta carries its id and name, then its arguments follow.
  struct Delta {
    std::string reasoning, content;
    std::vector<ReplyParser::CallDelta> calls;
  };
  Delta push(const std::vector<int32_t> &tokens);
  /// What is held back, at the end of the reply.
  Delta finish();
  /// The calls so far, whole.
  const std::vector<ToolCall> &calls() const { return calls_; }
  /// The call a constrained reply writes, as a ToolCallFormat (channel
  /// first: `<|channel|>commentary to=functions.NAME <|constrain|>json
  /// <|message|>ARGS`, one per turn), and the analysis message before it as
  /// a reasoning block: what runtime/app's reply grammar takes.
  static const ToolCallFormat &callFormat();
  static const ReasoningMarkers &analysisMarkers();
  /// The markers' text (a grammar vocabulary must hold those tokens).
  static std::vector<std::string> markerTexts();

  /// A whole reply, split.
  static ReplyParser::Whole split(const Tokenizer &tokenizer, Markers markers,
                                  const std::vector<int32_t> &tokens,
                                  std::function<std::string()> newId = nullptr);

private:
  enum class State { Header, Channel, Body, Done };
  void route(std::string text, Delta &d);
  void open(Delta &d);

  const Tokenizer &tokenizer_;
  Markers m_;
  StreamDecoder body_;
  State state_ = State::Header;
  std::function<std::string()> newId_;
  std::string header_;  // the current message's role header text
  std::string channel_; // and its channel's
  std::string pending_; // text before any marker that may be a header
  bool reasoning_ = false, call_ = false;
  bool started_ = false; // a marker was seen (else all text is content)
  bool plain_ = false;   // text before any marker that is no header
  std::vector<ToolCall> calls_;
};

} // namespace llmc::text
