// libFuzzer target: any bytes must parse or throw llmc::Error, nothing else.
#include "llmc/support/error.h"
#include "llmc/weights/safetensors.h"

#include <map>
#include <vector>

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
    // MXFP4 pairs (gpt-oss): joined, then every value decoded.
    std::map<std::string, const llmc::weights::TensorRef *, std::less<>> byName;
    for (const auto &t : tensors)
      byName.emplace(t.name, &t);
    for (const auto &t : llmc::weights::joinMxfp4Pairs(byName)) {
      std::vector<float> values(static_cast<size_t>(t->numElements()));
      llmc::weights::toFloat32(*t, values.data());
    }
  } catch (const llmc::Error &) {
  }
  return 0;
}
