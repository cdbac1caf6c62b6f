// libFuzzer target: any bytes must parse or throw llmc::Error, nothing else.
#include "llmc/support/error.h"
#include "llmc/weights/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    std::map<std::string, std::string> meta;
    auto tensors =
        llmc::weights::parseSafetensors(data, size, "fuzz.safetensors", &meta);
    // Touch every byte the parser vouched for, so ASan checks the bounds.
    volatile uint8_t sink = 0;
    for (const auto &t : tensors)
      for (size_t i = 0; i < t.nbytes; ++i)
        sink = sink ^ t.data[i];
  } catch (const llmc::Error &) {
  }
  return 0;
}
