//===- tensor.h - Tensors in checkpoint files ------------------*- C++ -*-===//
//
// The common view of a tensor read from a safetensors or GGUF file: a name,
// a dtype, a shape in Hugging Face order and a pointer into the mapped file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llmc::weights {

enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  F64,
  I8,
  I16,
  I32,
  I64,
  U8,
  Bool,
  Q8_0,
  Q4_0,
  // The rest of llama.cpp's block formats llmc reads (GGUF only).
  Q4_1,
  Q5_0,
  Q5_1,
  IQ4_NL,
  Q2_K,
  Q3_K,
  Q4_K,
  Q5_K,
  Q6_K,
  // OCP MXFP4 (gpt-oss's experts), in ggml's layout: 17-byte blocks of 32,
  // an E8M0 byte e then 16 bytes whose low nibble is element j and high
  // nibble element j + 16, value = doubled E2M1 code * 2^(e - 128). A
  // TensorRef with `scales` set holds Hugging Face's layout instead (see
  // TensorRef).
  MXFP4
};

/// "F32", "BF16", "Q8_0", ...
const char *dtypeName(DType);

/// "[2, 3]": a shape as messages print it.
std::string shapeString(const std::vector<int64_t> &shape);

/// Bytes of `numElements` values (ggml's block sizes for the block
/// formats: Q8_0 34 B and Q4_0 18 B per 32, Q4_K 144 B per 256, ...);
/// throws llmc::Error if a block format's count is not a whole number of
/// blocks, or if the count is negative or the size overflows.
size_t dtypeBytes(DType, int64_t numElements);

/// Elements per block: 32 for Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL and
/// MXFP4, 256 for the K-quants, 1 otherwise.
int64_t dtypeBlockSize(DType);

/// Whether `t` is one of llama.cpp's block formats (Q8_0 ... Q6_K).
bool isGgmlBlockFormat(DType t);

struct TensorRef {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape; // row-major, HF order (outermost first)
  const uint8_t *data = nullptr;
  size_t nbytes = 0;
  std::string file; // file it lives in (for messages)
  /// MXFP4 in Hugging Face's layout (`X_blocks` + `X_scales`, one logical
  /// tensor X): `data` holds nbytes = numElements() / 2 bytes of E2M1 codes,
  /// byte j of a block of 32 holding element 2j in its low nibble and 2j + 1
  /// in its high one, and `scales` one E8M0 byte per block (value = code *
  /// 2^(s - 127)). Null for every other tensor.
  const uint8_t *scales = nullptr;

  int64_t numElements() const;
};

/// The value of E2M1 code q (bit 3 the sign): 0, 0.5, 1, 1.5, 2, 3, 4, 6.
float e2m1Value(uint8_t q);

/// Throws naming the tensor unless `t` (MXFP4 in either layout) is whole
/// and no scale byte is 255 (E8M0's NaN).
void checkMxfp4(const TensorRef &t);

/// Block b (32 values) of an MXFP4 tensor in either layout as llmc's plan
/// stores it: 16 bytes of codes in Hugging Face's nibble order, and its
/// E8M0 scale (value = code * 2^(scale - 127)).
void mxfp4Block(const TensorRef &t, int64_t b, uint8_t codes[16],
                uint8_t &scale);

/// One block in ggml's layout (17 bytes: the scale, then element j in the
/// low nibble of byte j and j + 16 in its high one) from llmc's codes.
void toGgmlMxfp4Block(const uint8_t codes[16], uint8_t scale, uint8_t out[17]);

/// Converts F32/F16/BF16 and the block formats to float32; `dst` has
/// numElements() floats. Other dtypes, or nbytes that disagree with the
/// shape, throw naming the tensor, file and dtype.
void toFloat32(const TensorRef &t, float *dst);

/// Byte-for-byte equal to ggml's quantize_row_q8_0_ref / quantize_row_q4_0_ref
/// for finite input. `n` must be a multiple of 32 (else llmc::Error); `dst`
/// holds dtypeBytes(Q8_0 / Q4_0, n) bytes.
void quantizeQ8_0(const float *src, int64_t n, uint8_t *dst);
void quantizeQ4_0(const float *src, int64_t n, uint8_t *dst);

/// The scale of llmc's symmetric int8/int4 quantization of n values:
/// max|x| / 127 or / 7 — except that int4 takes ±max|x| / 8 and int8
/// ±max|x| / 16 when that represents every value exactly, as in a
/// dequantized Q4_0 or Q5_0 block (a signed d times q in [-8, 7] or
/// [-16, 15]), so Q4_0, Q5_0 and Q8_0 GGUFs quantized in groups of 32 keep
/// their integers and scales with no second rounding. 1 for all-zero input.
float symmetricScale(const float *x, int64_t n, bool int4);

/// std::nearbyint (ties to even) for |v| < 2^22 in the default rounding
/// mode, inline: adding 1.5 * 2^23 leaves no fraction bits (IEEE
/// arithmetic, which llmc never relaxes, keeps the two roundings). glibc's
/// nearbyintf is an out-of-line call that dominated quantizing a model.
inline float roundToInt(float v) {
  constexpr float kMagic = 12582912.0f;
  return (v + kMagic) - kMagic;
}

/// Inverse of the quantizers (ggml's dequantize_row_*).
void dequantizeQ8_0(const uint8_t *src, int64_t n, float *dst);
void dequantizeQ4_0(const uint8_t *src, int64_t n, float *dst);
/// `n` values of any block format, as ggml's dequantize_row_* gives them
/// (ggml_dequantize.cpp); throws unless n is a whole number of blocks.
void dequantizeGgml(DType t, const uint8_t *src, int64_t n, float *dst);

} // namespace llmc::weights
