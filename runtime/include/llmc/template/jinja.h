//===- jinja.h - Chat-template interpreter (a Jinja2 subset) ----*- C++ -*-===//
//
// Renders Hugging Face chat templates the way transformers' apply_chat_template
// does: Jinja2 with trim_blocks, lstrip_blocks, loop controls, the generation
// tag, tojson as json.dumps(ensure_ascii=False), raise_exception and
// strftime_now. See test/data/chat-templates/README.md for the exact rules.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/support/error.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace llmc::tmpl {

// A template that cannot be parsed or rendered: the message names the construct
// and line:column, e.g. "chat template line 3:14: unsupported filter
// 'wordwrap'".
class TemplateError : public llmc::Error {
public:
  using llmc::Error::Error;
};

// raise_exception(msg) in the template: what() == msg exactly.
class RaisedException : public TemplateError {
public:
  using TemplateError::TemplateError;
};

struct RenderOptions {
  // The local time strftime_now() formats (ISO 8601, no zone).
  std::string strftimeNow = "2024-07-26T00:00:00";
  // Bounds that keep a hostile template from hanging or exhausting memory;
  // crossing one is a TemplateError. maxOutputBytes also caps every string
  // and list built while rendering.
  std::size_t maxOutputBytes = std::size_t{64} << 20;
  // Loop iterations, macro calls and per-item filter work, all together.
  std::uint64_t maxSteps = 50'000'000;
  // Nesting of expressions, blocks and macro calls.
  int maxDepth = 400;
};

// JSON text parsed for render()'s context as Python's json.loads reads it:
// integers of any size keep their digits (nlohmann rounds those beyond 64
// bits to doubles; these stay tagged binary values that render prints
// digit for digit). A discarded value for malformed text, as
// nlohmann::ordered_json::parse(text, nullptr, false).
nlohmann::ordered_json parseContextJson(std::string_view text);

// Whether `text` may hold an integer beyond 64 bits (a run of 20 digits or
// more): when not, parseContextJson and nlohmann's parse agree.
bool mayHoldBigIntegers(std::string_view text);

namespace detail {
struct Program;
}

class Template {
public:
  // Parses; throws TemplateError. The source is taken byte for byte.
  explicit Template(std::string source);
  ~Template();
  Template(const Template &);
  Template(Template &&) noexcept;
  Template &operator=(const Template &);
  Template &operator=(Template &&) noexcept;

  // context: the template variables as JSON (messages, tools, documents,
  // add_generation_prompt, bos_token, eos_token, extra variables). A key whose
  // value is null is defined-as-none; a missing key is undefined. A null
  // context means no variables. Throws
  // TemplateError (RaisedException for raise_exception). Thread-safe: a
  // Template is immutable after construction.
  std::string render(const nlohmann::ordered_json &context,
                     const RenderOptions &options = {}) const;

private:
  std::shared_ptr<const detail::Program> program_;
};

} // namespace llmc::tmpl
