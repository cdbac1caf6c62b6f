#include "llmc/support/half.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

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

namespace {
// e4m3 by its definition, independent of half.h: bias 7, 3 mantissa bits,
// subnormals at exponent 0, 0x7f / 0xff NaN.
double e4m3Value(int bits) {
  int e = (bits >> 3) & 15, m = bits & 7;
  double mag =
      e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1 + m / 8.0, e - 7);
  return bits & 0x80 ? -mag : mag;
}

// The e4m3 value nearest x (ties to the even mantissa), finite ones only.
int nearestE4M3(double x) {
  int best = 0;
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7f) == 0x7f || (x < 0) != bool(b & 0x80))
      continue;
    double d = std::fabs(e4m3Value(b) - x),
           dBest = std::fabs(e4m3Value(best) - x);
    if (d < dBest || (d == dBest && (b & 1) == 0 && (best & 1) == 1))
      best = b;
  }
  return best;
}
} // namespace

TEST(Half, Fp8E4M3DecodesEveryByte) {
  for (int b = 0; b < 256; ++b) {
    float f = fp8E4M3ToFloat(static_cast<uint8_t>(b));
    if ((b & 0x7f) == 0x7f)
      EXPECT_TRUE(std::isnan(f)) << b;
    else
      EXPECT_EQ(double(f), e4m3Value(b)) << "byte " << b;
  }
  EXPECT_EQ(fp8E4M3ToFloat(0x7e), 448.0f);
  EXPECT_EQ(fp8E4M3ToFloat(0x01), std::ldexp(1.0f, -9));
}

TEST(Half, Fp8E4M3RoundsToNearestEvenAndSaturates) {
  // Every representable value and every midpoint between neighbours, plus a
  // dense sweep, against the brute-force nearest value.
  std::vector<float> xs;
  for (int b = 0; b < 0x7f; ++b) {
    double v = e4m3Value(b), next = e4m3Value(b + 1);
    for (double x : {v, (v + next) / 2, std::nextafter((v + next) / 2, 0.0),
                     std::nextafter((v + next) / 2, 1e9)}) {
      xs.push_back(float(x));
      xs.push_back(-float(x));
    }
  }
  for (float x = -500; x <= 500; x += 0.0371f)
    xs.push_back(x);
  for (float x : xs) {
    if (std::fabs(x) >= 448) {
      EXPECT_EQ(fp8E4M3ToFloat(floatToFp8E4M3(x)), x < 0 ? -448.0f : 448.0f);
      continue;
    }
    EXPECT_EQ(int(floatToFp8E4M3(x)) & 0x7f, nearestE4M3(x) & 0x7f)
        << "x = " << x;
  }
  EXPECT_EQ(floatToFp8E4M3(1e30f), 0x7e);
  EXPECT_EQ(floatToFp8E4M3(-INFINITY), 0xfe);
  EXPECT_TRUE(std::isnan(fp8E4M3ToFloat(floatToFp8E4M3(NAN))));
}
