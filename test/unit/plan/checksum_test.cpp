#include "checksum.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmc::detail {
namespace {

TEST(Checksum, MatchesXXH64ReferenceVectors) {
  EXPECT_EQ(checksum("", 0), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(checksum("abc", 3), 0x44BC2CF5AD770999ULL);
}

TEST(Checksum, StreamingEqualsOneShotForEverySplit) {
  std::vector<uint8_t> data(300);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<uint8_t>(i * 131 + 7);
  for (size_t n : {0, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 65, 300}) {
    uint64_t whole = checksum(data.data(), n);
    for (size_t split = 0; split <= n; split += 5) {
      Checksum c;
      c.update(data.data(), split);
      c.update(data.data() + split, n - split);
      ASSERT_EQ(c.digest(), whole) << n << " split at " << split;
    }
    Checksum bytewise;
    for (size_t i = 0; i < n; ++i)
      bytewise.update(&data[i], 1);
    ASSERT_EQ(bytewise.digest(), whole) << n;
  }
}

TEST(Checksum, EveryBitFlipChangesIt) {
  std::vector<uint8_t> data(100, 0);
  uint64_t base = checksum(data.data(), data.size());
  for (size_t i = 0; i < data.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      data[i] ^= uint8_t(1u << bit);
      ASSERT_NE(checksum(data.data(), data.size()), base) << i << ":" << bit;
      data[i] ^= uint8_t(1u << bit);
    }
}

} // namespace
} // namespace llmc::detail
