//===- mxfp4.h - MXFP4's codes and scales as floats -------------*- C++ -*-===//
//
// LLMC_MXFP4 weights hold FP4 E2M1 codes, LLMC_E8M0 bytes their groups'
// power-of-two scales (backend.h). Every backend decodes them alike.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <cstdint>

namespace llmc::common {

/// 2^(s - 127); s = 0 is 2^-127 (a denormal float), 255 never occurs.
inline float e8m0ToFloat(uint8_t s) { return std::ldexp(1.0f, int(s) - 127); }

/// Code q (bit 3 the sign): 0, 0.5, 1, 1.5, 2, 3, 4, 6.
inline float e2m1ToFloat(uint8_t q) {
  static constexpr float kValues[8] = {0.0f, 0.5f, 1.0f, 1.5f,
                                       2.0f, 3.0f, 4.0f, 6.0f};
  return (q & 8) ? -kValues[q & 7] : kValues[q & 7];
}

} // namespace llmc::common
