//===- kquant_blocks.h - Random K-quant super-blocks for tests --*- C++ -*-===//
//
// Any codes and sub-block scales/mins, d and dmin finite and small enough
// that decoded values stay near [-1, 1]: the conformance suite and the cpu
// kernel tests draw their weights here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/support/half.h"
#include "llmc/support/kquant.h"

#include <cstring>
#include <random>
#include <vector>

namespace llmc::testing {

struct KQuantBlocks {
  std::vector<uint8_t> codes, headers;
};

inline KQuantBlocks randomKQuantBlocks(kquant::Format f, int64_t blocks,
                                       std::mt19937 &rng) {
  const kquant::Layout l = kquant::layout(f);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> factor(0.5f / 64, 2.0f / 64);
  KQuantBlocks out{std::vector<uint8_t>(size_t(blocks * l.codeBytes)),
                   std::vector<uint8_t>(size_t(blocks * l.headerBytes))};
  for (uint8_t &c : out.codes)
    c = uint8_t(byte(rng));
  for (uint8_t &h : out.headers)
    h = uint8_t(byte(rng));
  auto put = [&](int64_t b, int at, float v) {
    const uint16_t h = floatToF16(v);
    std::memcpy(out.headers.data() + b * l.headerBytes + at, &h, 2);
  };
  for (int64_t b = 0; b < blocks; ++b)
    if (f == kquant::Format::Q6_K) {
      put(b, 16, factor(rng) / 4); // scales up to 127
    } else {
      put(b, 0, factor(rng) / 8); // 6-bit scales, codes up to 31
      put(b, 2, factor(rng) / 8);
    }
  return out;
}

} // namespace llmc::testing
