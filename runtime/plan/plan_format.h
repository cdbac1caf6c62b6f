//===- plan_format.h - The fixed plan header -------------------*- C++ -*-===//
//
// The 64-byte header, little-endian:
//   0 magic "LLMCPLAN"    8 major u32     12 minor u32
//  16 header size u32    20 flags u32    24 flatbuffer offset u64
//  32 flatbuffer size    40 weights offset u64 (a multiple of 4096)
//  48 weights size u64   56 checksum u64 (XXH64 of the bytes from the end of
//                           the header to the end of the weight section)
// Since 1.1 (header size 72):
//  64 metadata checksum u64 (XXH64 of the bytes from the end of the header to
//     the weights offset: the FlatBuffer and its padding)
// Loading checks the metadata checksum; the whole-file one is for `llmc
// inspect --verify` (hashing GBs of weights before every run is what this
// split avoids). A later minor may grow the header again (header size says by
// how much); readers skip what they do not know.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/plan.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace llmc::detail {

static_assert(std::endian::native == std::endian::little,
              "the plan format is little-endian; add byte swaps here");

inline constexpr char kPlanMagic[8] = {'L', 'L', 'M', 'C', 'P', 'L', 'A', 'N'};
/// What a 1.0 header holds; the smallest a reader accepts.
inline constexpr size_t kPlanHeaderSize = 64;
/// What this writer writes (1.1: + the metadata checksum).
inline constexpr size_t kPlanHeaderSizeV1_1 = 72;
inline constexpr uint64_t kWeightSectionAlign = 4096;
inline constexpr uint64_t kWeightAlign = 64;
// FlatBuffers 2.x cannot address more (signed 32-bit offsets).
inline constexpr uint64_t kMaxFlatBufferSize = (uint64_t(1) << 31) - 1;

inline constexpr size_t kMajorOffset = 8, kMinorOffset = 12,
                        kHeaderSizeOffset = 16, kFlagsOffset = 20,
                        kFlatBufferOffsetOffset = 24,
                        kFlatBufferSizeOffset = 32, kWeightsOffsetOffset = 40,
                        kWeightsSizeOffset = 48, kChecksumOffset = 56,
                        kMetadataChecksumOffset = 64;

struct PlanHeader {
  uint32_t major = 0, minor = 0, headerSize = 0, flags = 0;
  uint64_t flatBufferOffset = 0, flatBufferSize = 0;
  uint64_t weightsOffset = 0, weightsSize = 0;
  uint64_t checksum = 0;
  uint64_t metadataChecksum = 0; // 1.1+, when headerSize >= 72
};

template <typename T> T readLE(const uint8_t *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T> void writeLE(uint8_t *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

inline void encodeHeader(const PlanHeader &h,
                         uint8_t out[kPlanHeaderSizeV1_1]) {
  std::memset(out, 0, kPlanHeaderSizeV1_1);
  std::memcpy(out, kPlanMagic, sizeof(kPlanMagic));
  writeLE(out + kMajorOffset, h.major);
  writeLE(out + kMinorOffset, h.minor);
  writeLE(out + kHeaderSizeOffset, h.headerSize);
  writeLE(out + kFlagsOffset, h.flags);
  writeLE(out + kFlatBufferOffsetOffset, h.flatBufferOffset);
  writeLE(out + kFlatBufferSizeOffset, h.flatBufferSize);
  writeLE(out + kWeightsOffsetOffset, h.weightsOffset);
  writeLE(out + kWeightsSizeOffset, h.weightsSize);
  writeLE(out + kChecksumOffset, h.checksum);
  writeLE(out + kMetadataChecksumOffset, h.metadataChecksum);
}

/// `in` holds `size` >= kPlanHeaderSize bytes; the magic is checked apart.
inline PlanHeader decodeHeader(const uint8_t *in, size_t size) {
  PlanHeader h;
  h.major = readLE<uint32_t>(in + kMajorOffset);
  h.minor = readLE<uint32_t>(in + kMinorOffset);
  h.headerSize = readLE<uint32_t>(in + kHeaderSizeOffset);
  h.flags = readLE<uint32_t>(in + kFlagsOffset);
  h.flatBufferOffset = readLE<uint64_t>(in + kFlatBufferOffsetOffset);
  h.flatBufferSize = readLE<uint64_t>(in + kFlatBufferSizeOffset);
  h.weightsOffset = readLE<uint64_t>(in + kWeightsOffsetOffset);
  h.weightsSize = readLE<uint64_t>(in + kWeightsSizeOffset);
  h.checksum = readLE<uint64_t>(in + kChecksumOffset);
  if (h.headerSize >= kPlanHeaderSizeV1_1 && size >= kPlanHeaderSizeV1_1)
    h.metadataChecksum = readLE<uint64_t>(in + kMetadataChecksumOffset);
  return h;
}

inline uint64_t alignUp(uint64_t x, uint64_t align) {
  return (x + align - 1) / align * align;
}

/// One weight as the file writer sees it: where it goes and how to produce
/// its bytes.
struct WeightSlot {
  uint64_t offset = 0, nbytes = 0;
  std::function<void(uint8_t *)> fill;
};

/// Writes header, `flatBuffer`, padding and the weights (offsets relative to
/// the weight section, ascending, non-overlapping), hashing as it goes.
/// PlanWriter uses it; tests use it to write plans whose metadata the writer
/// would not produce.
void writePlanFile(const std::string &path, const uint8_t *flatBuffer,
                   size_t flatBufferSize,
                   const std::vector<WeightSlot> &weights,
                   const WriteProgressFn &progress = {});

} // namespace llmc::detail
