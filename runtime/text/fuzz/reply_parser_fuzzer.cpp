// libFuzzer: arbitrary model output through the reply parser, under each
// kind of tool-call format (a marker, a block, JSON first) and a reasoning
// block. Nothing may crash, and the text pushed whole and byte by byte must
// give the same reasoning, content and calls.
#include "llmc/text/tool_calls.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

using llmc::text::ReplyParser;
using llmc::text::ToolCallFormat;
using Slot = ToolCallFormat::Slot;

ToolCallFormat format(int kind) {
  ToolCallFormat f;
  if (kind == 0) { // Hermes
    f.literals = {"<tool_call>\n{\"name\": \"",
                  "\", \"arguments\": ", "}\n</tool_call>"};
    f.slots = {Slot::Name, Slot::Arguments};
    f.separator = "\n";
    f.trigger = "<tool_call>";
  } else if (kind == 1) { // Mistral
    f.blockOpen = "[TOOL_CALLS][";
    f.literals = {"{\"name\": \"", "\", \"arguments\": ", ", \"id\": \"",
                  "\"}"};
    f.slots = {Slot::Name, Slot::Arguments, Slot::Id};
    f.separator = ", ";
    f.blockClose = "]";
    f.trigger = "[TOOL_CALLS]";
  } else { // Llama 3.x
    f.literals = {"{\"name\": \"", "\", \"parameters\": ", "}"};
    f.slots = {Slot::Name, Slot::Arguments};
    f.parallel = false;
  }
  return f;
}

std::string ids() { return "id"; }

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const ToolCallFormat f = format(data[0] % 3);
  const bool reasoning = data[0] & 4, startsIn = data[0] & 8;
  const std::string text(reinterpret_cast<const char *>(data) + 1, size - 1);
  std::optional<llmc::text::ReasoningMarkers> markers;
  if (reasoning)
    markers = llmc::text::ReasoningMarkers{"<think>", "</think>"};
  const ReplyParser::Whole whole =
      ReplyParser::parse(&f, markers, startsIn, text, ids);
  ReplyParser p(&f, markers, startsIn, ids);
  ReplyParser::Whole pieces;
  auto add = [&](const ReplyParser::Delta &d) {
    pieces.reasoning += d.reasoning;
    pieces.content += d.content;
  };
  for (char c : text)
    add(p.push(std::string_view(&c, 1)));
  add(p.finish());
  pieces.calls = p.calls();
  if (pieces.reasoning != whole.reasoning || pieces.content != whole.content ||
      pieces.calls.size() != whole.calls.size())
    std::abort();
  for (size_t i = 0; i < whole.calls.size(); ++i)
    if (pieces.calls[i].name != whole.calls[i].name ||
        pieces.calls[i].arguments != whole.calls[i].arguments)
      std::abort();
  return 0;
}
