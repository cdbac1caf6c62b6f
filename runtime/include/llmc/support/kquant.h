//===- kquant.h - ggml's K-quant super-blocks, as llmc keeps them -*- C++
//-*-===//
//
// Q4_K, Q5_K and Q6_K hold 256 weights per super-block. A plan keeps each
// block's bytes as ggml wrote them, in two halves (backend.h): its codes and
// its header (scales, mins, d). Both halves are contiguous runs of ggml's
// block, so a plan is exactly as large as the GGUF tensor it came from.
//
//   Q4_K (144 bytes): header d, dmin (f16), scales[12] | codes qs[128]
//   Q5_K (176 bytes): header d, dmin (f16), scales[12] | codes qh[32] qs[128]
//   Q6_K (210 bytes): codes ql[128] qh[64] | header scales[16] (int8), d (f16)
//
// decode() reads them as ggml's dequantize_row_* does, expression by
// expression, so the floats are ggml's own (test/data/ggml-quants). Every
// backend and the GGUF reader use it; kernels use the integer form
// (subScales(), codes()).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/support/half.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace llmc::kquant {

enum class Format : uint8_t { Q4_K, Q5_K, Q6_K };

constexpr int kBlock = 256;

struct Layout {
  std::string_view name; // as llmc names the format ("q4_k")
  std::string_view ggml; // as ggml names the type ("Q4_K")
  int bits;              // codes per weight: codeBytes = 256 * bits / 8
  int headerBytes;       // per super-block
  int codeBytes;         // per super-block
  int headerAt, codesAt; // offsets within ggml's block
};

constexpr Layout layout(Format f) {
  switch (f) {
  case Format::Q4_K:
    return {"q4_k", "Q4_K", 4, 16, 128, 0, 16};
  case Format::Q5_K:
    return {"q5_k", "Q5_K", 5, 16, 160, 0, 16};
  case Format::Q6_K:
    break;
  }
  return {"q6_k", "Q6_K", 6, 18, 192, 192, 0};
}

/// The format of an llmc_dtype (backend.h numbers them LLMC_Q4_K = 9,
/// LLMC_Q5_K, LLMC_Q6_K in this order), none for any other.
constexpr std::optional<Format> formatOfDtype(uint32_t dtype) {
  if (dtype < 9 || dtype > 11)
    return std::nullopt;
  return static_cast<Format>(dtype - 9);
}

constexpr int blockBytes(Format f) {
  return layout(f).headerBytes + layout(f).codeBytes;
}

/// By llmc's name ("q4_k") or ggml's ("Q4_K").
inline std::optional<Format> formatNamed(std::string_view name) {
  for (Format f : {Format::Q4_K, Format::Q5_K, Format::Q6_K})
    if (name == layout(f).name || name == layout(f).ggml)
      return f;
  return std::nullopt;
}

inline float halfAt(const uint8_t *p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16ToFloat(h);
}

/// Q4_K / Q5_K's eight 6-bit scales and mins from their 12 packed bytes:
/// scales in sm[0..7], mins in sm[8..15]. Sub-block j < 4 keeps its scale
/// and min in the low 6 bits of bytes j and j + 4; j >= 4 has its low 4
/// bits in byte j + 4 (scale low nibble, min high) and its top 2 in the
/// spare bits of bytes j - 4 (scale) and j (min). Four at a time.
inline void scalesAndMins(const uint8_t *packed, uint8_t *sm) {
  uint32_t w[3];
  std::memcpy(w, packed, 12);
  const uint32_t six = 0x3f3f3f3f, four = 0x0f0f0f0f, two = 0x03030303;
  const uint32_t out[4] = {w[0] & six, (w[2] & four) | ((w[0] >> 6) & two) << 4,
                           w[1] & six,
                           ((w[2] >> 4) & four) | ((w[1] >> 6) & two) << 4};
  std::memcpy(sm, out, 16);
}

/// Code i (0..255) of a super-block as an integer: Q4_K 0..15, Q5_K 0..31
/// (value d * scale * q - dmin * min), Q6_K -32..31 (value d * scale * q).
inline int code(Format f, const uint8_t *codes, int i) {
  const int half = i / 128, r = i % 128;
  switch (f) {
  case Format::Q4_K: {
    // Each 64 values: 32 bytes, the first 32 in low nibbles.
    const uint8_t b = codes[(i / 64) * 32 + i % 32];
    return (i % 64) < 32 ? (b & 0xF) : (b >> 4);
  }
  case Format::Q5_K: {
    const uint8_t *qh = codes, *qs = codes + 32;
    const uint8_t b = qs[(i / 64) * 32 + i % 32];
    const int low = (i % 64) < 32 ? (b & 0xF) : (b >> 4);
    return low | (((qh[i % 32] >> (i / 32)) & 1) << 4);
  }
  case Format::Q6_K:
    break;
  }
  // Q6_K: per 128 values, ql 64 bytes and qh 32: value r's low nibble in
  // ql[r % 64] (low for r < 64), its high 2 bits in qh[r % 32] at 2*(r/32).
  const uint8_t *ql = codes + 64 * half, *qh = codes + 128 + 32 * half;
  const int low = r < 64 ? (ql[r % 64] & 0xF) : (ql[r % 64] >> 4);
  return (low | (((qh[r % 32] >> (2 * (r / 32))) & 3) << 4)) - 32;
}

/// Sub-block scales as integers, with the super-block's float factors:
/// value i = d * scale[i / sub] * code(i) - dmin * min[i / sub], sub = 32
/// (Q4_K, Q5_K: 8 sub-blocks, scale and min 0..63) or 16 (Q6_K: 16
/// sub-blocks, scale -128..127, no min: dmin = 0).
struct SubScales {
  float d, dmin;
  int count; // 8 or 16
  int scale[16], min[16];
};

inline SubScales subScales(Format f, const uint8_t *header) {
  SubScales s{};
  if (f == Format::Q6_K) {
    s.count = 16;
    s.d = halfAt(header + 16);
    for (int j = 0; j < 16; ++j)
      s.scale[j] = static_cast<int8_t>(header[j]);
    return s;
  }
  s.count = 8;
  s.d = halfAt(header);
  s.dmin = halfAt(header + 2);
  uint8_t sm[16];
  scalesAndMins(header + 4, sm);
  for (int j = 0; j < 8; ++j) {
    s.scale[j] = sm[j];
    s.min[j] = sm[8 + j];
  }
  return s;
}

/// The 256 floats of one super-block, bit for bit ggml's dequantize_row_*.
inline void decode(Format f, const uint8_t *header, const uint8_t *codes,
                   float *y) {
  if (f == Format::Q6_K) {
    const uint8_t *ql = codes, *qh = codes + 128;
    const int8_t *sc = reinterpret_cast<const int8_t *>(header);
    const float d = halfAt(header + 16);
    for (int n = 0; n < kBlock; n += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int8_t q1 =
            int8_t((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int8_t q2 =
            int8_t((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int8_t q3 = int8_t((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int8_t q4 =
            int8_t((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l + 0] = d * sc[is + 0] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
    return;
  }
  const bool five = f == Format::Q5_K;
  const float d = halfAt(header), min = halfAt(header + 2);
  uint8_t sm[16];
  scalesAndMins(header + 4, sm);
  const uint8_t *qh = codes, *ql = codes + (five ? 32 : 0);
  int is = 0;
  uint8_t u1 = 1, u2 = 2;
  for (int j = 0; j < kBlock; j += 64) {
    const float d1 = d * sm[is], m1 = min * sm[8 + is];
    const float d2 = d * sm[is + 1], m2 = min * sm[8 + is + 1];
    for (int l = 0; l < 32; ++l)
      *y++ = d1 * ((ql[l] & 0xF) + (five && (qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l)
      *y++ = d2 * ((ql[l] >> 4) + (five && (qh[l] & u2) ? 16 : 0)) - m2;
    ql += 32;
    is += 2;
    u1 <<= 2;
    u2 <<= 2;
  }
}

} // namespace llmc::kquant
