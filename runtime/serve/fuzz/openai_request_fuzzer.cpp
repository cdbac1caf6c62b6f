// libFuzzer: arbitrary bytes as the body of /v1/completions and
// /v1/chat/completions. Every input must parse or be refused with an
// ApiError; nothing else may escape, crash or hang.
#include "llmc/runtime/openai_api.h"

#include "byte_tokenizer.h" // test/unit/serve

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static llmc::test::ByteTokenizer tokenizer;
  static llmc::ChatTemplate chat(
      "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
      "fuzz template", tokenizer);
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
  std::string body(reinterpret_cast<const char *>(data), size);
  for (auto endpoint :
       {llmc::api::Endpoint::Completions, llmc::api::Endpoint::Chat}) {
    try {
      llmc::api::parseRequest(endpoint, body, model);
    } catch (const llmc::api::ApiError &) {
    }
  }
  for (auto endpoint : {llmc::api::tokenize, llmc::api::detokenize}) {
    try {
      endpoint(body, model);
    } catch (const llmc::api::ApiError &) {
    }
  }
  return 0;
}
