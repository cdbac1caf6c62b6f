//===- chat_template.cpp - A model's chat template, as HF renders it ------===//
#include "llmc/runtime/chat_template.h"
#include "llmc/text/harmony.h"

#include "llmc/support/error.h"

#include <algorithm>
#include <ctime>

namespace llmc {
std::string localTimeIso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

namespace {

tmpl::Template parse(const std::string &source, const std::string &origin) {
  try {
    return tmpl::Template(source);
  } catch (const tmpl::TemplateError &e) {
    throw Error(origin + ": " + e.what());
  }
}

} // namespace

ChatTemplate::ChatTemplate(std::string source, std::string origin,
                           const tok::Tokenizer &tokenizer)
    : source_(std::move(source)), origin_(std::move(origin)),
      tokenizer_(tokenizer), template_(parse(source_, origin_)),
      format_(deriveChatFormat(*this)) {}

std::string ChatTemplate::render(const nlohmann::ordered_json &messages,
                                 const nlohmann::ordered_json &tools,
                                 const nlohmann::ordered_json &documents,
                                 bool addGenerationPrompt,
                                 const nlohmann::ordered_json &kwargs) const {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  if (kwargs.is_object())
    ctx = kwargs;
  ctx["messages"] = messages;
  ctx["tools"] = tools;
  ctx["documents"] = documents;
  ctx["add_generation_prompt"] = addGenerationPrompt;
  // As transformers passes them: the special tokens' text from the
  // tokenizer config; undefined when the tokenizer has none.
  if (tokenizer_.bos)
    ctx["bos_token"] = tokenizer_.tokenText(*tokenizer_.bos);
  if (tokenizer_.eos)
    ctx["eos_token"] = tokenizer_.tokenText(*tokenizer_.eos);
  tmpl::RenderOptions ro;
  ro.strftimeNow = localTimeIso();
  try {
    return template_.render(ctx, ro);
  } catch (const tmpl::RaisedException &e) {
    throw Error(origin_ +
                ": the chat template raised an exception: " + e.what());
  } catch (const tmpl::TemplateError &e) {
    throw Error(origin_ + ": the chat template failed to render: " + e.what());
  }
}

std::vector<int64_t> chatEosIds(const std::vector<int64_t> &configEos,
                                const tok::Tokenizer &tokenizer,
                                const std::string &templateSource) {
  std::vector<int64_t> ids = configEos;
  // gpt-oss's harmony: `<|end|>` closes each message of a reply (the
  // analysis before the final answer), `<|return|>` the reply and `<|call|>`
  // a tool call; only those two end a turn.
  if (const auto harmony =
          text::HarmonyReply::forTemplate(tokenizer, templateSource)) {
    ids.push_back(harmony->ret);
    if (harmony->call >= 0)
      ids.push_back(harmony->call);
    ids.erase(std::remove(ids.begin(), ids.end(), int64_t(harmony->end)),
              ids.end());
  } else {
    for (const char *marker : kEndOfTurnMarkers)
      if (templateSource.find(marker) != std::string::npos)
        if (auto id = tokenizer.tokenId(marker))
          ids.push_back(*id);
    // Templates such as Mistral's and Llama 2's end a turn with the
    // eos_token variable rather than a literal marker.
    if (tokenizer.eos && templateSource.find("eos_token") != std::string::npos)
      ids.push_back(*tokenizer.eos);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<int64_t>
ChatTemplate::eosIds(const std::vector<int64_t> &configEos) const {
  return chatEosIds(configEos, tokenizer_, source_);
}

} // namespace llmc
