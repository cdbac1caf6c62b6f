//===- gguf.h - GGUF (llama.cpp) model files -------------------*- C++ -*-===//
//
// Reads GGUF v2/v3: the key/value metadata and the tensor table, with tensor
// data left in place (mmap). Every read is bounds-checked; counts are checked
// against the bytes left before anything is allocated from them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/weights/tensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace llmc {
class MappedFile;
}

namespace llmc::weights {

/// GGUF metadata value types, numbered as in the file format.
enum class GGUFType : uint32_t {
  U8 = 0,
  I8 = 1,
  U16 = 2,
  I16 = 3,
  U32 = 4,
  I32 = 5,
  F32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  U64 = 10,
  I64 = 11,
  F64 = 12,
};
const char *ggufTypeName(GGUFType);

struct GGUFValue;
/// Elements all have type `elemType` (itself possibly Array).
struct GGUFArray {
  GGUFType elemType = GGUFType::U8;
  std::vector<GGUFValue> items;
};

/// `type` is the type in the file; the variant holds it widened: unsigned
/// ints as uint64_t, signed as int64_t, floats as double.
struct GGUFValue {
  GGUFType type = GGUFType::U8;
  std::variant<uint64_t, int64_t, double, bool, std::string, GGUFArray> value;
};

class GGUFFile {
public:
  /// Maps `path` and parses it; the mapping lives as long as the object.
  explicit GGUFFile(const std::string &path);
  /// Parses bytes the caller keeps alive (tensors point into them).
  static GGUFFile parse(const uint8_t *data, size_t size,
                        const std::string &fileName);
  ~GGUFFile();
  GGUFFile(GGUFFile &&) noexcept;
  GGUFFile &operator=(GGUFFile &&) noexcept;

  const std::string &fileName() const { return fileName_; }
  uint32_t version() const { return version_; }
  size_t alignment() const { return alignment_; }
  const std::vector<TensorRef> &tensors() const { return tensors_; }
  const TensorRef *find(std::string_view name) const;

  /// Keys in file order.
  const std::vector<std::pair<std::string, GGUFValue>> &metadata() const {
    return kv_;
  }
  bool has(std::string_view key) const;
  /// nullptr if absent.
  const GGUFValue *get(std::string_view key) const;

  // Typed getters throw llmc::Error naming file, key and the actual type when
  // the key is missing or has another type. getInt accepts every integer type
  // (a U64 above INT64_MAX throws), getFloat F32/F64, getIntArray any integer
  // element type, getFloatArray F32/F64 elements.
  std::string getString(std::string_view key) const;
  int64_t getInt(std::string_view key) const;
  double getFloat(std::string_view key) const;
  bool getBool(std::string_view key) const;
  std::vector<std::string> getStringArray(std::string_view key) const;
  std::vector<float> getFloatArray(std::string_view key) const;
  std::vector<int64_t> getIntArray(std::string_view key) const;

  // Like the getters, but nullopt when the key is absent (wrong type throws).
  std::optional<std::string> findString(std::string_view key) const;
  std::optional<int64_t> findInt(std::string_view key) const;
  std::optional<double> findFloat(std::string_view key) const;
  std::optional<bool> findBool(std::string_view key) const;

private:
  GGUFFile() = default;
  const GGUFValue &require(std::string_view key) const;

  std::unique_ptr<MappedFile> file_;
  std::string fileName_;
  uint32_t version_ = 0;
  size_t alignment_ = 32;
  std::vector<std::pair<std::string, GGUFValue>> kv_;
  std::map<std::string, size_t, std::less<>> kvIndex_;
  std::vector<TensorRef> tensors_;
  std::map<std::string, size_t, std::less<>> tensorIndex_;

  friend class GGUFParser;
};

/// ggml type ids of the tensor types llmc reads: F32=0, F16=1, Q4_0=2,
/// Q8_0=8, BF16=30. ggmlTypeOf throws for dtypes GGUF cannot hold here.
uint32_t ggmlTypeOf(DType);

} // namespace llmc::weights
