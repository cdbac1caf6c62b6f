//===- chat_template.h - A model's chat template, as HF renders it -*- C++
//-*-===//
//
// Renders a conversation the way transformers' apply_chat_template does:
// the template gets `messages`, `tools`, `documents`,
// `add_generation_prompt`, and the tokenizer's `bos_token` / `eos_token`
// text (undefined when the tokenizer has none); strftime_now() gives the
// local time. Used by llmc chat and by the server's /v1/chat/completions.
//
// Thread-safe after construction (rendering does not change it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/chat_format.h"
#include "llmc/template/jinja.h"
#include "llmc/tokenizer/tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc {

/// Spellings of end-of-turn tokens in common chat templates.
inline constexpr const char *kEndOfTurnMarkers[] = {
    "<|im_end|>", "<|eot_id|>",    "<|end|>",
    "</s>",       "<end_of_turn>", "<|endoftext|>"};

/// The ids generation stops at in chat: `configEos` (config.json and
/// generation_config.json, as the plan stores them) plus the template's
/// end-of-turn tokens. A marker of kEndOfTurnMarkers counts when the
/// tokenizer has it as one token and its text appears in the template
/// source; and when the template writes the `eos_token` variable, the
/// tokenizer's EOS token ends turns too. Sorted, without duplicates.
std::vector<int64_t> chatEosIds(const std::vector<int64_t> &configEos,
                                const tok::Tokenizer &tokenizer,
                                const std::string &templateSource);

/// The local time as strftime_now() sees it (ISO 8601, no zone).
std::string localTimeIso();

class ChatTemplate {
public:
  /// `origin` names the template in errors (the plan, or a --chat-template
  /// file). Throws llmc::Error if it does not parse. The tokenizer must
  /// outlive the template.
  ChatTemplate(std::string source, std::string origin,
               const tok::Tokenizer &tokenizer);

  /// messages: a JSON array of {"role", "content", ...} objects as the
  /// OpenAI API carries them; tools and documents: JSON arrays or null.
  /// `kwargs`: more variables (chat_template_kwargs, enable_thinking); they
  /// do not replace the ones above. Throws llmc::Error with the
  /// interpreter's message (it names the construct, or quotes
  /// raise_exception's).
  std::string render(const nlohmann::ordered_json &messages,
                     const nlohmann::ordered_json &tools = nullptr,
                     const nlohmann::ordered_json &documents = nullptr,
                     bool addGenerationPrompt = true,
                     const nlohmann::ordered_json &kwargs = nullptr) const;

  /// The template's tool-call and reasoning markup (chat_format.h).
  const ChatFormat &format() const { return format_; }

  /// chatEosIds for this template.
  std::vector<int64_t> eosIds(const std::vector<int64_t> &configEos) const;

  const std::string &source() const { return source_; }
  const std::string &origin() const { return origin_; }

private:
  std::string source_, origin_;
  const tok::Tokenizer &tokenizer_;
  tmpl::Template template_;
  ChatFormat format_;
};

} // namespace llmc
