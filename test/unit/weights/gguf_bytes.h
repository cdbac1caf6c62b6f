//===- gguf_bytes.h - Hand-built GGUF bytes for bad-input tests ----------===//
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace llmc::weights::test {

/// Appends little-endian GGUF fields; starts with magic + version.
class RawGGUF {
public:
  explicit RawGGUF(uint32_t version = 3, uint64_t nTensors = 0,
                   uint64_t nKv = 0) {
    bytes += "GGUF";
    u32(version).u64(nTensors).u64(nKv);
  }
  template <typename T> RawGGUF &put(T v) {
    char buf[sizeof(T)];
    std::memcpy(buf, &v, sizeof(T));
    bytes.append(buf, sizeof(T));
    return *this;
  }
  RawGGUF &u32(uint32_t v) { return put(v); }
  RawGGUF &u64(uint64_t v) { return put(v); }
  RawGGUF &str(const std::string &s) {
    u64(s.size());
    bytes += s;
    return *this;
  }
  /// A tensor info: name, dims (GGUF order), ggml type, offset.
  RawGGUF &tensor(const std::string &name, std::initializer_list<uint64_t> ne,
                  uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne)
      u64(d);
    return u32(type).u64(offset);
  }
  RawGGUF &padTo(size_t align) {
    bytes.resize((bytes.size() + align - 1) / align * align, '\0');
    return *this;
  }
  std::string bytes;
};

} // namespace llmc::weights::test
