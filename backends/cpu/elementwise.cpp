//===- elementwise.cpp - Pointwise ops, slices, row picks, embeddings -----===//
//
// These are memory-bound; a parallel region only pays above a few thousand
// values, so small steps (decode) stay on the calling thread.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"

#include "common/moe.h"
#include "common/op_checks.h"
#include "simd.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace llmc::cpu {
namespace {

constexpr int64_t kParallelValues = 1 << 15;

inline float silu1(float x) { return x / (1.0f + std::exp(-x)); }

// Calls f8(r, c) on whole vectors and f1(r, c) on each row's tail.
template <typename F8, typename F1>
void mapRows(int64_t rows, int64_t cols, F8 f8, F1 f1) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelValues)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8)
      f8(r, c);
    for (; c < cols; ++c)
      f1(r, c);
  }
}

Kernel makeBinary(const llmc_op_desc &op) {
  bool add = op.kind == LLMC_OP_ADD;
  return [op, add](Step &step) {
    Matrix a = step.operand(op, 0), b = step.operand(op, 1);
    Matrix out = step.result(op, 0);
    expectRows(b, a.rows, "operand 1");
    expectRows(out, a.rows, "the result");
    mapRows(
        a.rows, a.cols,
        [&](int64_t r, int64_t c) {
          __m256 x = _mm256_loadu_ps(a.row(r) + c);
          __m256 y = _mm256_loadu_ps(b.row(r) + c);
          _mm256_storeu_ps(out.row(r) + c,
                           add ? _mm256_add_ps(x, y) : _mm256_mul_ps(x, y));
        },
        [&](int64_t r, int64_t c) {
          float x = a.row(r)[c], y = b.row(r)[c];
          out.row(r)[c] = add ? x + y : x * y;
        });
  };
}

Kernel makeSilu(const llmc_op_desc &op) {
  return [op](Step &step) {
    Matrix x = step.operand(op, 0), out = step.result(op, 0);
    expectRows(out, x.rows, "the result");
    mapRows(
        x.rows, x.cols,
        [&](int64_t r, int64_t c) {
          _mm256_storeu_ps(out.row(r) + c,
                           simd::silu(_mm256_loadu_ps(x.row(r) + c)));
        },
        [&](int64_t r, int64_t c) { out.row(r)[c] = silu1(x.row(r)[c]); });
  };
}

inline float geluTanh1(float x) {
  const float k = 0.7978845608028654f;
  return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

// GELU is rare in the models we serve (GPT-2 style); libm's tanh and erf
// keep it exactly ref's.
Kernel makeGelu(const llmc_op_desc &op) {
  bool tanhApprox = op.i[0] == 1;
  return [op, tanhApprox](Step &step) {
    Matrix x = step.operand(op, 0), out = step.result(op, 0);
    expectRows(out, x.rows, "the result");
    int64_t n = x.rows * x.cols;
    const float *in = x.data;
    float *o = out.data;
#pragma omp parallel for schedule(static) if (n >= kParallelValues / 4)
    for (int64_t i = 0; i < n; ++i) {
      float v = in[i];
      o[i] = tanhApprox ? geluTanh1(v)
                        : 0.5f * v * (1.0f + std::erf(v * 0.7071067811865476f));
    }
  };
}

// gpt-oss's clamped SWIGLU (i0 = 2), gate and up as halves or interleaved
// (i2); i1 runs a row: min(g, L), clamp(u, ±L), (u + 1) · g · sigmoid(a·g).
Kernel makeClampedSwiglu(const llmc_op_desc &op) {
  const int64_t runs = common::gatedRuns(op);
  const bool interleaved = op.i[2] == 1;
  const float limit = float(op.f[0]), alpha = float(op.f[1]);
  return [op, runs, interleaved, limit, alpha](Step &step) {
    Matrix x = step.operand(op, 0), out = step.result(op, 0);
    expectRows(out, x.rows, "the result");
    const int64_t I = out.cols / runs, n = x.rows * runs;
    const int64_t stride = interleaved ? 2 : 1, upAt = interleaved ? 1 : I;
    const __m256 lim = _mm256_set1_ps(limit), neg = _mm256_set1_ps(-limit);
    const __m256 one = _mm256_set1_ps(1.0f), na = _mm256_set1_ps(-alpha);
#pragma omp parallel for schedule(static) if (n * I >= (1 << 15))
    for (int64_t r = 0; r < n; ++r) {
      const float *in = x.data + r * 2 * I;
      float *y = out.data + r * I;
      int64_t c = 0;
      for (; c + 8 <= I; c += 8) {
        __m256 g, u;
        if (interleaved) { // [g0 u0 g1 u1 ...]: split the pairs
          const __m256 a = _mm256_loadu_ps(in + 2 * c),
                       b = _mm256_loadu_ps(in + 2 * c + 8);
          g = _mm256_castpd_ps(_mm256_permute4x64_pd(
              _mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xd8));
          u = _mm256_castpd_ps(_mm256_permute4x64_pd(
              _mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xdd)), 0xd8));
        } else {
          g = _mm256_loadu_ps(in + c);
          u = _mm256_loadu_ps(in + I + c);
        }
        g = _mm256_min_ps(g, lim);
        u = _mm256_max_ps(_mm256_min_ps(u, lim), neg);
        const __m256 sig = _mm256_div_ps(
            g, _mm256_add_ps(one, simd::exp(_mm256_mul_ps(g, na))));
        _mm256_storeu_ps(y + c, _mm256_mul_ps(_mm256_add_ps(u, one), sig));
      }
      for (; c < I; ++c)
        y[c] = common::clampedSwiglu(in[c * stride], in[c * stride + upAt],
                                     limit, alpha);
    }
  };
}

// SWIGLU (i0 = 0) and GeGLU (i0 = 1, Gemma's tanh GELU); i1 runs a row.
Kernel makeSwiglu(const llmc_op_desc &op) {
  if (op.i[0] == 2)
    return makeClampedSwiglu(op);
  const bool geglu = op.i[0] == 1;
  const int64_t runs = common::gatedRuns(op);
  return [op, geglu, runs](Step &step) {
    Matrix x = step.operand(op, 0), out = step.result(op, 0);
    expectRows(out, x.rows, "the result");
    // One run of [2I] per chosen expert: the same op over rows * runs rows.
    x = Matrix{x.data, x.rows * runs, x.cols / runs};
    out = Matrix{out.data, out.rows * runs, out.cols / runs};
    int64_t I = out.cols;
    mapRows(
        x.rows, I,
        [&](int64_t r, int64_t c) {
          __m256 g = _mm256_loadu_ps(x.row(r) + c);
          __m256 u = _mm256_loadu_ps(x.row(r) + I + c);
          __m256 a = geglu ? simd::geluTanh(g) : simd::silu(g);
          _mm256_storeu_ps(out.row(r) + c, _mm256_mul_ps(a, u));
        },
        [&](int64_t r, int64_t c) {
          float g = x.row(r)[c];
          out.row(r)[c] = (geglu ? geluTanh1(g) : silu1(g)) * x.row(r)[I + c];
        });
  };
}

// SCALE: x * f0; SOFTCAP: f0 * tanh(x / f0).
Kernel makeScale(const llmc_op_desc &op) {
  const bool cap = op.kind == LLMC_OP_SOFTCAP;
  const float f = float(op.f[0]);
  return [op, cap, f](Step &step) {
    Matrix x = step.operand(op, 0), out = step.result(op, 0);
    expectRows(out, x.rows, "the result");
    mapRows(
        x.rows, x.cols,
        [&](int64_t r, int64_t c) {
          __m256 v = _mm256_loadu_ps(x.row(r) + c);
          _mm256_storeu_ps(out.row(r) + c,
                           cap ? simd::softcap(v, f)
                               : _mm256_mul_ps(v, _mm256_set1_ps(f)));
        },
        [&](int64_t r, int64_t c) {
          float v = x.row(r)[c];
          out.row(r)[c] = cap ? f * std::tanh(v / f) : v * f;
        });
  };
}

Kernel makeSlice(const llmc_op_desc &op) {
  return [op](Step &step) {
    Matrix x = step.operand(op, 0), out = step.result(op, 0);
    expectRows(out, x.rows, "the result");
#pragma omp parallel for schedule(static) if (out.rows * out.cols >=           \
                                              kParallelValues)
    for (int64_t r = 0; r < x.rows; ++r)
      std::memcpy(out.row(r), x.row(r) + op.i[0], size_t(out.cols) * 4);
  };
}

Kernel makeTakeRows(const llmc_op_desc &op) {
  return [op](Step &step) {
    Matrix x = step.operand(op, 0), out = step.result(op, 0);
    int64_t n = step.args.num_logits;
    if (n > out.rows)
      throw InvalidArgument("num_logits " + std::to_string(n) +
                            " exceeds the result's " +
                            std::to_string(out.rows) + " rows");
    for (int64_t i = 0; i < n; ++i)
      if (step.args.logits_rows[i] >= x.rows)
        throw InvalidArgument("logits_rows[" + std::to_string(i) + "] = " +
                              std::to_string(step.args.logits_rows[i]) +
                              " is not a row of x");
    // The rows past num_logits are unspecified; ref zeroes them and so do we.
    std::memset(out.data, 0, size_t(out.rows * out.cols) * 4);
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(out.row(i), x.row(step.args.logits_rows[i]),
                  size_t(x.cols) * 4);
  };
}

} // namespace

Kernel makeElementwise(const llmc_op_desc &op, const Graph &, Backend &) {
  switch (op.kind) {
  case LLMC_OP_ADD:
  case LLMC_OP_MUL:
    return makeBinary(op);
  case LLMC_OP_SILU:
    return makeSilu(op);
  case LLMC_OP_GELU:
    return makeGelu(op);
  case LLMC_OP_SWIGLU:
    return makeSwiglu(op);
  case LLMC_OP_SCALE:
  case LLMC_OP_SOFTCAP:
    return makeScale(op);
  case LLMC_OP_SLICE:
    return makeSlice(op);
  case LLMC_OP_TAKE_ROWS:
    return makeTakeRows(op);
  default:
    throw InvalidArgument("no cpu kernel for op kind " +
                          std::to_string(op.kind));
  }
}

// EMBEDDING: rows of a f32/bf16/f16 table, of an i8 one with a scale per
// group of columns, or of a K-quant one decoded, ids being tokens or
// positions.
Kernel makeEmbedding(const llmc_op_desc &op, const Graph &g, Backend &) {
  const llmc_weight_desc table = g.weights[op.operands[0].index];
  if (common::isKQuant(table.dtype)) {
    const llmc_weight_desc headers = g.weights[op.operands[2].index];
    return [op, table, headers](Step &step) {
      const int32_t *ids = step.input(op, 1);
      Matrix out = step.result(op, 0);
      expectRows(out, step.args.num_tokens, "the result");
      for (int64_t t = 0; t < out.rows; ++t) {
        if (ids[t] < 0 || ids[t] >= table.shape[0])
          throw InvalidArgument("id " + std::to_string(ids[t]) + " at row " +
                                std::to_string(t) +
                                " is outside the table of " +
                                std::to_string(table.shape[0]) + " rows");
        common::kquantRow(table, headers, ids[t], out.cols, out.row(t));
      }
    };
  }
  const bool quantized = op.num_operands == 3;
  std::vector<float> scales; // i8 tables: [rows, dim / group], small
  if (quantized)
    scales = toF32(g.weights[op.operands[2].index],
                   common::weightElements(g.weights[op.operands[2].index]));
  const int64_t group = quantized ? op.i[0] : 1;
  return [op, table, scales = std::move(scales), group](Step &step) {
    const int32_t *ids = step.input(op, 1);
    Matrix out = step.result(op, 0);
    int64_t rows = table.shape[0], dim = table.shape[1];
    expectRows(out, step.args.num_tokens, "the result");
    for (int64_t t = 0; t < out.rows; ++t)
      if (ids[t] < 0 || ids[t] >= rows)
        throw InvalidArgument("id " + std::to_string(ids[t]) + " at row " +
                              std::to_string(t) + " is outside the table of " +
                              std::to_string(rows) + " rows");
    const auto *bytes = static_cast<const uint8_t *>(table.data);
    for (int64_t t = 0; t < out.rows; ++t) {
      float *o = out.row(t);
      int64_t e = int64_t(ids[t]) * dim;
      if (table.dtype == LLMC_I8) {
        const auto *q = reinterpret_cast<const int8_t *>(bytes + e);
        const float *s = scales.data() + e / group;
        for (int64_t c0 = 0; c0 < dim; c0 += group) {
          const float gs = s[c0 / group];
          const __m256 vs = _mm256_set1_ps(gs);
          const int64_t end = std::min(c0 + group, dim);
          int64_t c = c0;
          for (; c + 8 <= end; c += 8)
            _mm256_storeu_ps(
                o + c,
                _mm256_mul_ps(
                    _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(
                        reinterpret_cast<const __m128i *>(q + c)))),
                    vs));
          for (; c < end; ++c)
            o[c] = float(q[c]) * gs;
        }
        continue;
      }
      if (table.dtype == LLMC_F32) {
        std::memcpy(o, bytes + e * 4, size_t(dim) * 4);
        continue;
      }
      const auto *h = reinterpret_cast<const uint16_t *>(bytes + e * 2);
      bool bf = table.dtype == LLMC_BF16;
      int64_t c = 0;
      for (; c + 8 <= dim; c += 8)
        _mm256_storeu_ps(o + c,
                         bf ? simd::loadBf16(h + c) : simd::loadF16(h + c));
      if (c < dim)
        common::loadWeight(table, e + c, dim - c, o + c);
    }
  };
}

} // namespace llmc::cpu
