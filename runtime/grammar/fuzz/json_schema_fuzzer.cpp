// Converts arbitrary text as a JSON Schema; a schema that converts is
// compiled over a vocabulary of every byte and pieces of JSON text, and a
// few tokens are taken, each step's mask checked against asking every
// token (the walk's shortcuts — a string's content as a chain of states,
// whole subtrees — must agree with walking each token). Only llmc::Error
// may escape; a mask that disagrees traps.
#include "llmc/grammar/json_schema.h"
#include "llmc/grammar/matcher.h"
#include "llmc/support/error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

namespace {

/// Every byte, and the pieces of a JSON text of 2 to 6 bytes (a quote with
/// what follows it, words with their space, digits, URIs, cut UTF-8): trie
/// subtrees big enough for the mask walk's shortcuts.
std::shared_ptr<const llmc::grammar::TokenVocabulary> vocabulary() {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b)
    tokens.emplace_back(1, static_cast<char>(b));
  const std::string text =
      R"({"name": "Ada Lovelace", "tags": ["x-1", "y_2"], "n": -12.5e3, )"
      R"("ok": true, "url": "https://example.com/a/b?q=1#f", "when": )"
      R"("2024-01-02T03:04:05Z", "id": "AB-12cd", "note": null, )"
      "\"\xC3\xA9\": \"\xE6\x97\xA5\xE6\x9C\xAC text\", "
      R"("esc": "a\"b\\c\u00e9", "list": [{"k": 1}, {}]})";
  std::set<std::string> seen;
  for (size_t i = 0; i < text.size(); ++i)
    for (size_t n = 2; n <= 6 && i + n <= text.size(); ++n)
      if (seen.insert(text.substr(i, n)).second)
        tokens.push_back(text.substr(i, n));
  tokens.emplace_back(); // EOS
  return std::make_shared<llmc::grammar::TokenVocabulary>(std::move(tokens));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  if (size > 4096)
    return 0;
  static const auto vocab = vocabulary();
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
      int32_t pick = -1, allowed = 0;
      for (int32_t t = 0; t < mask.size(); ++t) {
        if (mask.test(t) != (t == eos ? m.canEnd() : m.allows(t)))
          __builtin_trap(); // the mask and the walk disagree on token t
        if (mask.test(t) && t != eos && allowed++ % 7 == i % 7)
          pick = t;
      }
      if (pick < 0 || !m.accept(pick) || m.ended())
        break;
    }
  } catch (const llmc::Error &) {
  }
  return 0;
}
