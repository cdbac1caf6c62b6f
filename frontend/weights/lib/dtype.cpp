#include "llmc/support/error.h"
#include "llmc/weights/tensor.h"

#include <limits>

namespace llmc::weights {

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F64:
    return "F64";
  case DType::I8:
    return "I8";
  case DType::I16:
    return "I16";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  case DType::U8:
    return "U8";
  case DType::Bool:
    return "BOOL";
  case DType::Q8_0:
    return "Q8_0";
  case DType::Q4_0:
    return "Q4_0";
  case DType::Q4_1:
    return "Q4_1";
  case DType::Q5_0:
    return "Q5_0";
  case DType::Q5_1:
    return "Q5_1";
  case DType::IQ4_NL:
    return "IQ4_NL";
  case DType::Q2_K:
    return "Q2_K";
  case DType::Q3_K:
    return "Q3_K";
  case DType::Q4_K:
    return "Q4_K";
  case DType::Q5_K:
    return "Q5_K";
  case DType::Q6_K:
    return "Q6_K";
  case DType::MXFP4:
    return "MXFP4";
  }
  return "?";
}

bool isGgmlBlockFormat(DType t) { return t >= DType::Q8_0; }

int64_t dtypeBlockSize(DType t) {
  if (!isGgmlBlockFormat(t))
    return 1;
  return t >= DType::Q2_K && t <= DType::Q6_K ? 256 : 32;
}

static size_t bytesPerBlock(DType t) {
  switch (t) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  case DType::Q8_0:
    return 34; // f16 scale + 32 int8
  case DType::Q4_0:
    return 18; // f16 scale + 32 nibbles
  case DType::Q4_1:
    return 20; // f16 scale and min + 32 nibbles
  case DType::Q5_0:
    return 22; // f16 scale + 32 high bits + 32 nibbles
  case DType::Q5_1:
    return 24;
  case DType::IQ4_NL:
    return 18;
  case DType::Q2_K:
    return 84; // per 256: 16 scale/min bytes, 64 of 2-bit values, d, dmin
  case DType::Q3_K:
    return 110; // 32 high-bit masks, 64 of 2-bit values, 12 scales, d
  case DType::Q4_K:
    return 144; // d, dmin, 12 scale/min bytes, 128 of nibbles
  case DType::Q5_K:
    return 176; // as Q4_K + 32 high-bit bytes
  case DType::Q6_K:
    return 210; // 128 low nibbles, 64 high 2-bit pairs, 16 scales, d
  case DType::MXFP4:
    return 17; // E8M0 scale + 32 nibbles
  }
  return 1;
}

size_t dtypeBytes(DType t, int64_t numElements) {
  if (numElements < 0)
    throw Error("negative element count " + std::to_string(numElements) +
                " for dtype " + dtypeName(t));
  int64_t block = dtypeBlockSize(t);
  if (numElements % block != 0)
    throw Error(std::string(dtypeName(t)) + " needs a multiple of " +
                std::to_string(block) + " elements, got " +
                std::to_string(numElements));
  uint64_t blocks = static_cast<uint64_t>(numElements / block);
  size_t per = bytesPerBlock(t);
  if (blocks > std::numeric_limits<size_t>::max() / per)
    throw Error("size of " + std::to_string(numElements) + " " + dtypeName(t) +
                " elements overflows");
  return blocks * per;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t TensorRef::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw Error("tensor '" + name + "' in " + file + " has a negative dim");
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw Error("tensor '" + name + "' in " + file +
                  ": element count overflows");
    n *= d;
  }
  return n;
}

} // namespace llmc::weights
