#include "llmc/weights/rope_permute.h"

#include "llmc/support/error.h"

#include <cstring>
#include <string>

namespace llmc::weights {

// Within each head, HF row j*half + i (j in {0,1}) sits at GGUF row 2*i + j.
static void permuteRows(const uint8_t *src, uint8_t *dst, int64_t rows,
                        size_t rowBytes, int64_t nHead, bool inverse) {
  if (nHead <= 0 || rows % (2 * nHead) != 0)
    throw Error("RoPE row permutation: " + std::to_string(rows) +
                " rows do not split into " + std::to_string(nHead) +
                " heads of even size");
  int64_t headDim = rows / nHead, half = headDim / 2;
  for (int64_t h = 0; h < nHead; ++h)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t i = 0; i < half; ++i) {
        int64_t hf = h * headDim + j * half + i;
        int64_t gg = h * headDim + 2 * i + j;
        int64_t from = inverse ? gg : hf, to = inverse ? hf : gg;
        std::memcpy(dst + to * rowBytes, src + from * rowBytes, rowBytes);
      }
}

void permuteGGUFRope(const uint8_t *src, uint8_t *dst, int64_t rows,
                     size_t rowBytes, int64_t nHead) {
  permuteRows(src, dst, rows, rowBytes, nHead, false);
}

void unpermuteGGUFRope(const uint8_t *src, uint8_t *dst, int64_t rows,
                       size_t rowBytes, int64_t nHead) {
  permuteRows(src, dst, rows, rowBytes, nHead, true);
}

void permuteGGUFRope(const float *src, float *dst, int64_t rows, int64_t cols,
                     int64_t nHead) {
  permuteRows(reinterpret_cast<const uint8_t *>(src),
              reinterpret_cast<uint8_t *>(dst), rows, cols * sizeof(float),
              nHead, false);
}

void unpermuteGGUFRope(const float *src, float *dst, int64_t rows, int64_t cols,
                       int64_t nHead) {
  permuteRows(reinterpret_cast<const uint8_t *>(src),
              reinterpret_cast<uint8_t *>(dst), rows, cols * sizeof(float),
              nHead, true);
}

} // namespace llmc::weights
