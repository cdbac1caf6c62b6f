//===- tool_calls.h - Tool calls and reasoning in a reply's text -*- C++
//-*-===//
//
// A chat model writes tool calls and reasoning in its template's own
// markup: `<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>`
// (Hermes, Qwen), `[TOOL_CALLS][{...}, {...}]` (Mistral), a bare
// `{"name": ..., "parameters": ...}` (Llama 3.x), `<think>...</think>`.
// ToolCallFormat describes one template's markup (runtime/app derives it by
// rendering the template); ReplyParser splits a reply's text, as it
// streams, into reasoning, content and calls by that description.
//
// One parser per reply (one sample); the caller owns it and feeds it from
// one thread. The same text gives the same result however it is cut into
// pushes: the streamed and the whole reply agree.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmc::text {

/// How one template writes an assistant turn's tool calls.
struct ToolCallFormat {
  enum class Slot : uint8_t { Name, Arguments, Id };
  /// One call: literals[0] slots[0] literals[1] ... slots[k-1] literals[k].
  std::vector<std::string> literals;
  std::vector<Slot> slots;
  /// Around all the calls of a turn, and between two calls.
  std::string blockOpen, separator, blockClose;
  /// What opens the calls in free text (a marker such as `<tool_call>`);
  /// empty when a reply of calls simply starts with the call's JSON (Llama
  /// 3.x), which is then recognised only at the start of a reply.
  std::string trigger;
  /// The template renders two calls in one turn.
  bool parallel = true;
  /// History: the template concatenates `arguments` as text (DeepSeek R1),
  /// rather than reading it as a mapping.
  bool argumentsAsText = false;
  /// > 0: the template checks that call ids are this many alphanumerics
  /// (Mistral's 9); ids llmc makes follow it.
  int idLength = 0;

  /// blockOpen + literals[0]: what the first call starts with.
  std::string opening() const { return blockOpen + literals.front(); }
  /// One line for logs and llmc inspect, e.g.
  /// `<tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call>`.
  std::string describe() const;
};

/// A template's reasoning block, e.g. `<think>` ... `</think>`.
struct ReasoningMarkers {
  std::string open, close;
};

struct ToolCall {
  std::string id, name, arguments; // arguments: the JSON text as written
};

class ReplyParser {
public:
  /// `format` null: no calls are parsed (no tools, or tool_choice none).
  /// `reasoning` null: no reasoning block. `startsInReasoning`: the prompt
  /// ended inside an open block. `newId` names each call.
  ReplyParser(const ToolCallFormat *format,
              std::optional<ReasoningMarkers> reasoning, bool startsInReasoning,
              std::function<std::string()> newId);

  /// What new text adds. A call's first delta carries its index, id and
  /// whole name; its arguments follow as the model writes them.
  struct CallDelta {
    int32_t index = 0;
    std::string id, name; // set in the call's first delta only
    std::string arguments;
  };
  struct Delta {
    std::string reasoning, content;
    std::vector<CallDelta> calls;
    bool empty() const {
      return reasoning.empty() && content.empty() && calls.empty();
    }
  };
  Delta push(std::string_view text);
  /// The end of the reply: what was held back is settled (an unfinished
  /// marker is content; an unfinished call keeps what it has).
  Delta finish();

  /// Everything so far, whole.
  const std::vector<ToolCall> &calls() const { return calls_; }

  /// A whole reply.
  struct Whole {
    std::string reasoning, content;
    std::vector<ToolCall> calls;
  };
  static Whole parse(const ToolCallFormat *format,
                     std::optional<ReasoningMarkers> reasoning,
                     bool startsInReasoning, std::string_view text,
                     std::function<std::string()> newId);

private:
  enum class State { Start, Reasoning, Content, Call, AfterCall, Tail };
  enum class Match { Yes, No, More };
  /// Matches `lit` from litAt against buf_ from `at`, whitespace in the
  /// literal and around JSON punctuation being optional.
  Match literal(const std::string &lit, size_t &at, size_t &litAt,
                bool final) const;
  bool step(Delta &d, bool final); // false: needs more text
  bool stepCall(Delta &d, bool final);
  void abandonCall(Delta &d);
  void emitContent(Delta &d, std::string_view s);
  void startCall(Delta &d);

  const ToolCallFormat *format_;
  std::optional<ReasoningMarkers> reasoning_;
  std::function<std::string()> newId_;
  std::string buf_; // text not yet settled, from pos_
  size_t pos_ = 0;
  State state_ = State::Start;
  bool contentStarted_ = false; // non-space content was emitted
  bool stripLeading_ = false;   // drop spaces after a closed reasoning block
  // The call being read: piece index (literal i, then slot i), where the
  // call's text began in buf_.
  size_t piece_ = 0, callStart_ = 0;
  bool inSlot_ = false, firstCall_ = true;
  std::string name_, pendingArgs_;
  bool named_ = false;
  // The arguments scanner: nesting depth, inside a string, after a '\'.
  int depth_ = 0;
  bool inString_ = false, escaped_ = false, argsStarted_ = false;
  std::vector<ToolCall> calls_;
};

} // namespace llmc::text
