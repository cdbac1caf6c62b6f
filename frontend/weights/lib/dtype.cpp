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
  }
  return "?";
}

int64_t dtypeBlockSize(DType t) {
  return t == DType::Q8_0 || t == DType::Q4_0 ? 32 : 1;
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
