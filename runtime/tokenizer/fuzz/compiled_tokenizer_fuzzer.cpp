// Feeds arbitrary bytes to the loader of compiled tokenizers (what plans
// map: compileTokenizerJson's form); whatever loads must encode and decode
// without crashing. llmc::Error is the only way to refuse. Seed it with the
// tokenizer section of a plan.
#include "llmc/support/error.h"
#include "llmc/tokenizer/tokenizer.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  try {
    auto tokenizer = llmc::tok::loadTokenizerFromBytes(
        llmc::tok::TokenizerKind::HFTables, bytes, "{}", "fuzz.bin");
    auto ids = tokenizer->encode("Hello, world! <|endoftext|> 123 caf\xC3\xA9 "
                                 "\xF0\x9F\x98\x80 \xFF",
                                 true);
    tokenizer->decode(ids);
    tokenizer->decode({-1, 0, 1, 2, 1 << 30}, true);
    for (int32_t id = 0; id < 4; ++id)
      tokenizer->tokenBytes(id);
  } catch (const llmc::Error &) {
  }
  return 0;
}
