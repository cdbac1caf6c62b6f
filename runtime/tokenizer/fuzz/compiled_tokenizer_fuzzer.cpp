// Feeds arbitrary bytes to the loader of compiled tokenizers (what plans
// map: compileTokenizerJson's form). Seed it with the tokenizer section of a
// plan.
#include "fuzz_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzzTokenizer(llmc::tok::TokenizerKind::HFTables, data, size,
                       "fuzz.bin");
}
