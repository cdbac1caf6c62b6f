// Typed access to GGUF metadata, with errors that say what was found instead.
#include "llmc/support/error.h"
#include "llmc/weights/gguf.h"

#include <limits>

namespace llmc::weights {

namespace {

bool isInt(GGUFType t) {
  switch (t) {
  case GGUFType::U8:
  case GGUFType::I8:
  case GGUFType::U16:
  case GGUFType::I16:
  case GGUFType::U32:
  case GGUFType::I32:
  case GGUFType::U64:
  case GGUFType::I64:
    return true;
  default:
    return false;
  }
}

bool isFloat(GGUFType t) { return t == GGUFType::F32 || t == GGUFType::F64; }

std::string describe(const GGUFValue &v) {
  if (const auto *a = std::get_if<GGUFArray>(&v.value))
    return std::string("array of ") + ggufTypeName(a->elemType);
  return ggufTypeName(v.type);
}

[[noreturn]] void wrongType(const std::string &file, std::string_view key,
                            const char *expected, const GGUFValue &v) {
  throw Error(file + ": metadata key '" + std::string(key) + "' is " +
              describe(v) + ", expected " + expected);
}

int64_t intOf(const std::string &file, std::string_view key,
              const GGUFValue &v) {
  if (const auto *s = std::get_if<int64_t>(&v.value))
    return *s;
  const auto &u = std::get<uint64_t>(v.value);
  if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw Error(file + ": metadata key '" + std::string(key) + "' value " +
                std::to_string(u) + " does not fit in int64");
  return static_cast<int64_t>(u);
}

const GGUFArray &arrayOf(const std::string &file, std::string_view key,
                         const GGUFValue &v, const char *expected,
                         bool (*elemOk)(GGUFType)) {
  const auto *a = std::get_if<GGUFArray>(&v.value);
  if (!a || !elemOk(a->elemType))
    wrongType(file, key, expected, v);
  return *a;
}

} // namespace

bool GGUFFile::has(std::string_view key) const {
  return kvIndex_.find(key) != kvIndex_.end();
}

const GGUFValue *GGUFFile::get(std::string_view key) const {
  auto it = kvIndex_.find(key);
  return it == kvIndex_.end() ? nullptr : &kv_[it->second].second;
}

const GGUFValue &GGUFFile::require(std::string_view key) const {
  const GGUFValue *v = get(key);
  if (!v)
    throw Error(fileName_ + ": metadata key '" + std::string(key) +
                "' is missing");
  return *v;
}

std::string GGUFFile::getString(std::string_view key) const {
  const GGUFValue &v = require(key);
  if (v.type != GGUFType::String)
    wrongType(fileName_, key, "string", v);
  return std::get<std::string>(v.value);
}

int64_t GGUFFile::getInt(std::string_view key) const {
  const GGUFValue &v = require(key);
  if (!isInt(v.type))
    wrongType(fileName_, key, "an integer", v);
  return intOf(fileName_, key, v);
}

double GGUFFile::getFloat(std::string_view key) const {
  const GGUFValue &v = require(key);
  if (!isFloat(v.type))
    wrongType(fileName_, key, "float32 or float64", v);
  return std::get<double>(v.value);
}

bool GGUFFile::getBool(std::string_view key) const {
  const GGUFValue &v = require(key);
  if (v.type != GGUFType::Bool)
    wrongType(fileName_, key, "bool", v);
  return std::get<bool>(v.value);
}

std::vector<std::string> GGUFFile::getStringArray(std::string_view key) const {
  const GGUFArray &a =
      arrayOf(fileName_, key, require(key), "an array of strings",
              [](GGUFType t) { return t == GGUFType::String; });
  std::vector<std::string> out;
  out.reserve(a.items.size());
  for (const auto &item : a.items)
    out.push_back(std::get<std::string>(item.value));
  return out;
}

std::vector<float> GGUFFile::getFloatArray(std::string_view key) const {
  const GGUFArray &a = arrayOf(fileName_, key, require(key),
                               "an array of float32/float64", isFloat);
  std::vector<float> out;
  out.reserve(a.items.size());
  for (const auto &item : a.items)
    out.push_back(static_cast<float>(std::get<double>(item.value)));
  return out;
}

std::vector<int64_t> GGUFFile::getIntArray(std::string_view key) const {
  const GGUFArray &a =
      arrayOf(fileName_, key, require(key), "an array of integers", isInt);
  std::vector<int64_t> out;
  out.reserve(a.items.size());
  for (const auto &item : a.items)
    out.push_back(intOf(fileName_, key, item));
  return out;
}

std::optional<std::string> GGUFFile::findString(std::string_view key) const {
  return has(key) ? std::optional(getString(key)) : std::nullopt;
}
std::optional<int64_t> GGUFFile::findInt(std::string_view key) const {
  return has(key) ? std::optional(getInt(key)) : std::nullopt;
}
std::optional<double> GGUFFile::findFloat(std::string_view key) const {
  return has(key) ? std::optional(getFloat(key)) : std::nullopt;
}
std::optional<bool> GGUFFile::findBool(std::string_view key) const {
  return has(key) ? std::optional(getBool(key)) : std::nullopt;
}

} // namespace llmc::weights
