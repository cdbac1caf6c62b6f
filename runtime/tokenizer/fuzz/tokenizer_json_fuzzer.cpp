// Feeds arbitrary bytes to the tokenizer.json loader.
#include "fuzz_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzzTokenizer(llmc::tok::TokenizerKind::HFJson, data, size,
                       "fuzz.json");
}
