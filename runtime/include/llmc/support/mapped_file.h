//===- mapped_file.h - Read-only memory-mapped files ----------*- C++ -*-===//
//
// Checkpoints and plans are read through mmap so that weights are never copied
// into memory as a whole. The mapping lives as long as the MappedFile.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace llmc {

class MappedFile {
public:
  /// Maps `path` read-only. Throws llmc::Error naming the file if it cannot be
  /// opened or mapped. An empty file maps to an empty span.
  explicit MappedFile(const std::string &path);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  MappedFile(MappedFile &&other) noexcept;
  MappedFile &operator=(MappedFile &&other) noexcept;

  const uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }
  std::string_view bytes() const {
    return {reinterpret_cast<const char *>(data_), size_};
  }

private:
  void release();
  std::string path_;
  const uint8_t *data_ = nullptr;
  size_t size_ = 0;
};

/// Drops the whole pages inside [data, data + size) of a read-only mapping
/// from this process's resident memory; they stay in the page cache and are
/// read again if touched. A compiler reads each checkpoint tensor once, and
/// without this every page it touched would count as resident until exit.
void dropMappedPages(const void *data, size_t size);

/// Reads a whole (small) file into a string; throws llmc::Error naming it.
std::string readFile(const std::string &path);

} // namespace llmc
