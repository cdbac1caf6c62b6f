// Mirrors ggml-quants.c (quantize_row_q8_0_ref, quantize_row_q4_0_ref and the
// dequantizers) so that files we write match llama.cpp's byte for byte.
#include "llmc/support/error.h"
#include "llmc/support/half.h"
#include "llmc/weights/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace llmc::weights {

static constexpr int kBlock = 32;

static void checkBlocks(const char *what, int64_t n) {
  if (n < 0 || n % kBlock != 0)
    throw Error(std::string(what) + ": element count " + std::to_string(n) +
                " is not a multiple of 32");
}

static void putHalf(uint8_t *p, float v) {
  uint16_t h = floatToF16(v);
  std::memcpy(p, &h, 2);
}

static float getHalf(const uint8_t *p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16ToFloat(h);
}

void quantizeQ8_0(const float *src, int64_t n, uint8_t *dst) {
  checkBlocks("quantizeQ8_0", n);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float *x = src + b * kBlock;
    uint8_t *y = dst + b * 34;
    float amax = 0.0f;
    for (int j = 0; j < kBlock; ++j)
      amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    putHalf(y, d);
    for (int j = 0; j < kBlock; ++j) {
      float q = std::round(x[j] * id);
      // Clamping only matters for non-finite input, where ggml is undefined.
      q = std::isnan(q) ? 0.0f : std::clamp(q, -128.0f, 127.0f);
      y[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(q));
    }
  }
}

void quantizeQ4_0(const float *src, int64_t n, uint8_t *dst) {
  checkBlocks("quantizeQ4_0", n);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float *x = src + b * kBlock;
    uint8_t *y = dst + b * 18;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kBlock; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    putHalf(y, d);
    auto nibble = [&](float v) {
      float s = v * id + 8.5f;
      s = std::isnan(s) ? 0.0f : std::clamp(s, 0.0f, 15.0f);
      return static_cast<uint8_t>(s); // truncation, as ggml's (int8_t) cast
    };
    for (int j = 0; j < kBlock / 2; ++j)
      y[2 + j] =
          static_cast<uint8_t>(nibble(x[j]) | (nibble(x[j + kBlock / 2]) << 4));
  }
}

void dequantizeQ8_0(const uint8_t *src, int64_t n, float *dst) {
  checkBlocks("dequantizeQ8_0", n);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const uint8_t *y = src + b * 34;
    float d = getHalf(y);
    for (int j = 0; j < kBlock; ++j)
      dst[b * kBlock + j] = static_cast<int8_t>(y[2 + j]) * d;
  }
}

void dequantizeQ4_0(const uint8_t *src, int64_t n, float *dst) {
  checkBlocks("dequantizeQ4_0", n);
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const uint8_t *y = src + b * 18;
    float d = getHalf(y);
    for (int j = 0; j < kBlock / 2; ++j) {
      dst[b * kBlock + j] = ((y[2 + j] & 0x0f) - 8) * d;
      dst[b * kBlock + j + kBlock / 2] = ((y[2 + j] >> 4) - 8) * d;
    }
  }
}

} // namespace llmc::weights

namespace llmc::weights {

float symmetricScale(const float *x, int64_t n, bool int4) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i)
    amax = std::max(amax, std::fabs(x[i]));
  if (amax == 0.0f)
    return 1.0f;
  // A GGUF block's values are an f16 d times integers whose largest
  // magnitude is 8 (Q4_0: [-8, 7]) or 16 (Q5_0: [-16, 15]); amax / 8 and
  // amax / 16 are then d exactly (a power of two apart), and every x / d is
  // the integer back (at most 15 significant bits). ggml's d is negative when
  // the extreme value is positive, so both signs are tried. Q8_0's d is
  // amax / 127 itself, the default below.
  const float grid = int4 ? 8.0f : 16.0f, lo = -grid, hi = int4 ? 7.0f : 16.0f;
  for (float d : {amax / grid, -amax / grid}) {
    bool exact = true;
    for (int64_t i = 0; i < n && exact; ++i) {
      const float q = x[i] / d;
      exact = q == roundToInt(q) && q >= lo && q <= hi;
    }
    if (exact)
      return d;
  }
  return amax / (int4 ? 7.0f : 127.0f);
}

} // namespace llmc::weights
