// libFuzzer: arbitrary bytes as the body of /v1/completions and
// /v1/chat/completions. Every input must parse or be refused with an
// ApiError; nothing else may escape, crash or hang.
#include "llmc/runtime/openai_api.h"

#include <cstdint>
#include <string>

namespace {

/// Bytes as token ids: enough for the parser to tokenize and template.
class ByteTokenizer : public llmc::tok::Tokenizer {
public:
  std::vector<int32_t> encode(std::string_view text, bool) const override {
    return {text.begin(), text.end()};
  }
  std::string decode(const std::vector<int32_t> &ids, bool) const override {
    std::string s;
    for (int32_t id : ids)
      s += static_cast<char>(id & 0x7f);
    return s;
  }
  std::string tokenBytes(int32_t id) const override {
    return std::string(1, static_cast<char>(id));
  }
  std::string tokenText(int32_t id) const override { return tokenBytes(id); }
  int32_t vocabSize() const override { return 256; }
  std::optional<int32_t> tokenId(std::string_view) const override {
    return std::nullopt;
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ByteTokenizer tokenizer;
  static llmc::ChatTemplate chat(
      "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}",
      "fuzz template", tokenizer);
  static llmc::api::ModelInfo model = [] {
    llmc::api::ModelInfo m;
    m.name = "m";
    m.contextLength = 64;
    m.vocabSize = 256;
    m.kvCapacityTokens = 1024;
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
  return 0;
}
