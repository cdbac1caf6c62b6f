//===- half.h - bf16 and IEEE f16 conversions ------------------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <cstring>

namespace llmc {

inline float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Round-to-nearest-even, as PyTorch's float -> bfloat16 conversion; NaN stays
/// NaN.
inline uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float f16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalise
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Round-to-nearest-even float -> IEEE half.
inline uint16_t floatToF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t absBits = bits & 0x7fffffffu;
  if (absBits > 0x7f800000u)
    return static_cast<uint16_t>(sign | 0x7e00u); // NaN
  if (absBits >= 0x477ff000u)                     // overflows to inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (absBits < 0x38800000u) { // subnormal or zero in half
    if (absBits < 0x33000000u)
      return static_cast<uint16_t>(sign);
    uint32_t exp = absBits >> 23;
    uint32_t mant = (absBits & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp; // 14..24
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t r = absBits - 0x38000000u; // rebias 127 -> 15
  r += 0xfffu + ((r >> 13) & 1u);
  return static_cast<uint16_t>(sign | (r >> 13));
}

/// fp8 e4m3 ("fn": no infinities, 0x7f/0xff are NaN, largest finite 448)
/// -> float. Exact.
inline float fp8E4M3ToFloat(uint8_t v) {
  const uint32_t e = (v >> 3) & 0xfu, m = v & 0x7u;
  float mag;
  if (e == 0xf && m == 0x7)
    mag = __builtin_nanf("");
  else if (e == 0) // subnormal: m * 2^-9
    mag = static_cast<float>(m) * (1.0f / 512.0f);
  else {
    uint32_t bits = ((e + 120u) << 23) | (m << 20);
    std::memcpy(&mag, &bits, sizeof mag);
  }
  return (v & 0x80u) ? -mag : mag;
}

/// float -> fp8 e4m3, round-to-nearest-even and saturating at +-448 (CUDA's
/// __NV_SATFINITE); NaN stays NaN.
inline uint8_t floatToFp8E4M3(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const auto sign = static_cast<uint8_t>((bits >> 24) & 0x80u);
  const uint32_t absBits = bits & 0x7fffffffu;
  if (absBits > 0x7f800000u)
    return sign | 0x7fu;
  if (absBits >= 0x43e00000u) // >= 448
    return sign | 0x7eu;
  if (absBits < 0x3c800000u) { // below 2^-6: a multiple of 2^-9 (8 = 2^-6)
    float a;
    std::memcpy(&a, &absBits, sizeof a);
    // a * 512 is exact; adding 2^23 rounds it half-to-even to an integer.
    float q = (a * 512.0f + 8388608.0f) - 8388608.0f;
    return sign | static_cast<uint8_t>(q);
  }
  uint32_t r = absBits - (120u << 23); // rebias 127 -> 7
  r += 0x7ffffu + ((r >> 20) & 1u);
  return sign | static_cast<uint8_t>(r >> 20);
}

} // namespace llmc
