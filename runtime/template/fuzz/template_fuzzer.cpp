// Parses and renders arbitrary template text against a small fixed context.
// Tight limits keep every input fast; only llmc::Error may escape a render.
#include "llmc/template/jinja.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  static const nlohmann::ordered_json context =
      nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Hi ☀️ {{ x }}"},
      {"role": "assistant", "content": null,
       "tool_calls": [{"id": "call12345", "type": "function",
                       "function": {"name": "f", "arguments": {"a": 1.5, "b": [true, null]}}}]},
      {"role": "tool", "content": "{\"t\": 22}"}
    ],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "documents": null,
    "add_generation_prompt": true,
    "bos_token": "<s>",
    "eos_token": "</s>"
  })");
  llmc::tmpl::RenderOptions options;
  options.maxOutputBytes = 64 << 10;
  options.maxSteps = 20000;
  options.maxDepth = 200;
  try {
    llmc::tmpl::Template tmpl(
        std::string(reinterpret_cast<const char *>(data), size));
    (void)tmpl.render(context, options);
  } catch (const llmc::Error &) {
  }
  return 0;
}
