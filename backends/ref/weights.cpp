//===- weights.cpp - Reading plan weights as f32
//---------------------------===//
#include "ref.h"

#include "llmc/support/half.h"

#include <cstring>

namespace llmc::ref {

size_t dtypeSize(uint32_t dtype) {
  switch (dtype) {
  case LLMC_F32:
  case LLMC_I32:
    return 4;
  case LLMC_F16:
  case LLMC_BF16:
    return 2;
  default:
    return 0;
  }
}

int64_t weightElements(const llmc_weight_desc &w) {
  int64_t n = 1;
  for (uint32_t d = 0; d < w.rank; ++d)
    n *= w.shape[d];
  return n;
}

void expectFloatWeight(const llmc_weight_desc &w, int64_t elements,
                       const char *what) {
  if (w.dtype != LLMC_F32 && w.dtype != LLMC_BF16 && w.dtype != LLMC_F16)
    throw InvalidArgument(std::string(what) + " must be f32, bf16 or f16");
  if (weightElements(w) != elements)
    throw InvalidArgument(std::string(what) + " has " +
                          std::to_string(weightElements(w)) +
                          " values, expected " + std::to_string(elements));
  if (w.nbytes < size_t(elements) * dtypeSize(w.dtype))
    throw InvalidArgument(std::string(what) + " is truncated");
}

void loadWeight(const llmc_weight_desc &w, int64_t offset, int64_t count,
                float *out) {
  const auto *bytes = static_cast<const uint8_t *>(w.data);
  for (int64_t i = 0; i < count; ++i) {
    int64_t e = offset + i;
    // memcpy: plan weights are only guaranteed to be byte-addressable here.
    if (w.dtype == LLMC_F32) {
      std::memcpy(&out[i], bytes + e * 4, 4);
    } else {
      uint16_t h;
      std::memcpy(&h, bytes + e * 2, 2);
      out[i] = w.dtype == LLMC_BF16 ? bf16ToFloat(h) : f16ToFloat(h);
    }
  }
}

} // namespace llmc::ref
