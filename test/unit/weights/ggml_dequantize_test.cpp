//===- ggml_dequantize_test.cpp - Block formats against ggml itself -------===//
//
// test/data/ggml-quants/<TYPE>.bin hold what llama.cpp's own quantizer made
// of fixed inputs and what its own dequantizer makes of that
// (test/data/ggml-quants/make.sh). llmc must read the same floats: the
// expressions are ggml's, so only a fused multiply-add in one build and not
// the other may differ, by an ulp.
//
//===----------------------------------------------------------------------===//
#include "llmc/support/error.h"
#include "llmc/support/kquant.h"
#include "llmc/weights/tensor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <tuple>

namespace llmc::weights {
namespace {

struct Fixture {
  DType dtype;
  const char *file;
};

// Named as ggml names its types (ggml_type_traits::type_name).
const Fixture kFixtures[] = {
    {DType::Q8_0, "q8_0"}, {DType::Q4_0, "q4_0"}, {DType::Q4_1, "q4_1"},
    {DType::Q5_0, "q5_0"}, {DType::Q5_1, "q5_1"}, {DType::IQ4_NL, "iq4_nl"},
    {DType::Q2_K, "q2_K"}, {DType::Q3_K, "q3_K"}, {DType::Q4_K, "q4_K"},
    {DType::Q5_K, "q5_K"}, {DType::Q6_K, "q6_K"}};

std::vector<uint8_t> readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(GgmlDequantize, EqualsGgmlOnItsOwnQuantizersOutput) {
  for (const Fixture &f : kFixtures) {
    SCOPED_TRACE(f.file);
    std::vector<uint8_t> bytes =
        readAll(std::string(LLMC_DATA_DIR) + "/ggml-quants/" + f.file + ".bin");
    ASSERT_GE(bytes.size(), 8u);
    uint32_t head[2];
    std::memcpy(head, bytes.data(), 8);
    const int64_t n = head[1];
    const size_t qbytes = dtypeBytes(f.dtype, n);
    ASSERT_EQ(bytes.size(), 8 + qbytes + size_t(n) * 4);
    std::vector<float> want(static_cast<size_t>(n)), got(want.size());
    std::memcpy(want.data(), bytes.data() + 8 + qbytes, size_t(n) * 4);
    TensorRef t{"w", f.dtype, {3, n / 3}, bytes.data() + 8, qbytes, f.file};
    toFloat32(t, got.data());
    int differ = 0;
    for (int64_t i = 0; i < n; ++i) {
      // An ulp of slack for FMA contraction; a wrong bit, scale or min is
      // off by far more.
      const float ulp = std::nextafter(std::fabs(want[size_t(i)]), INFINITY) -
                        std::fabs(want[size_t(i)]);
      if (std::fabs(got[size_t(i)] - want[size_t(i)]) > 2 * ulp && ++differ < 4)
        ADD_FAILURE() << "value " << i << ": " << got[size_t(i)] << " vs ggml "
                      << want[size_t(i)];
    }
    EXPECT_EQ(differ, 0);
  }
}

// The integer form the kernels read (kquant::code, kquant::subScales)
// gives every value decode() gives, computed as ggml computes it.
TEST(GgmlDequantize, KQuantIntegerFormMatchesDecode) {
  for (kquant::Format f :
       {kquant::Format::Q4_K, kquant::Format::Q5_K, kquant::Format::Q6_K}) {
    const kquant::Layout l = kquant::layout(f);
    SCOPED_TRACE(std::string(l.ggml));
    std::string name(l.ggml);
    name[0] = 'q';
    std::vector<uint8_t> bytes =
        readAll(std::string(LLMC_DATA_DIR) + "/ggml-quants/" + name + ".bin");
    ASSERT_GE(bytes.size(), 8u);
    uint32_t head[2];
    std::memcpy(head, bytes.data(), 8);
    const int64_t blocks = head[1] / kquant::kBlock;
    ASSERT_GT(blocks, 0);
    int differ = 0;
    for (int64_t b = 0; b < blocks; ++b) {
      const uint8_t *block = bytes.data() + 8 + b * kquant::blockBytes(f);
      float y[kquant::kBlock];
      kquant::decode(f, block + l.headerAt, block + l.codesAt, y);
      const kquant::SubScales s = kquant::subScales(f, block + l.headerAt);
      for (int i = 0; i < kquant::kBlock; ++i) {
        const int j = i / (kquant::kBlock / s.count);
        const int q = kquant::code(f, block + l.codesAt, i);
        const float v =
            f == kquant::Format::Q6_K
                ? s.d * float(s.scale[j]) * float(q)
                : s.d * float(s.scale[j]) * float(q) - s.dmin * float(s.min[j]);
        if (v != y[i] && ++differ < 4)
          ADD_FAILURE() << "block " << b << " value " << i << ": " << v
                        << " vs " << y[i];
      }
    }
    EXPECT_EQ(differ, 0);
  }
}

// Q8_0, Q5_0 and Q4_0 blocks from ggml's own quantizer, quantized again as
// llmc's int8 / int4 in groups of 32, come back exactly: the GGUF's integers
// and scales, not a second rounding.
TEST(GgmlDequantize, SymmetricGroupsKeepQ8_0Q5_0Q4_0Exactly) {
  for (auto [file, dtype, int4] : {std::tuple{"q8_0", DType::Q8_0, false},
                                   std::tuple{"q5_0", DType::Q5_0, false},
                                   std::tuple{"q4_0", DType::Q4_0, true}}) {
    SCOPED_TRACE(file);
    std::vector<uint8_t> bytes =
        readAll(std::string(LLMC_DATA_DIR) + "/ggml-quants/" + file + ".bin");
    ASSERT_GE(bytes.size(), 8u);
    uint32_t head[2];
    std::memcpy(head, bytes.data(), 8);
    const int64_t n = head[1];
    std::vector<float> y(static_cast<size_t>(n));
    dequantizeGgml(dtype, bytes.data() + 8, n, y.data());
    const float qmin = int4 ? -8.0f : -127.0f, qmax = int4 ? 7.0f : 127.0f;
    for (int64_t b = 0; b < n / 32; ++b) {
      const float *x = &y[size_t(b * 32)];
      const float s = symmetricScale(x, 32, int4);
      for (int j = 0; j < 32; ++j) {
        const float q = std::clamp(std::nearbyint(x[j] / s), qmin, qmax);
        ASSERT_EQ(q * s, x[j]) << "block " << b << " value " << j;
      }
    }
  }
}

TEST(GgmlDequantize, BlockSizesAndNames) {
  EXPECT_EQ(dtypeBlockSize(DType::Q4_K), 256);
  EXPECT_EQ(dtypeBlockSize(DType::IQ4_NL), 32);
  EXPECT_EQ(dtypeBytes(DType::Q6_K, 512), 420u);
  EXPECT_EQ(dtypeBytes(DType::Q5_1, 64), 48u);
  EXPECT_STREQ(dtypeName(DType::Q3_K), "Q3_K");
  EXPECT_THROW(dtypeBytes(DType::Q4_K, 128), Error);
  std::vector<uint8_t> b(144);
  std::vector<float> y(256);
  EXPECT_THROW(dequantizeGgml(DType::F32, b.data(), 256, y.data()), Error);
  TensorRef shortT{"w", DType::Q4_K, {256}, b.data(), 100, "mem"};
  EXPECT_THROW(toFloat32(shortT, y.data()), Error);
}

} // namespace
} // namespace llmc::weights
