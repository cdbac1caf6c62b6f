//===- rope_permute.h - llama.cpp's Q/K row order --------------*- C++ -*-===//
//
// convert_hf_to_gguf.py reorders the rows of LLaMA's q_proj/k_proj weights
// (and biases) so that ggml's interleaved RoPE matches HF's half-split RoPE:
//   w.reshape(n_head, 2, rows/n_head/2, *rest).swapaxes(1, 2).reshape(w.shape)
// with n_head = the KV head count for K. The importer undoes it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>

namespace llmc::weights {

/// HF order -> GGUF order. `rows` = nHead * headDim, headDim even, and
/// `rowBytes` the size of one row (any dtype, quantized rows too). Throws
/// llmc::Error if rows is not a multiple of 2 * nHead. src and dst must not
/// overlap.
void permuteGGUFRope(const uint8_t *src, uint8_t *dst, int64_t rows,
                     size_t rowBytes, int64_t nHead);
/// GGUF order -> HF order (inverse of permuteGGUFRope).
void unpermuteGGUFRope(const uint8_t *src, uint8_t *dst, int64_t rows,
                       size_t rowBytes, int64_t nHead);

/// Float conveniences: `cols` floats per row (1 for a bias).
void permuteGGUFRope(const float *src, float *dst, int64_t rows, int64_t cols,
                     int64_t nHead);
void unpermuteGGUFRope(const float *src, float *dst, int64_t rows, int64_t cols,
                       int64_t nHead);

} // namespace llmc::weights
