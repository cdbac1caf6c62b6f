//===- gguf_writer.h - Writing GGUF v3 files -------------------*- C++ -*-===//
//
// Builds a GGUF file in memory (metadata in insertion order, tensors in
// insertion order, data aligned to 32 bytes) and writes it in one go. Meant
// for small models: converters, tests and fuzz corpora.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/weights/gguf.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc::weights {

class GGUFWriter {
public:
  // Adding a key twice throws llmc::Error.
  void addU8(const std::string &key, uint8_t v);
  void addI8(const std::string &key, int8_t v);
  void addU16(const std::string &key, uint16_t v);
  void addI16(const std::string &key, int16_t v);
  void addU32(const std::string &key, uint32_t v);
  void addI32(const std::string &key, int32_t v);
  void addU64(const std::string &key, uint64_t v);
  void addI64(const std::string &key, int64_t v);
  void addF32(const std::string &key, float v);
  void addF64(const std::string &key, double v);
  void addBool(const std::string &key, bool v);
  void addString(const std::string &key, const std::string &v);
  void addStringArray(const std::string &key,
                      const std::vector<std::string> &v);
  void addFloatArray(const std::string &key, const std::vector<float> &v);
  /// Stored as I32 elements (as llama.cpp stores token types).
  void addIntArray(const std::string &key, const std::vector<int32_t> &v);
  void addI64Array(const std::string &key, const std::vector<int64_t> &v);
  /// Any value, including nested arrays; the value's `type` fields are used.
  void addValue(const std::string &key, GGUFValue v);

  /// Stores `n = prod(shape)` floats as `type` (F32, F16, BF16, Q8_0, Q4_0).
  /// `shape` is HF order (outermost first); it is written reversed, as GGUF
  /// wants. Quantized types need the innermost dim to be a multiple of 32.
  void addTensor(const std::string &name, const std::vector<int64_t> &shape,
                 const float *data, DType type);
  /// Already-encoded data of `dtype` (size checked against the shape).
  void addTensorBytes(const std::string &name,
                      const std::vector<int64_t> &shape, DType dtype,
                      const uint8_t *data, size_t nbytes);

  /// The whole file. `version` 2 or 3.
  std::vector<uint8_t> serialize(uint32_t version = 3) const;
  /// Writes serialize() to `path`; throws llmc::Error naming it on failure.
  void write(const std::string &path, uint32_t version = 3) const;

private:
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    DType dtype;
    std::vector<uint8_t> bytes;
  };
  void checkNewKey(const std::string &key) const;
  std::vector<std::pair<std::string, GGUFValue>> kv_;
  std::vector<Tensor> tensors_;
};

} // namespace llmc::weights
