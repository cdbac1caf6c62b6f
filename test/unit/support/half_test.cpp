#include "llmc/support/half.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace llmc;

TEST(Half, Bf16RoundTripsExactlyRepresentableValues) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 0.15625f, 65536.0f})
    EXPECT_EQ(bf16ToFloat(floatToBf16(f)), f);
}

TEST(Half, Bf16RoundsToNearestEven) {
  // 1 + 2^-8 lies halfway between two bf16 values; ties go to the even one
  // (1.0).
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.0f + 1.0f / 256)), 1.0f);
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
}

TEST(Half, F16RoundTripsAndHandlesSubnormalsAndInfinity) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = f16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f))
      continue;
    EXPECT_EQ(floatToF16(f), h) << "half bits " << h;
  }
  EXPECT_EQ(f16ToFloat(0x3c00), 1.0f);
  EXPECT_EQ(f16ToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(floatToF16(1e6f), 0x7c00);
  EXPECT_EQ(floatToF16(1e-9f), 0x0000);
}
