// Converts arbitrary text as a JSON Schema; a schema that converts is
// compiled over a byte vocabulary and a few tokens are masked and taken.
// Only llmc::Error may escape.
#include "llmc/grammar/json_schema.h"
#include "llmc/grammar/matcher.h"
#include "llmc/support/error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  if (size > 4096)
    return 0;
  static const auto vocab = [] {
    std::vector<std::string> bytes;
    for (int b = 0; b < 256; ++b)
      bytes.emplace_back(1, static_cast<char>(b));
    bytes.push_back("{\"");
    bytes.push_back("\":");
    bytes.emplace_back(); // EOS
    return std::make_shared<llmc::grammar::TokenVocabulary>(bytes);
  }();
  const std::string text(reinterpret_cast<const char *>(data), size);
  try {
    // Both readings of objects without additionalProperties.
    const llmc::grammar::JsonSchemaOptions options{.strictObjects =
                                                       size % 2 == 1};
    auto g = std::make_shared<llmc::grammar::CompiledGrammar>(
        llmc::grammar::grammarFromJsonSchema(text, "fuzz.json", options), vocab,
        16);
    llmc::grammar::Matcher m(g, {vocab->size() - 1});
    llmc::grammar::TokenMask mask(vocab->size());
    for (int i = 0; i < 32; ++i) {
      m.fillMask(mask);
      int32_t pick = -1;
      for (int32_t t = 0; t < mask.size(); ++t)
        if (mask.test(t) && (pick < 0 || (t * 7 + i) % 5 == 0))
          pick = t;
      if (pick < 0 || !m.accept(pick) || m.ended())
        break;
    }
  } catch (const llmc::Error &) {
  }
  return 0;
}
