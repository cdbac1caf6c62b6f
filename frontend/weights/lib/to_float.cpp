#include "llmc/support/error.h"
#include "llmc/support/half.h"
#include "llmc/weights/tensor.h"

#include <cstring>

namespace llmc::weights {

// Hugging Face's MXFP4 layout (mxfp4.cpp); ggml's is a block format below.
void dequantizeHfMxfp4(const TensorRef &t, float *dst);

void toFloat32(const TensorRef &t, float *dst) {
  if (t.dtype == DType::MXFP4) {
    checkMxfp4(t); // whole, and no scale byte is E8M0's NaN
    if (t.scales)
      return dequantizeHfMxfp4(t, dst);
  }
  int64_t n = t.numElements();
  if (t.dtype != DType::F32 && t.dtype != DType::F16 &&
      t.dtype != DType::BF16 && !isGgmlBlockFormat(t.dtype))
    throw Error("cannot convert tensor '" + t.name + "' in " + t.file +
                " to float32: dtype " + dtypeName(t.dtype) +
                " is not F32, F16, BF16 or a ggml block format");
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
  default:
    dequantizeGgml(t.dtype, p, n, dst);
    break;
  }
}

} // namespace llmc::weights
