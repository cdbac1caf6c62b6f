//===- output_file.h - Sequential file writes that bypass the page cache -===//
//
// A plan is written once, front to back, and not read back by the compiler.
// Through the page cache that costs a copy and memory-cgroup charging per
// page (200 MB/s here, and the dirty pages count against the machine); with
// O_DIRECT the same disk takes 1 GB/s. Where O_DIRECT is refused (tmpfs,
// some network file systems) the writes are buffered as usual. Owned and
// used by one thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace llmc::detail {

class OutputFile {
public:
  /// Creates (truncates) `path`; throws llmc::Error naming it.
  explicit OutputFile(std::string path);
  ~OutputFile();
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;

  /// Appends `size` bytes.
  void write(const void *data, size_t size);
  /// Writes what is pending, replaces the file's first `size` bytes with
  /// `head` (the header, once its checksums are known), trims the padding
  /// O_DIRECT needed, syncs the file to disk once and closes it. Errors
  /// (a full disk, ...) throw llmc::Error naming the path.
  void finish(const void *head, size_t size);

private:
  [[noreturn]] void fail(const char *what) const;
  void flush(size_t bytes);
  void writeAt(const uint8_t *data, size_t size, uint64_t offset);

  std::string path_;
  int fd_ = -1;
  bool direct_ = false;
  struct Free {
    void operator()(uint8_t *p) const;
  };
  std::unique_ptr<uint8_t, Free> chunk_, first_;
  size_t used_ = 0;       // bytes pending in chunk_
  uint64_t written_ = 0;  // bytes on disk (a multiple of the block size)
  size_t firstBytes_ = 0; // how much of the first block first_ holds
};

} // namespace llmc::detail
