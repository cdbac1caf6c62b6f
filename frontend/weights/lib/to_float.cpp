#include "llmc/support/error.h"
#include "llmc/support/half.h"
#include "llmc/weights/tensor.h"

#include <cstring>

namespace llmc::weights {

void toFloat32(const TensorRef &t, float *dst) {
  int64_t n = t.numElements();
  switch (t.dtype) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
  case DType::Q8_0:
  case DType::Q4_0:
    break;
  default:
    throw Error("cannot convert tensor '" + t.name + "' in " + t.file +
                " to float32: dtype " + dtypeName(t.dtype) +
                " is not F32, F16, BF16, Q8_0 or Q4_0");
  }
  size_t need = dtypeBytes(t.dtype, n);
  if (t.nbytes != need || (need > 0 && t.data == nullptr))
    throw Error("tensor '" + t.name + "' in " + t.file + " has " +
                std::to_string(t.nbytes) + " bytes, expected " +
                std::to_string(need) + " for its shape and dtype " +
                dtypeName(t.dtype));
  const uint8_t *p = t.data;
  switch (t.dtype) {
  case DType::F32:
    if (n > 0)
      std::memcpy(dst, p, need);
    break;
  case DType::F16:
  case DType::BF16:
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      dst[i] = t.dtype == DType::F16 ? f16ToFloat(h) : bf16ToFloat(h);
    }
    break;
  case DType::Q8_0:
    dequantizeQ8_0(p, n, dst);
    break;
  case DType::Q4_0:
    dequantizeQ4_0(p, n, dst);
    break;
  default:
    break;
  }
}

} // namespace llmc::weights
