#include "llmc/weights/gguf_writer.h"

#include "llmc/support/error.h"
#include "llmc/support/half.h"

#include <cstring>
#include <fstream>

namespace llmc::weights {

namespace {

constexpr size_t kAlignment = 32;

GGUFValue scalar(GGUFType t, uint64_t u) { return {t, u}; }
GGUFValue signedScalar(GGUFType t, int64_t i) { return {t, i}; }

class Bytes {
public:
  template <typename T> void put(T v) {
    size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
  }
  void putString(const std::string &s) {
    put<uint64_t>(s.size());
    out.insert(out.end(), s.begin(), s.end());
  }
  void putValue(const GGUFValue &v) {
    switch (v.type) {
    case GGUFType::U8:
      return put<uint8_t>(static_cast<uint8_t>(std::get<uint64_t>(v.value)));
    case GGUFType::I8:
      return put<int8_t>(static_cast<int8_t>(std::get<int64_t>(v.value)));
    case GGUFType::U16:
      return put<uint16_t>(static_cast<uint16_t>(std::get<uint64_t>(v.value)));
    case GGUFType::I16:
      return put<int16_t>(static_cast<int16_t>(std::get<int64_t>(v.value)));
    case GGUFType::U32:
      return put<uint32_t>(static_cast<uint32_t>(std::get<uint64_t>(v.value)));
    case GGUFType::I32:
      return put<int32_t>(static_cast<int32_t>(std::get<int64_t>(v.value)));
    case GGUFType::U64:
      return put<uint64_t>(std::get<uint64_t>(v.value));
    case GGUFType::I64:
      return put<int64_t>(std::get<int64_t>(v.value));
    case GGUFType::F32:
      return put<float>(static_cast<float>(std::get<double>(v.value)));
    case GGUFType::F64:
      return put<double>(std::get<double>(v.value));
    case GGUFType::Bool:
      return put<uint8_t>(std::get<bool>(v.value) ? 1 : 0);
    case GGUFType::String:
      return putString(std::get<std::string>(v.value));
    case GGUFType::Array: {
      const auto &a = std::get<GGUFArray>(v.value);
      put<uint32_t>(static_cast<uint32_t>(a.elemType));
      put<uint64_t>(a.items.size());
      for (const auto &item : a.items)
        putValue(item);
      return;
    }
    }
  }
  void pad() {
    out.resize((out.size() + kAlignment - 1) / kAlignment * kAlignment);
  }
  std::vector<uint8_t> out;
};

// Variant alternative and `type` must agree, or serialization would throw
// std::bad_variant_access later.
void checkValue(const std::string &key, const GGUFValue &v) {
  bool ok = false;
  switch (v.type) {
  case GGUFType::U8:
  case GGUFType::U16:
  case GGUFType::U32:
  case GGUFType::U64:
    ok = std::holds_alternative<uint64_t>(v.value);
    break;
  case GGUFType::I8:
  case GGUFType::I16:
  case GGUFType::I32:
  case GGUFType::I64:
    ok = std::holds_alternative<int64_t>(v.value);
    break;
  case GGUFType::F32:
  case GGUFType::F64:
    ok = std::holds_alternative<double>(v.value);
    break;
  case GGUFType::Bool:
    ok = std::holds_alternative<bool>(v.value);
    break;
  case GGUFType::String:
    ok = std::holds_alternative<std::string>(v.value);
    break;
  case GGUFType::Array:
    if (const auto *a = std::get_if<GGUFArray>(&v.value)) {
      ok = true;
      for (const auto &item : a->items) {
        if (item.type != a->elemType)
          throw Error("GGUF key '" + key + "': array element of type " +
                      ggufTypeName(item.type) + " in an array of " +
                      ggufTypeName(a->elemType));
        checkValue(key, item);
      }
    }
    break;
  }
  if (!ok)
    throw Error("GGUF key '" + key + "': value does not match its type " +
                ggufTypeName(v.type));
}

template <typename T, typename F>
GGUFValue arrayOf(GGUFType elem, const std::vector<T> &v, F make) {
  GGUFArray a;
  a.elemType = elem;
  a.items.reserve(v.size());
  for (const T &x : v)
    a.items.push_back(make(x));
  return {GGUFType::Array, std::move(a)};
}

} // namespace

void GGUFWriter::checkNewKey(const std::string &key) const {
  for (const auto &kv : kv_)
    if (kv.first == key)
      throw Error("GGUF key '" + key + "' added twice");
}

void GGUFWriter::addValue(const std::string &key, GGUFValue v) {
  checkNewKey(key);
  checkValue(key, v);
  kv_.emplace_back(key, std::move(v));
}

void GGUFWriter::addU8(const std::string &k, uint8_t v) {
  addValue(k, scalar(GGUFType::U8, v));
}
void GGUFWriter::addI8(const std::string &k, int8_t v) {
  addValue(k, signedScalar(GGUFType::I8, v));
}
void GGUFWriter::addU16(const std::string &k, uint16_t v) {
  addValue(k, scalar(GGUFType::U16, v));
}
void GGUFWriter::addI16(const std::string &k, int16_t v) {
  addValue(k, signedScalar(GGUFType::I16, v));
}
void GGUFWriter::addU32(const std::string &k, uint32_t v) {
  addValue(k, scalar(GGUFType::U32, v));
}
void GGUFWriter::addI32(const std::string &k, int32_t v) {
  addValue(k, signedScalar(GGUFType::I32, v));
}
void GGUFWriter::addU64(const std::string &k, uint64_t v) {
  addValue(k, scalar(GGUFType::U64, v));
}
void GGUFWriter::addI64(const std::string &k, int64_t v) {
  addValue(k, signedScalar(GGUFType::I64, v));
}
void GGUFWriter::addF32(const std::string &k, float v) {
  addValue(k, {GGUFType::F32, double{v}});
}
void GGUFWriter::addF64(const std::string &k, double v) {
  addValue(k, {GGUFType::F64, v});
}
void GGUFWriter::addBool(const std::string &k, bool v) {
  addValue(k, {GGUFType::Bool, v});
}
void GGUFWriter::addString(const std::string &k, const std::string &v) {
  addValue(k, {GGUFType::String, v});
}
void GGUFWriter::addStringArray(const std::string &k,
                                const std::vector<std::string> &v) {
  addValue(k, arrayOf(GGUFType::String, v, [](const std::string &s) {
             return GGUFValue{GGUFType::String, s};
           }));
}
void GGUFWriter::addFloatArray(const std::string &k,
                               const std::vector<float> &v) {
  addValue(k, arrayOf(GGUFType::F32, v, [](float x) {
             return GGUFValue{GGUFType::F32, double{x}};
           }));
}
void GGUFWriter::addIntArray(const std::string &k,
                             const std::vector<int32_t> &v) {
  addValue(k, arrayOf(GGUFType::I32, v, [](int32_t x) {
             return GGUFValue{GGUFType::I32, int64_t{x}};
           }));
}
void GGUFWriter::addI64Array(const std::string &k,
                             const std::vector<int64_t> &v) {
  addValue(k, arrayOf(GGUFType::I64, v, [](int64_t x) {
             return GGUFValue{GGUFType::I64, x};
           }));
}

void GGUFWriter::addTensorBytes(const std::string &name,
                                const std::vector<int64_t> &shape, DType dtype,
                                const uint8_t *data, size_t nbytes) {
  ggmlTypeOf(dtype); // throws for dtypes GGUF can't hold
  for (const auto &t : tensors_)
    if (t.name == name)
      throw Error("GGUF tensor '" + name + "' added twice");
  if (shape.empty() || shape.size() > 4)
    throw Error("GGUF tensor '" + name + "' must have 1 to 4 dims");
  TensorRef ref{name, dtype, shape, nullptr, 0, ""};
  int64_t n = ref.numElements();
  if (dtypeBlockSize(dtype) > 1 && shape.back() % dtypeBlockSize(dtype) != 0)
    throw Error("GGUF tensor '" + name + "': innermost dim " +
                std::to_string(shape.back()) + " is not a multiple of 32, as " +
                dtypeName(dtype) + " needs");
  size_t need = dtypeBytes(dtype, n);
  if (nbytes != need)
    throw Error("GGUF tensor '" + name + "': got " + std::to_string(nbytes) +
                " bytes, shape and dtype need " + std::to_string(need));
  tensors_.push_back(
      {name, shape, dtype, std::vector<uint8_t>(data, data + nbytes)});
}

void GGUFWriter::addTensor(const std::string &name,
                           const std::vector<int64_t> &shape, const float *data,
                           DType type) {
  TensorRef ref{name, type, shape, nullptr, 0, ""};
  int64_t n = ref.numElements();
  if (dtypeBlockSize(type) > 1 && !shape.empty() &&
      shape.back() % dtypeBlockSize(type) != 0)
    throw Error("GGUF tensor '" + name + "': innermost dim " +
                std::to_string(shape.back()) + " is not a multiple of 32, as " +
                dtypeName(type) + " needs");
  std::vector<uint8_t> bytes(dtypeBytes(type, n));
  switch (type) {
  case DType::F32:
    if (n > 0)
      std::memcpy(bytes.data(), data, bytes.size());
    break;
  case DType::F16:
  case DType::BF16:
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h =
          type == DType::F16 ? floatToF16(data[i]) : floatToBf16(data[i]);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
    break;
  case DType::Q8_0:
    quantizeQ8_0(data, n, bytes.data());
    break;
  case DType::Q4_0:
    quantizeQ4_0(data, n, bytes.data());
    break;
  default:
    throw Error("GGUF tensor '" + name + "': cannot store float data as " +
                dtypeName(type));
  }
  addTensorBytes(name, shape, type, bytes.data(), bytes.size());
}

std::vector<uint8_t> GGUFWriter::serialize(uint32_t version) const {
  if (version != 2 && version != 3)
    throw Error("GGUFWriter: cannot write GGUF version " +
                std::to_string(version) + " (supported: 2, 3)");
  Bytes b;
  b.put<uint32_t>(0x46554747u); // "GGUF" little-endian
  b.put<uint32_t>(version);
  b.put<uint64_t>(tensors_.size());
  b.put<uint64_t>(kv_.size());
  for (const auto &[key, v] : kv_) {
    b.putString(key);
    b.put<uint32_t>(static_cast<uint32_t>(v.type));
    b.putValue(v);
  }
  uint64_t offset = 0;
  for (const auto &t : tensors_) {
    b.putString(t.name);
    b.put<uint32_t>(static_cast<uint32_t>(t.shape.size()));
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it)
      b.put<uint64_t>(static_cast<uint64_t>(*it));
    b.put<uint32_t>(ggmlTypeOf(t.dtype));
    b.put<uint64_t>(offset);
    offset += (t.bytes.size() + kAlignment - 1) / kAlignment * kAlignment;
  }
  b.pad();
  for (const auto &t : tensors_) {
    b.out.insert(b.out.end(), t.bytes.begin(), t.bytes.end());
    b.pad();
  }
  return std::move(b.out);
}

void GGUFWriter::write(const std::string &path, uint32_t version) const {
  std::vector<uint8_t> bytes = serialize(version);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out)
    out.write(reinterpret_cast<const char *>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw Error("cannot write GGUF file '" + path + "'");
}

} // namespace llmc::weights
