// Converts arbitrary text as a JSON Schema; a schema that converts is
// compiled over fuzz_vocabulary.h's tokens and a few are taken, each step's
// mask checked against asking every token. Only llmc::Error may escape; a
// mask that disagrees traps.
#include "fuzz_vocabulary.h"

#include "llmc/grammar/json_schema.h"
#include "llmc/support/error.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  if (size > 4096)
    return 0;
  static const auto vocab = llmc::grammar::fuzz::vocabulary();
  const int32_t eos = vocab->size() - 1;
  const std::string text(reinterpret_cast<const char *>(data), size);
  try {
    // Both readings of objects without additionalProperties.
    const llmc::grammar::JsonSchemaOptions options{.strictObjects =
                                                       size % 2 == 1};
    auto g = std::make_shared<llmc::grammar::CompiledGrammar>(
        llmc::grammar::grammarFromJsonSchema(text, "fuzz.json", options), vocab,
        16);
    llmc::grammar::Matcher m(g, {eos});
    llmc::grammar::TokenMask mask(vocab->size());
    for (int i = 0; i < 16; ++i) {
      m.fillMask(mask);
      llmc::grammar::fuzz::checkMaskIsExact(m, mask, eos);
      int32_t pick = -1, allowed = 0;
      for (int32_t t = 0; t < eos; ++t)
        if (mask.test(t) && allowed++ % 7 == i % 7)
          pick = t;
      if (pick < 0 || !m.accept(pick) || m.ended())
        break;
    }
  } catch (const llmc::Error &) {
  }
  return 0;
}
