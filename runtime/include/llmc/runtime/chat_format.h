//===- chat_format.h - What a chat template writes besides text -*- C++ -*-===//
//
// A template's tool-call markup and reasoning markers, found by rendering
// it rather than by a list of model names: an assistant turn with one
// probe call and with two, beside a turn of plain text and the generation
// prompt, shows what opens and closes the calls, what separates two, where
// the name, the arguments and the id go, and whether the template reads
// arguments as a mapping or as text. Reasoning markers are the known pairs
// (`<think>`/`</think>` and the like) that the template writes.
//
// One hand-written description: IBM Granite 3.x, whose templates never
// render calls but whose instructions name the format. gpt-oss's harmony
// is not described here: its replies are read by
// text::HarmonyReply (the model writes a call's recipient in either of two
// header positions, and the template renders only one).
//
// Pure functions of the template: call on any thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/text/tool_calls.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace llmc {

class ChatTemplate;

struct ChatFormat {
  std::optional<text::ToolCallFormat> tools; // null: no tool calls
  std::optional<text::ReasoningMarkers> reasoning;

  /// The markers' text, for a grammar vocabulary that must write them.
  std::vector<std::string> markers() const;
};

/// Derives the format by rendering probes (a template that fails on them,
/// or renders calls in a shape with no name and arguments, has none).
ChatFormat deriveChatFormat(const ChatTemplate &chat);

/// How one reply is read.
struct ReplyMarkup {
  const text::ToolCallFormat *tools = nullptr;     // null: no calls
  std::optional<text::ReasoningMarkers> reasoning; // null: no block
  bool startsInReasoning = false; // the prompt opened the block
};

/// The markup of a reply to `prompt` (rendered): the template's reasoning
/// block, open from the start when the prompt ends inside one (DeepSeek R1's
/// generation prompt), none when the prompt ends with a closed one (Qwen3
/// with enable_thinking false); the calls' format `withTools`.
ReplyMarkup replyMarkup(const ChatFormat &format, const std::string &prompt,
                        bool withTools);

/// OpenAI messages made ready for the template: `developer` is `system`;
/// `reasoning` (vLLM's name) is `reasoning_content`; a call's `arguments`
/// string becomes an object unless the template reads it as text (and the
/// other way round); a call gets `type: "function"` when it lacks one.
nlohmann::ordered_json
historyForTemplate(const nlohmann::ordered_json &messages,
                   const std::optional<text::ToolCallFormat> &format);

} // namespace llmc
