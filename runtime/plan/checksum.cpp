#include "checksum.h"

#include <algorithm>
#include <cstring>

namespace llmc::detail {
namespace {

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kP3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kP4 = 0x85EBCA77C2B2CA63ULL;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ULL;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

// memcpy: plan bytes come from anywhere in a mapping, unaligned.
uint64_t read64(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

uint32_t read32(const uint8_t *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

uint64_t round(uint64_t acc, uint64_t input) {
  acc += input * kP2;
  acc = rotl(acc, 31);
  return acc * kP1;
}

uint64_t mergeRound(uint64_t acc, uint64_t value) {
  acc ^= round(0, value);
  return acc * kP1 + kP4;
}

void stripes(uint64_t acc[4], const uint8_t *p, size_t count) {
  uint64_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
  for (size_t i = 0; i < count; ++i, p += 32) {
    a0 = round(a0, read64(p));
    a1 = round(a1, read64(p + 8));
    a2 = round(a2, read64(p + 16));
    a3 = round(a3, read64(p + 24));
  }
  acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

} // namespace

Checksum::Checksum() : acc_{kP1 + kP2, kP2, 0, 0 - kP1}, pending_{} {}

void Checksum::update(const void *data, size_t size) {
  const auto *p = static_cast<const uint8_t *>(data);
  total_ += size;
  if (pendingSize_ > 0) {
    size_t take = std::min(size, sizeof(pending_) - pendingSize_);
    std::memcpy(pending_ + pendingSize_, p, take);
    pendingSize_ += take;
    p += take;
    size -= take;
    if (pendingSize_ < sizeof(pending_))
      return;
    stripes(acc_, pending_, 1);
    pendingSize_ = 0;
  }
  stripes(acc_, p, size / 32);
  p += size / 32 * 32;
  size %= 32;
  if (size > 0) {
    std::memcpy(pending_, p, size);
    pendingSize_ = size;
  }
}

uint64_t Checksum::digest() const {
  uint64_t h;
  if (total_ >= 32) {
    h = rotl(acc_[0], 1) + rotl(acc_[1], 7) + rotl(acc_[2], 12) +
        rotl(acc_[3], 18);
    for (uint64_t a : acc_)
      h = mergeRound(h, a);
  } else {
    h = kP5;
  }
  h += total_;
  const uint8_t *p = pending_;
  size_t size = pendingSize_;
  for (; size >= 8; size -= 8, p += 8) {
    h ^= round(0, read64(p));
    h = rotl(h, 27) * kP1 + kP4;
  }
  if (size >= 4) {
    h ^= uint64_t(read32(p)) * kP1;
    h = rotl(h, 23) * kP2 + kP3;
    p += 4;
    size -= 4;
  }
  for (; size > 0; --size, ++p) {
    h ^= *p * kP5;
    h = rotl(h, 11) * kP1;
  }
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

uint64_t checksum(const void *data, size_t size) {
  Checksum c;
  c.update(data, size);
  return c.digest();
}

} // namespace llmc::detail
