// Every prefix and many single-byte corruptions of a valid file must parse or
// throw llmc::Error: never crash, hang or read out of bounds (run under ASan).
#include "llmc/weights/gguf.h"
#include "llmc/weights/gguf_writer.h"

#include "test_util.h"

#include <random>

namespace llmc::weights::test {
namespace {

std::vector<uint8_t> smallFile() {
  GGUFWriter w;
  w.addString("general.architecture", "llama");
  w.addU32("general.alignment", 32);
  w.addF32("llama.rope.freq_base", 10000.0f);
  w.addStringArray("tokenizer.ggml.tokens", {"a", "bc", "<s>"});
  w.addIntArray("tokenizer.ggml.token_type", {1, 1, 3});
  float x[64];
  for (int i = 0; i < 64; ++i)
    x[i] = static_cast<float>(i) / 7.0f;
  w.addTensor("q8", {2, 32}, x, DType::Q8_0);
  // Last tensor is a multiple of 32 bytes, so the file has no trailing
  // padding and every proper prefix lacks needed bytes.
  w.addTensor("w", {2, 4}, x, DType::F32);
  return w.serialize();
}

TEST(GGUFTruncation, EveryPrefixThrows) {
  auto full = smallFile();
  EXPECT_NO_THROW(GGUFFile::parse(full.data(), full.size(), "s.gguf"));
  for (size_t n = 0; n < full.size(); ++n) {
    // A heap copy of exactly n bytes, so ASan flags any read past it.
    std::vector<uint8_t> prefix(full.begin(), full.begin() + n);
    try {
      GGUFFile::parse(prefix.data(), n, "s.gguf");
      ADD_FAILURE() << "prefix of " << n << " bytes parsed";
    } catch (const llmc::Error &e) {
      EXPECT_NE(std::string(e.what()).find("s.gguf"), std::string::npos)
          << e.what();
    }
  }
}

TEST(GGUFTruncation, ByteCorruptionsNeverCrash) {
  auto full = smallFile();
  std::mt19937 rng(1234);
  size_t ok = 0, errors = 0;
  for (size_t pos = 0; pos < full.size(); ++pos)
    for (uint8_t v : {uint8_t{0}, uint8_t{0xff}, uint8_t{0x80},
                      static_cast<uint8_t>(rng())}) {
      auto copy = full;
      copy[pos] = v;
      try {
        auto f = GGUFFile::parse(copy.data(), copy.size(), "s.gguf");
        for (const auto &t : f.tensors()) {
          std::vector<float> out(static_cast<size_t>(t.numElements()));
          toFloat32(t, out.data());
        }
        ++ok;
      } catch (const llmc::Error &) {
        ++errors;
      }
    }
  EXPECT_GT(ok, 0u);
  EXPECT_GT(errors, 0u);
}

} // namespace
} // namespace llmc::weights::test
