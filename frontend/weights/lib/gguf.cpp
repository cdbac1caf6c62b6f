#include "llmc/weights/gguf.h"

#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include <cstring>
#include <limits>

namespace llmc::weights {

const char *ggufTypeName(GGUFType t) {
  switch (t) {
  case GGUFType::U8:
    return "uint8";
  case GGUFType::I8:
    return "int8";
  case GGUFType::U16:
    return "uint16";
  case GGUFType::I16:
    return "int16";
  case GGUFType::U32:
    return "uint32";
  case GGUFType::I32:
    return "int32";
  case GGUFType::F32:
    return "float32";
  case GGUFType::Bool:
    return "bool";
  case GGUFType::String:
    return "string";
  case GGUFType::Array:
    return "array";
  case GGUFType::U64:
    return "uint64";
  case GGUFType::I64:
    return "int64";
  case GGUFType::F64:
    return "float64";
  }
  return "unknown";
}

uint32_t ggmlTypeOf(DType t) {
  switch (t) {
  case DType::F32:
    return 0;
  case DType::F16:
    return 1;
  case DType::Q4_0:
    return 2;
  case DType::Q8_0:
    return 8;
  case DType::BF16:
    return 30;
  case DType::MXFP4:
    return 39;
  default:
    throw Error(std::string("dtype ") + dtypeName(t) +
                " cannot be stored in GGUF by llmc (F32, F16, BF16, Q8_0, "
                "Q4_0, MXFP4 only)");
  }
}

// The parser: a cursor over the bytes that refuses to read past the end.
class GGUFParser {
public:
  GGUFParser(const uint8_t *data, size_t size, GGUFFile &out)
      : data_(data), size_(size), out_(out), file_(out.fileName_) {}

  void run();

private:
  static constexpr int kMaxArrayDepth = 8;
  static constexpr uint32_t kMaxDims = 4; // GGML_MAX_DIMS

  size_t left() const { return size_ - pos_; }
  [[noreturn]] void truncated(const std::string &what) const {
    throw Error(file_ + ": truncated GGUF file: " + what + " at offset " +
                std::to_string(pos_) + " runs past the end (" +
                std::to_string(size_) + " bytes)");
  }
  template <typename T> T read(const char *what) {
    if (left() < sizeof(T))
      truncated(what);
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string readString(const std::string &what) {
    uint64_t len = read<uint64_t>(what.c_str());
    if (len > left())
      throw Error(file_ + ": " + what + " has length " + std::to_string(len) +
                  " at offset " + std::to_string(pos_ - 8) +
                  ", past the end of the file (" + std::to_string(left()) +
                  " bytes left)");
    std::string s(reinterpret_cast<const char *>(data_ + pos_), len);
    pos_ += len;
    return s;
  }
  // Smallest encoding of one value of `t`, to bound counts before reserving.
  static size_t minSize(GGUFType t) {
    switch (t) {
    case GGUFType::U8:
    case GGUFType::I8:
    case GGUFType::Bool:
      return 1;
    case GGUFType::U16:
    case GGUFType::I16:
      return 2;
    case GGUFType::U32:
    case GGUFType::I32:
    case GGUFType::F32:
      return 4;
    case GGUFType::String:
    case GGUFType::U64:
    case GGUFType::I64:
    case GGUFType::F64:
      return 8;
    case GGUFType::Array:
      return 12;
    }
    return 1;
  }
  GGUFType readType(const std::string &key) {
    uint32_t t = read<uint32_t>("value type");
    if (t > static_cast<uint32_t>(GGUFType::F64))
      throw Error(file_ + ": key '" + key + "' has unknown value type " +
                  std::to_string(t) + " (valid: 0..12)");
    return static_cast<GGUFType>(t);
  }
  GGUFValue readValue(GGUFType t, const std::string &key, int depth);
  void readTensorInfo(uint64_t index);
  void readAlignment();

  const uint8_t *data_;
  size_t size_;
  size_t pos_ = 0;
  GGUFFile &out_;
  const std::string &file_;
  std::vector<uint64_t> offsets_;
};

GGUFValue GGUFParser::readValue(GGUFType t, const std::string &key, int depth) {
  GGUFValue v;
  v.type = t;
  switch (t) {
  case GGUFType::U8:
    v.value = uint64_t{read<uint8_t>("value")};
    break;
  case GGUFType::I8:
    v.value = int64_t{read<int8_t>("value")};
    break;
  case GGUFType::U16:
    v.value = uint64_t{read<uint16_t>("value")};
    break;
  case GGUFType::I16:
    v.value = int64_t{read<int16_t>("value")};
    break;
  case GGUFType::U32:
    v.value = uint64_t{read<uint32_t>("value")};
    break;
  case GGUFType::I32:
    v.value = int64_t{read<int32_t>("value")};
    break;
  case GGUFType::U64:
    v.value = uint64_t{read<uint64_t>("value")};
    break;
  case GGUFType::I64:
    v.value = int64_t{read<int64_t>("value")};
    break;
  case GGUFType::F32:
    v.value = double{read<float>("value")};
    break;
  case GGUFType::F64:
    v.value = read<double>("value");
    break;
  case GGUFType::Bool: {
    uint8_t b = read<uint8_t>("value");
    if (b > 1)
      throw Error(file_ + ": key '" + key + "' is a bool with byte value " +
                  std::to_string(b) + " (expected 0 or 1)");
    v.value = b == 1;
    break;
  }
  case GGUFType::String:
    v.value = readString("string value of key '" + key + "'");
    break;
  case GGUFType::Array: {
    if (depth >= kMaxArrayDepth)
      throw Error(file_ + ": key '" + key + "' has arrays nested deeper than " +
                  std::to_string(kMaxArrayDepth) + " levels");
    GGUFArray arr;
    arr.elemType = readType(key);
    uint64_t count = read<uint64_t>("array length");
    if (count > left() / minSize(arr.elemType))
      throw Error(file_ + ": array '" + key + "' claims " +
                  std::to_string(count) + " elements of type " +
                  ggufTypeName(arr.elemType) + ", more than the " +
                  std::to_string(left()) + " bytes left in the file");
    arr.items.reserve(count);
    for (uint64_t i = 0; i < count; ++i)
      arr.items.push_back(readValue(arr.elemType, key, depth + 1));
    v.value = std::move(arr);
    break;
  }
  }
  return v;
}

static std::optional<DType> dtypeOfGgml(uint32_t t) {
  switch (t) {
  case 0:
    return DType::F32;
  case 1:
    return DType::F16;
  case 2:
    return DType::Q4_0;
  case 3:
    return DType::Q4_1;
  case 6:
    return DType::Q5_0;
  case 7:
    return DType::Q5_1;
  case 8:
    return DType::Q8_0;
  case 10:
    return DType::Q2_K;
  case 11:
    return DType::Q3_K;
  case 12:
    return DType::Q4_K;
  case 13:
    return DType::Q5_K;
  case 14:
    return DType::Q6_K;
  case 20:
    return DType::IQ4_NL;
  case 30:
    return DType::BF16;
  case 39:
    return DType::MXFP4;
  default:
    return std::nullopt;
  }
}

/// ggml's name of a tensor type (ggml.h's enum ggml_type, llama.cpp
/// 80fb11a), for messages about types llmc does not read.
static std::string ggmlTypeName(uint32_t t) {
  static const char *const names[] = {
      "F32",        "F16",        "Q4_0",       "Q4_1",     "Q4_2",    "Q4_3",
      "Q5_0",       "Q5_1",       "Q8_0",       "Q8_1",     "Q2_K",    "Q3_K",
      "Q4_K",       "Q5_K",       "Q6_K",       "Q8_K",     "IQ2_XXS", "IQ2_XS",
      "IQ3_XXS",    "IQ1_S",      "IQ4_NL",     "IQ3_S",    "IQ2_S",   "IQ4_XS",
      "I8",         "I16",        "I32",        "I64",      "F64",     "IQ1_M",
      "BF16",       "Q4_0_4_4",   "Q4_0_4_8",   "Q4_0_8_8", "TQ1_0",   "TQ2_0",
      "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4",    "NVFP4",   "Q1_0",
      "Q2_0"};
  if (t < sizeof(names) / sizeof(names[0]))
    return std::string(names[t]) + " (type " + std::to_string(t) + ")";
  return "unknown type " + std::to_string(t);
}

void GGUFParser::readTensorInfo(uint64_t index) {
  TensorRef t;
  t.file = file_;
  t.name = readString("name of tensor #" + std::to_string(index));
  std::string where = file_ + ": tensor '" + t.name + "'";
  uint32_t nDims = read<uint32_t>("tensor dim count");
  if (nDims > kMaxDims)
    throw Error(where + " has " + std::to_string(nDims) +
                " dims (at most 4 allowed)");
  std::vector<int64_t> ne(nDims);
  int64_t numel = 1;
  for (uint32_t i = 0; i < nDims; ++i) {
    uint64_t d = read<uint64_t>("tensor dims");
    if (d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        (d != 0 &&
         numel > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(d)))
      throw Error(where + ": dimension " + std::to_string(d) +
                  " makes the element count overflow");
    ne[i] = static_cast<int64_t>(d);
    numel *= ne[i];
  }
  uint32_t type = read<uint32_t>("tensor type");
  auto dt = dtypeOfGgml(type);
  if (!dt)
    throw Error(file_ + ": tensor '" + t.name + "' is " + ggmlTypeName(type) +
                ", which llmc cannot read; it reads F32, F16, BF16, Q8_0, "
                "Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, "
                "Q6_K and MXFP4");
  t.dtype = *dt;
  int64_t block = dtypeBlockSize(t.dtype);
  if (block > 1 && (nDims == 0 || ne[0] % block != 0))
    throw Error(where + ": innermost dimension " +
                std::to_string(nDims ? ne[0] : 1) + " of a " +
                dtypeName(t.dtype) + " tensor is not a multiple of " +
                std::to_string(block));
  t.nbytes = dtypeBytes(t.dtype, numel);
  t.shape.assign(ne.rbegin(), ne.rend()); // GGUF is innermost first
  offsets_.push_back(read<uint64_t>("tensor data offset"));
  if (!out_.tensorIndex_.emplace(t.name, out_.tensors_.size()).second)
    throw Error(file_ + ": duplicate tensor '" + t.name + "'");
  out_.tensors_.push_back(std::move(t));
}

void GGUFParser::readAlignment() {
  auto it = out_.kvIndex_.find("general.alignment");
  if (it == out_.kvIndex_.end())
    return;
  const GGUFValue &v = out_.kv_[it->second].second;
  const uint64_t *u = std::get_if<uint64_t>(&v.value);
  if (!u || *u == 0 || (*u & (*u - 1)) != 0 || *u > (1u << 20))
    throw Error(file_ +
                ": general.alignment must be an unsigned power of "
                "two up to 1 MiB, got a " +
                std::string(ggufTypeName(v.type)) +
                (u ? " " + std::to_string(*u) : std::string()));
  out_.alignment_ = static_cast<size_t>(*u);
}

void GGUFParser::run() {
  if (size_ < 4)
    throw Error(file_ + ": not a GGUF file (only " + std::to_string(size_) +
                " bytes)");
  if (std::memcmp(data_, "GGUF", 4) != 0) {
    static const char hex[] = "0123456789abcdef";
    std::string m;
    for (int i = 0; i < 4; ++i)
      m += std::string("\\x") + hex[data_[i] >> 4] + hex[data_[i] & 15];
    throw Error(file_ + ": not a GGUF file (magic \"" + m +
                "\", expected \"GGUF\")");
  }
  pos_ = 4;
  out_.version_ = read<uint32_t>("version");
  if (out_.version_ != 2 && out_.version_ != 3)
    throw Error(file_ + ": unsupported GGUF version " +
                std::to_string(out_.version_) + " (supported: 2, 3)");
  uint64_t nTensors = read<uint64_t>("tensor count");
  uint64_t nKv = read<uint64_t>("metadata count");
  // Each KV takes >= 13 bytes and each tensor info >= 24.
  if (nKv > left() / 13)
    throw Error(file_ + ": header claims " + std::to_string(nKv) +
                " metadata entries, more than fit in the file");
  out_.kv_.reserve(nKv);
  for (uint64_t i = 0; i < nKv; ++i) {
    std::string key = readString("key #" + std::to_string(i));
    GGUFType t = readType(key);
    GGUFValue v = readValue(t, key, 0);
    if (!out_.kvIndex_.emplace(key, out_.kv_.size()).second)
      throw Error(file_ + ": duplicate metadata key '" + key + "'");
    out_.kv_.emplace_back(std::move(key), std::move(v));
  }
  readAlignment();
  if (nTensors > left() / 24)
    throw Error(file_ + ": header claims " + std::to_string(nTensors) +
                " tensors, more than fit in the file");
  out_.tensors_.reserve(nTensors);
  for (uint64_t i = 0; i < nTensors; ++i)
    readTensorInfo(i);

  size_t align = out_.alignment_;
  size_t dataStart =
      (pos_ + align - 1) / align * align; // no overflow: pos_ small
  for (size_t i = 0; i < out_.tensors_.size(); ++i) {
    TensorRef &t = out_.tensors_[i];
    uint64_t off = offsets_[i];
    if (off % align != 0)
      throw Error(file_ + ": tensor '" + t.name + "' data offset " +
                  std::to_string(off) + " is not a multiple of the alignment " +
                  std::to_string(align));
    if (dataStart > size_ || off > size_ - dataStart ||
        t.nbytes > size_ - dataStart - off)
      throw Error(file_ + ": tensor '" + t.name + "' data [" +
                  std::to_string(off) + ", +" + std::to_string(t.nbytes) +
                  ") runs past the end of the file (data section starts at " +
                  std::to_string(dataStart) + ", file is " +
                  std::to_string(size_) + " bytes)");
    t.data = data_ + dataStart + off;
  }
}

GGUFFile GGUFFile::parse(const uint8_t *data, size_t size,
                         const std::string &fileName) {
  GGUFFile f;
  f.fileName_ = fileName;
  GGUFParser(data, size, f).run();
  return f;
}

GGUFFile::GGUFFile(const std::string &path) {
  auto mapped = std::make_unique<MappedFile>(path);
  *this = parse(mapped->data(), mapped->size(), path);
  file_ = std::move(mapped);
}

GGUFFile::~GGUFFile() = default;
GGUFFile::GGUFFile(GGUFFile &&) noexcept = default;
GGUFFile &GGUFFile::operator=(GGUFFile &&) noexcept = default;

const TensorRef *GGUFFile::find(std::string_view name) const {
  auto it = tensorIndex_.find(name);
  return it == tensorIndex_.end() ? nullptr : &tensors_[it->second];
}

} // namespace llmc::weights
