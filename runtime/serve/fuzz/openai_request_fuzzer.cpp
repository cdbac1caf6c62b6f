// libFuzzer: arbitrary bytes as the body of /v1/completions,
// /v1/chat/completions (on a template without tool calls and on one with,
// so that tools compile into grammars) and /v1/responses. Every input must
// parse or be refused with an ApiError; nothing else may escape, crash or
// hang.
#include "llmc/runtime/openai_api.h"
#include "llmc/runtime/responses_api.h"

#include "byte_tokenizer.h" // test/unit/serve

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static llmc::test::ByteTokenizer tokenizer;
  static llmc::ChatTemplate chat(
      "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
      "fuzz template", tokenizer);
  // Hermes-style calls (the derivation finds `<tool_call>` in it).
  static llmc::ChatTemplate tools(
      "{% for m in messages %}{% if m.tool_calls %}{% for c in m.tool_calls "
      "%}{% if not loop.first %}\n{% endif %}<tool_call>\n{\"name\": \"{{ "
      "c.function.name }}\", \"arguments\": {{ c.function.arguments | "
      "tojson }}}\n</tool_call>{% endfor %}{% else %}{{ m.role }}: {{ "
      "m.content }}{% endif %}\n{% endfor %}{% if add_generation_prompt "
      "%}assistant: {% endif %}",
      "fuzz tool template", tokenizer);
  static llmc::grammar::GrammarCache grammars(
      std::make_shared<llmc::grammar::TokenVocabulary>(tokenizer, 256));
  static llmc::api::ModelInfo model = [] {
    llmc::api::ModelInfo m;
    m.name = "m";
    m.contextLength = 64;
    m.vocabSize = 256;
    m.maxNumSeqs = 4;
    m.tokenizer = &tokenizer;
    m.chatTemplate = &chat;
    return m;
  }();
  static llmc::api::ModelInfo toolModel = [] {
    llmc::api::ModelInfo m = model;
    m.chatTemplate = &tools;
    m.contextLength = 4096;
    m.grammars = &grammars;
    return m;
  }();
  std::string body(reinterpret_cast<const char *>(data), size);
  for (auto endpoint :
       {llmc::api::Endpoint::Completions, llmc::api::Endpoint::Chat}) {
    try {
      llmc::api::parseRequest(endpoint, body, model);
    } catch (const llmc::api::ApiError &) {
    }
  }
  try {
    llmc::api::parseRequest(llmc::api::Endpoint::Chat, body, toolModel);
  } catch (const llmc::api::ApiError &) {
  }
  try {
    auto parsed = nlohmann::ordered_json::parse(body, nullptr, false);
    if (parsed.is_object())
      llmc::api::parseRequest(llmc::api::Endpoint::Chat,
                              llmc::api::chatBodyForResponse(parsed), model);
  } catch (const llmc::api::ApiError &) {
  }
  for (auto endpoint : {llmc::api::tokenize, llmc::api::detokenize}) {
    try {
      endpoint(body, model);
    } catch (const llmc::api::ApiError &) {
    }
  }
  return 0;
}
