// libFuzzer target: any bytes must parse or throw llmc::Error, nothing else.
#include "llmc/support/error.h"
#include "llmc/weights/gguf.h"

#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    auto f = llmc::weights::GGUFFile::parse(data, size, "fuzz.gguf");
    // Touch every tensor byte and decode small tensors, so ASan checks the
    // bounds the parser promised.
    volatile uint8_t sink = 0;
    for (const auto &t : f.tensors()) {
      for (size_t i = 0; i < t.nbytes; ++i)
        sink = sink ^ t.data[i];
      if (t.numElements() <= (1 << 16)) {
        std::vector<float> out(static_cast<size_t>(t.numElements()));
        llmc::weights::toFloat32(t, out.data());
      }
    }
    for (const auto &kv : f.metadata()) {
      try {
        (void)f.getInt(kv.first);
      } catch (const llmc::Error &) {
      }
      try {
        (void)f.getStringArray(kv.first);
      } catch (const llmc::Error &) {
      }
    }
  } catch (const llmc::Error &) {
  }
  return 0;
}
