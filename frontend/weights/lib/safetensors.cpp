#include "llmc/weights/safetensors.h"

#include "json_util.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

namespace llmc::weights {

using nlohmann::json;

namespace {

struct DtypeName {
  const char *name;
  DType dtype;
};
constexpr DtypeName kDtypes[] = {
    {"F64", DType::F64},   {"F32", DType::F32}, {"F16", DType::F16},
    {"BF16", DType::BF16}, {"I64", DType::I64}, {"I32", DType::I32},
    {"I16", DType::I16},   {"I8", DType::I8},   {"U8", DType::U8},
    {"BOOL", DType::Bool},
};

std::optional<DType> dtypeFromName(const std::string &s) {
  for (const auto &d : kDtypes)
    if (s == d.name)
      return d.dtype;
  return std::nullopt;
}

std::string supportedList() {
  std::string s;
  for (const auto &d : kDtypes)
    s += std::string(s.empty() ? "" : ", ") + d.name;
  return s;
}

// An integer that fits int64_t, or nullopt (floats, bools, huge values).
std::optional<int64_t> asInt64(const json &v) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer())
    return v.get<int64_t>();
  return std::nullopt;
}

class HeaderParser {
public:
  HeaderParser(const std::string &file, size_t dataSize)
      : file_(file), dataSize_(dataSize) {}

  TensorRef tensor(const std::string &name, const json &entry,
                   const uint8_t *dataStart) {
    std::string where = file_ + ": tensor '" + name + "'";
    if (!entry.is_object())
      throw Error(where +
                  ": expected a JSON object with dtype, shape and "
                  "data_offsets, got " +
                  detail::jsonTypeName(entry));
    const json &dtype = field(entry, "dtype", where);
    if (!dtype.is_string())
      throw Error(where + ": 'dtype' must be a string, got " +
                  detail::jsonTypeName(dtype));
    std::string dtypeStr = dtype.get<std::string>();
    auto dt = dtypeFromName(dtypeStr);
    if (!dt)
      throw Error("unsupported dtype '" + dtypeStr + "' for tensor '" + name +
                  "' in " + file_ + "; supported: " + supportedList());

    TensorRef t;
    t.name = name;
    t.dtype = *dt;
    t.file = file_;
    const json &shape = field(entry, "shape", where);
    if (!shape.is_array())
      throw Error(where + ": 'shape' must be an array of integers, got " +
                  detail::jsonTypeName(shape));
    int64_t numel = 1;
    for (const json &d : shape) {
      auto v = asInt64(d);
      if (!v)
        throw Error(where + ": 'shape' must be an array of integers, got " +
                    shape.dump());
      if (*v < 0)
        throw Error(where + ": negative dimension " + std::to_string(*v) +
                    " in shape " + shape.dump());
      if (*v != 0 && numel > std::numeric_limits<int64_t>::max() / *v)
        throw Error(where + ": shape " + shape.dump() +
                    " has too many elements");
      numel *= *v;
      t.shape.push_back(*v);
    }

    const json &offsets = field(entry, "data_offsets", where);
    std::optional<int64_t> begin, end;
    if (offsets.is_array() && offsets.size() == 2) {
      begin = asInt64(offsets[0]);
      end = asInt64(offsets[1]);
    }
    if (!begin || !end || *begin < 0 || *end < 0)
      throw Error(where +
                  ": 'data_offsets' must be [begin, end] with "
                  "non-negative integers, got " +
                  offsets.dump());
    if (*begin > *end)
      throw Error(where + ": data_offsets [" + std::to_string(*begin) + ", " +
                  std::to_string(*end) + "] has begin after end");
    if (static_cast<uint64_t>(*end) > dataSize_)
      throw Error(where + ": data_offsets [" + std::to_string(*begin) + ", " +
                  std::to_string(*end) + "] end past the end of the file (" +
                  std::to_string(dataSize_) + " data bytes)");
    size_t expected;
    try {
      expected = dtypeBytes(t.dtype, numel);
    } catch (const Error &e) {
      throw Error(where + ": " + e.what());
    }
    t.nbytes = static_cast<size_t>(*end - *begin);
    if (t.nbytes != expected)
      throw Error(where + ": data_offsets [" + std::to_string(*begin) + ", " +
                  std::to_string(*end) + "] span " + std::to_string(t.nbytes) +
                  " bytes, but shape " + shape.dump() + " of " + dtypeStr +
                  " needs " + std::to_string(expected));
    t.data = dataStart + *begin;
    return t;
  }

private:
  const json &field(const json &entry, const char *key,
                    const std::string &where) {
    auto it = entry.find(key);
    if (it == entry.end())
      throw Error(where + ": missing '" + key + "'");
    return *it;
  }

  const std::string &file_;
  size_t dataSize_;
};

void parseMetadata(const json &meta, const std::string &file,
                   std::map<std::string, std::string> *out) {
  if (!meta.is_object())
    throw Error(file + ": '__metadata__' must be an object of strings, got " +
                detail::jsonTypeName(meta));
  for (const auto &[k, v] : meta.items()) {
    if (!v.is_string())
      throw Error(file + ": '__metadata__' value for '" + k +
                  "' must be a string, got " + detail::jsonTypeName(v));
    if (out)
      (*out)[k] = v.get<std::string>();
  }
}

void checkOverlaps(std::vector<TensorRef> &tensors, const std::string &file) {
  std::vector<const TensorRef *> order;
  for (const auto &t : tensors)
    if (t.nbytes > 0)
      order.push_back(&t);
  std::sort(
      order.begin(), order.end(),
      [](const TensorRef *a, const TensorRef *b) { return a->data < b->data; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i]->data < order[i - 1]->data + order[i - 1]->nbytes)
      throw Error(file + ": tensors '" + order[i - 1]->name + "' and '" +
                  order[i]->name + "' overlap in the data section");
}

} // namespace

std::vector<TensorRef>
parseSafetensors(const uint8_t *data, size_t size, const std::string &fileName,
                 std::map<std::string, std::string> *metadata) {
  if (size < 8)
    throw Error(fileName + ": file is " + std::to_string(size) +
                " bytes, too small for a safetensors header (at least 8)");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | data[i];
  if (headerLen > size - 8)
    throw Error(fileName + ": header length " + std::to_string(headerLen) +
                " is larger than the file (" + std::to_string(size) +
                " bytes); the file is truncated or not safetensors");
  std::string_view text(reinterpret_cast<const char *>(data + 8), headerLen);
  json header = detail::parseJson(text, fileName, "tensor");
  if (!header.is_object())
    throw Error(fileName + ": header must be a JSON object, got " +
                detail::jsonTypeName(header));

  const uint8_t *dataStart = data + 8 + headerLen;
  HeaderParser parser(fileName, size - 8 - headerLen);
  std::vector<TensorRef> tensors;
  tensors.reserve(header.size());
  // nlohmann's object is a sorted map; keep the file's order anyway by
  // ordering tensors by offset (HF writes them in offset order).
  for (const auto &[name, entry] : header.items()) {
    if (name == "__metadata__") {
      parseMetadata(entry, fileName, metadata);
      continue;
    }
    tensors.push_back(parser.tensor(name, entry, dataStart));
  }
  checkOverlaps(tensors, fileName);
  std::stable_sort(
      tensors.begin(), tensors.end(),
      [](const TensorRef &a, const TensorRef &b) { return a.data < b.data; });
  return tensors;
}

SafetensorsFile::SafetensorsFile(const std::string &path)
    : file_(std::make_unique<MappedFile>(path)) {
  tensors_ = parseSafetensors(file_->data(), file_->size(), path, &metadata_);
}

SafetensorsFile::~SafetensorsFile() = default;
SafetensorsFile::SafetensorsFile(SafetensorsFile &&) noexcept = default;
SafetensorsFile &
SafetensorsFile::operator=(SafetensorsFile &&) noexcept = default;

const std::string &SafetensorsFile::path() const { return file_->path(); }

const TensorRef *SafetensorsFile::find(std::string_view name) const {
  for (const auto &t : tensors_)
    if (t.name == name)
      return &t;
  return nullptr;
}

} // namespace llmc::weights
