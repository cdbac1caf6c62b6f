#include "output_file.h"

#include "llmc/support/error.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace llmc::detail {
namespace {

// O_DIRECT needs buffers, offsets and sizes aligned to the device's logical
// block; 4096 covers every device in use.
constexpr size_t kBlock = 4096;
constexpr size_t kChunk = size_t(8) << 20;

uint8_t *alignedBuffer(size_t size) {
  void *p = std::aligned_alloc(kBlock, size);
  if (!p)
    throw Error("out of memory for a " + std::to_string(size) +
                "-byte write buffer");
  return static_cast<uint8_t *>(p);
}

} // namespace

void OutputFile::Free::operator()(uint8_t *p) const { std::free(p); }

OutputFile::OutputFile(std::string path)
    : path_(std::move(path)), chunk_(alignedBuffer(kChunk)),
      first_(alignedBuffer(kBlock)) {
  const int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
#ifdef O_DIRECT
  fd_ = ::open(path_.c_str(), flags | O_DIRECT, 0644);
  direct_ = fd_ >= 0;
#endif
  if (fd_ < 0)
    fd_ = ::open(path_.c_str(), flags, 0644);
  if (fd_ < 0)
    fail("cannot create");
}

OutputFile::~OutputFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

void OutputFile::fail(const char *what) const {
  throw Error(path_ + ": " + what + ": " + std::strerror(errno));
}

void OutputFile::writeAt(const uint8_t *data, size_t size, uint64_t offset) {
  while (size > 0) {
    ssize_t n = ::pwrite(fd_, data, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = ENOSPC;
      fail("cannot write");
    }
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

void OutputFile::flush(size_t bytes) {
  if (written_ == 0 && firstBytes_ == 0) {
    firstBytes_ = std::min(bytes, kBlock);
    std::memcpy(first_.get(), chunk_.get(), firstBytes_);
  }
  writeAt(chunk_.get(), bytes, written_);
  written_ += bytes;
  used_ -= std::min(used_, bytes);
}

void OutputFile::write(const void *data, size_t size) {
  auto *p = static_cast<const uint8_t *>(data);
  while (size > 0) {
    size_t n = std::min(size, kChunk - used_);
    std::memcpy(chunk_.get() + used_, p, n);
    used_ += n;
    p += n;
    size -= n;
    if (used_ == kChunk)
      flush(kChunk);
  }
}

void OutputFile::finish(const void *head, size_t size) {
  const uint64_t total = written_ + used_;
  if (used_ > 0) {
    // The tail, padded to a whole block for O_DIRECT and trimmed below.
    size_t padded = direct_ ? (used_ + kBlock - 1) / kBlock * kBlock : used_;
    std::memset(chunk_.get() + used_, 0, padded - used_);
    flush(padded);
  }
  if (size > firstBytes_)
    throw Error(path_ + ": the header is larger than what was written");
  std::memcpy(first_.get(), head, size);
  writeAt(first_.get(), direct_ ? kBlock : firstBytes_, 0);
  if (written_ != total && ::ftruncate(fd_, static_cast<off_t>(total)) != 0)
    fail("cannot set the size of");
  if (::fsync(fd_) != 0)
    fail("cannot write");
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    fail("cannot write");
}

} // namespace llmc::detail
