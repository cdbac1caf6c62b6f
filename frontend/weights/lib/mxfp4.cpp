//===- mxfp4.cpp - MXFP4 in Hugging Face's and ggml's layouts -------------===//
//
// Both store 32 E2M1 codes and one E8M0 scale per block. Hugging Face keeps
// the codes (byte j: elements 2j low, 2j + 1 high) and the scales
// (2^(s - 127)) in two tensors; ggml interleaves them in 17-byte blocks
// (e, then byte j: elements j low, j + 16 high) and doubles the codes,
// halving the scale (2^(e - 128)), so the two scale bytes of one block are
// equal and only the nibbles move between the layouts.
//
//===----------------------------------------------------------------------===//
#include "llmc/support/error.h"
#include "llmc/weights/tensor.h"

#include <cmath>

namespace llmc::weights {
namespace {

constexpr int64_t kBlock = 32;

std::string where(const TensorRef &t) {
  return "tensor '" + t.name + "' in " + t.file;
}

size_t hfBytes(const TensorRef &t) {
  return static_cast<size_t>(t.numElements() / 2);
}

} // namespace

float e2m1Value(uint8_t q) {
  static const float values[8] = {0.0f, 0.5f, 1.0f, 1.5f,
                                  2.0f, 3.0f, 4.0f, 6.0f};
  return (q & 8) ? -values[q & 7] : values[q & 7];
}

void checkMxfp4(const TensorRef &t) {
  const int64_t n = t.numElements();
  if (t.shape.empty() || t.shape.back() % kBlock != 0)
    throw Error(where(t) + ": an MXFP4 tensor's inner dimension (" +
                std::to_string(t.shape.empty() ? 0 : t.shape.back()) +
                ") must be a multiple of 32");
  const size_t need = t.scales ? hfBytes(t) : dtypeBytes(DType::MXFP4, n);
  if (t.nbytes != need || (need > 0 && t.data == nullptr))
    throw Error(where(t) + " has " + std::to_string(t.nbytes) +
                " bytes, expected " + std::to_string(need) +
                " for its shape in MXFP4");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const uint8_t s = t.scales ? t.scales[b] : t.data[b * 17];
    if (s == 255)
      throw Error(where(t) + ": block " + std::to_string(b) +
                  " has scale byte 255, E8M0's NaN");
  }
}

void mxfp4Block(const TensorRef &t, int64_t b, uint8_t codes[16],
                uint8_t &scale) {
  if (t.scales) {
    scale = t.scales[b];
    const uint8_t *q = t.data + b * 16;
    for (int j = 0; j < 16; ++j)
      codes[j] = q[j];
    return;
  }
  const uint8_t *blk = t.data + b * 17;
  scale = blk[0];
  const uint8_t *qs = blk + 1;
  // Element i is qs[i % 16]'s low (i < 16) or high nibble.
  auto element = [&](int i) -> uint8_t {
    return i < 16 ? qs[i] & 0x0f : qs[i - 16] >> 4;
  };
  for (int j = 0; j < 16; ++j)
    codes[j] = static_cast<uint8_t>(element(2 * j) | (element(2 * j + 1) << 4));
}

void toGgmlMxfp4Block(const uint8_t codes[16], uint8_t scale, uint8_t out[17]) {
  auto element = [&](int i) -> uint8_t {
    return i % 2 ? codes[i / 2] >> 4 : codes[i / 2] & 0x0f;
  };
  out[0] = scale;
  for (int j = 0; j < 16; ++j)
    out[1 + j] = static_cast<uint8_t>(element(j) | (element(j + 16) << 4));
}

void dequantizeHfMxfp4(const TensorRef &t, float *dst) {
  const int64_t blocks = t.numElements() / kBlock;
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t codes[16], s;
    mxfp4Block(t, b, codes, s);
    const float scale = std::ldexp(1.0f, int(s) - 127);
    for (int j = 0; j < 16; ++j) {
      dst[b * kBlock + 2 * j] = e2m1Value(codes[j] & 0x0f) * scale;
      dst[b * kBlock + 2 * j + 1] = e2m1Value(codes[j] >> 4) * scale;
    }
  }
}

} // namespace llmc::weights
