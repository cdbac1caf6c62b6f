//===- ggml_dequantize.cpp - llama.cpp's block formats to f32 -------------===//
//
// The block layouts of ggml's legacy (32 values) and K-quant (256 values)
// formats, read as ggml's dequantize_row_* read them (ggml-quants.c at
// llama.cpp 80fb11a). The arithmetic follows ggml's expression by
// expression, so the floats match its own (test/unit/weights checks them
// against fixtures made by ggml itself, test/data/ggml-quants).
//
//===----------------------------------------------------------------------===//
#include "llmc/support/error.h"
#include "llmc/support/half.h"
#include "llmc/support/kquant.h"
#include "llmc/weights/tensor.h"

#include <cmath>

#include <cstring>

namespace llmc::weights {
namespace {

constexpr int kQK = 32, kQKK = 256;

float half(const uint8_t *p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return f16ToFloat(h);
}

// Q4_1: d, m (f16), then 16 bytes: element j in the low nibble of byte j,
// element j + 16 in its high nibble; x = d * q + m.
void q4_1(const uint8_t *b, float *y) {
  const float d = half(b), m = half(b + 2);
  const uint8_t *qs = b + 4;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = (qs[j] & 0x0F) * d + m;
    y[j + kQK / 2] = (qs[j] >> 4) * d + m;
  }
}

// Q5_0 / Q5_1: as Q4_0 / Q4_1 with a fifth bit per element in a 32-bit
// mask (bit j for element j).
template <bool Min> void q5(const uint8_t *b, float *y) {
  const float d = half(b), m = Min ? half(b + 2) : 0.0f;
  uint32_t qh;
  std::memcpy(&qh, b + (Min ? 4 : 2), 4);
  const uint8_t *qs = b + (Min ? 8 : 6);
  for (int j = 0; j < kQK / 2; ++j) {
    const uint8_t h0 = ((qh >> (j + 0)) << 4) & 0x10;
    const uint8_t h1 = ((qh >> (j + 12))) & 0x10;
    if (Min) {
      y[j] = ((qs[j] & 0x0F) | h0) * d + m;
      y[j + kQK / 2] = ((qs[j] >> 4) | h1) * d + m;
    } else {
      y[j] = (((qs[j] & 0x0F) | h0) - 16) * d;
      y[j + kQK / 2] = (((qs[j] >> 4) | h1) - 16) * d;
    }
  }
}

// IQ4_NL: Q4_0's layout, the nibble indexing a fixed non-linear table.
void iq4nl(const uint8_t *b, float *y) {
  static const int8_t values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                    1,    13,   25,  38,  53,  69,  89,  113};
  const float d = half(b);
  const uint8_t *qs = b + 2;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = d * values[qs[j] & 0x0F];
    y[j + kQK / 2] = d * values[qs[j] >> 4];
  }
}

// MXFP4: an E8M0 byte, then Q4_0's nibble order over doubled E2M1 codes.
void mxfp4(const uint8_t *b, float *y) {
  static const int8_t values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                    0, -1, -2, -3, -4, -6, -8, -12};
  const float d = std::ldexp(1.0f, int(b[0]) - 128);
  const uint8_t *qs = b + 1;
  for (int j = 0; j < kQK / 2; ++j) {
    y[j] = d * values[qs[j] & 0x0F];
    y[j + kQK / 2] = d * values[qs[j] >> 4];
  }
}

// Q2_K: scales[16] (4-bit scale, 4-bit min), qs[64] (2 bits), d, dmin.
void q2k(const uint8_t *b, float *y) {
  const uint8_t *scales = b, *q = b + 16;
  const float d = half(b + 80), min = half(b + 82);
  int is = 0;
  for (int n = 0; n < kQKK; n += 128) {
    int shift = 0;
    for (int j = 0; j < 4; ++j) {
      for (int half16 = 0; half16 < 2; ++half16) {
        const uint8_t sc = scales[is++];
        const float dl = d * (sc & 0xF), ml = min * (sc >> 4);
        for (int l = 0; l < 16; ++l)
          *y++ = dl * int8_t((q[l + 16 * half16] >> shift) & 3) - ml;
      }
      shift += 2;
    }
    q += 32;
  }
}

// Q3_K: hmask[32] (third bit), qs[64] (low 2 bits), scales[12] (sixteen
// 6-bit scales), d.
void q3k(const uint8_t *b, float *y) {
  const uint8_t *hm = b, *q = b + 32;
  const float dAll = half(b + 108);
  uint32_t aux[4];
  std::memcpy(aux, b + 96, 12);
  const uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f, tmp = aux[2];
  aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
  aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
  aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
  aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
  int8_t scales[16];
  std::memcpy(scales, aux, 16);
  int is = 0;
  uint8_t m = 1;
  for (int n = 0; n < kQKK; n += 128) {
    int shift = 0;
    for (int j = 0; j < 4; ++j) {
      for (int half16 = 0; half16 < 2; ++half16) {
        const float dl = dAll * (scales[is++] - 32);
        for (int l = 16 * half16; l < 16 * half16 + 16; ++l)
          *y++ = dl * (int8_t((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
      }
      shift += 2;
      m <<= 1;
    }
    q += 32;
  }
}

// Q4_K, Q5_K, Q6_K: kquant.h reads them (the backends read the same bytes).
template <kquant::Format F> void kq(const uint8_t *b, float *y) {
  constexpr kquant::Layout l = kquant::layout(F);
  kquant::decode(F, b + l.headerAt, b + l.codesAt, y);
}

} // namespace

void dequantizeGgml(DType t, const uint8_t *src, int64_t n, float *dst) {
  void (*block)(const uint8_t *, float *) = nullptr;
  switch (t) {
  case DType::Q8_0:
    return dequantizeQ8_0(src, n, dst);
  case DType::Q4_0:
    return dequantizeQ4_0(src, n, dst);
  case DType::Q4_1:
    block = q4_1;
    break;
  case DType::Q5_0:
    block = q5<false>;
    break;
  case DType::Q5_1:
    block = q5<true>;
    break;
  case DType::IQ4_NL:
    block = iq4nl;
    break;
  case DType::MXFP4:
    block = mxfp4;
    break;
  case DType::Q2_K:
    block = q2k;
    break;
  case DType::Q3_K:
    block = q3k;
    break;
  case DType::Q4_K:
    block = kq<kquant::Format::Q4_K>;
    break;
  case DType::Q5_K:
    block = kq<kquant::Format::Q5_K>;
    break;
  case DType::Q6_K:
    block = kq<kquant::Format::Q6_K>;
    break;
  default:
    throw Error(std::string("dtype ") + dtypeName(t) +
                " is not a ggml block format");
  }
  const int64_t per = dtypeBlockSize(t);
  const size_t bytes = dtypeBytes(t, per); // throws on a partial block
  if (n % per != 0)
    throw Error(std::string(dtypeName(t)) + " needs a multiple of " +
                std::to_string(per) + " elements, got " + std::to_string(n));
  for (int64_t i = 0; i < n / per; ++i)
    block(src + i * bytes, dst + i * per);
}

} // namespace llmc::weights
