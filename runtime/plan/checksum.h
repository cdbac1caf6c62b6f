//===- checksum.h - The plan checksum (XXH64) ------------------*- C++ -*-===//
//
// Plans are GBs, so the checksum must run at memory speed and stream: the
// writer hashes as it writes, one weight at a time. This is XXH64 (seed 0),
// bit-exact with the reference implementation so a plan can be checked with
// `xxhsum -H64` on its bytes after the header.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>

namespace llmc::detail {

class Checksum {
public:
  Checksum();
  void update(const void *data, size_t size);
  uint64_t digest() const;

private:
  uint64_t acc_[4];
  uint8_t pending_[32];
  size_t pendingSize_ = 0;
  uint64_t total_ = 0;
};

uint64_t checksum(const void *data, size_t size);

} // namespace llmc::detail
