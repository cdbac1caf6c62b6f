//===- conformance_test.cpp - Every op on every backend against ref
//--------===//
//
// ggml's test-backend-ops for llmc: each case builds a small graph around one
// op kind from a fixed seed, runs it on ref and on every other backend the
// registry loads, and compares with the normalized mean squared error
//   nmse = sum((out - ref)^2) / sum(ref^2)
// against the case's bound. f32 paths get 1e-7 (accumulation order only);
// low-precision weights and KV caches get more room because a backend may
// round activations to the weight type inside its matmul. Loosen a bound
// only with a reason a reviewer would accept.
//
// A backend that does not support() an op of a case skips it, and says so.
// With only ref present the suite compares ref with itself, which still
// proves every case runs.
//
//===----------------------------------------------------------------------===//
#include "op_graph.h"

#include "../unit/kquant_blocks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>

namespace llmc::testing {
namespace {

constexpr double kExact = 1e-7;

// Case names, built with a stream: GCC 12's -Wrestrict misfires on some
// chains of std::string operator+.
template <typename... Parts> std::string cat(const Parts &...parts) {
  std::ostringstream s;
  (s << ... << parts);
  return s.str();
}
constexpr double kLowPrecision = 5e-6;
// i8/i4 weights may run on integer dot products with the activations
// quantized to int8 per block of 32 (as llama.cpp's q8_0): rounding x to a
// step of max|x|/127 gives nmse ~ (1/127)^2 / 12 / E[x^2 / max^2] ~ 1.5e-5
// on these uniform inputs (measured 1.1e-5 to 1.9e-5 on every ISA level).
constexpr double kInt8Activations = 1e-4;

struct Case {
  std::string name;
  double maxNmse;
  /// Runs the case on one backend and returns its output; returns false in
  /// `supported` when the backend refuses one of the ops.
  std::function<std::vector<float>(const BackendInstance &, bool &supported)>
      run;
};

/// Runs `graph` unless some op is unsupported.
std::vector<float> runIfSupported(const BackendInstance &backend, OpGraph &g,
                                  uint32_t out, StepData &step, bool &supported,
                                  DeviceKvCache *cache = nullptr) {
  llmc_graph_desc desc = g.desc(out);
  for (uint32_t i = 0; i < desc.num_ops; ++i)
    if (!backend.supports(desc.ops[i], desc)) {
      supported = false;
      return {};
    }
  return runGraph(backend, g, out, step, cache);
}

std::string dtypeName(llmc_dtype d) { return llmc_dtype_name(d); }

// One op over fed inputs: `build` adds the op and returns its result buffer.
Case simple(std::string name, double bound, int rows,
            std::vector<int64_t> inputCols,
            std::function<uint32_t(OpGraph &, const std::vector<uint32_t> &,
                                   std::mt19937 &)>
                build,
            float range = 2.0f) {
  return {name, bound, [=](const BackendInstance &backend, bool &supported) {
            std::mt19937 rng(std::hash<std::string>()(name) & 0xffffffff);
            OpGraph g;
            std::vector<uint32_t> in;
            for (int64_t cols : inputCols)
              in.push_back(g.feed(
                  randomVector(rng, size_t(rows * cols), -range, range), cols));
            uint32_t out = build(g, in, rng);
            StepData step = StepData::simple(rows, rows);
            for (int t = 0; t < rows; ++t)
              step.positions[t] = t * 37 + 5;
            return runIfSupported(backend, g, out, step, supported);
          }};
}

/// A random MXFP4 weight of `rows` x K (any codes, scales 2^-3 .. 2^0) and
/// its E8M0 scales, as two plan weights; returns the codes' index.
uint32_t mxfp4Weight(OpGraph &g, std::vector<int64_t> shape, std::mt19937 &rng,
                     llmc_operand &scales) {
  int64_t values = 1;
  for (int64_t d : shape)
    values *= d;
  std::uniform_int_distribution<int> byte(0, 255), e(124, 127);
  std::vector<uint8_t> codes(size_t(values / 2)), e8m0(size_t(values / 32));
  for (uint8_t &c : codes)
    c = uint8_t(byte(rng));
  for (uint8_t &s : e8m0)
    s = uint8_t(e(rng));
  std::vector<int64_t> scaleShape = shape;
  scaleShape.back() /= 32;
  scales = wt(g.weight(LLMC_E8M0, scaleShape, e8m0));
  return g.weight(LLMC_MXFP4, shape, codes);
}

/// A random K-quant weight of `shape` (last dimension a multiple of 256),
/// its headers as `headers`; returns the codes' index.
uint32_t kquantWeight(OpGraph &g, llmc_dtype dtype, std::vector<int64_t> shape,
                      std::mt19937 &rng, llmc_operand &headers) {
  const kquant::Format f = *kquant::formatOfDtype(dtype);
  int64_t values = 1;
  for (int64_t d : shape)
    values *= d;
  KQuantBlocks b = randomKQuantBlocks(f, values / kquant::kBlock, rng);
  std::vector<int64_t> headShape = shape;
  headShape.back() =
      headShape.back() / kquant::kBlock * kquant::layout(f).headerBytes;
  headers = wt(g.weight(LLMC_KQ_HEADER, headShape, b.headers));
  return g.weight(dtype, shape, b.codes);
}

void addNormCases(std::vector<Case> &cases) {
  for (llmc_dtype wd : {LLMC_F32, LLMC_BF16, LLMC_F16})
    for (auto [rows, cols] : {std::pair{1, 64}, {7, 896}, {3, 4096}}) {
      std::string shape = cat(rows, "x", cols);
      cases.push_back(simple(
          cat("rms_norm/", dtypeName(wd), "/", shape), kExact, rows, {cols},
          [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &rng) {
            uint32_t w =
                g.weight(wd, {cols}, randomVector(rng, cols, 0.5, 1.5));
            uint32_t out = g.buffer(rowsT(), cols);
            g.add(makeOp(LLMC_OP_RMS_NORM, {buf(in[0]), wt(w)}, {out}, {},
                         {1e-6}));
            return out;
          }));
      // Per head (Qwen3's q_norm / k_norm): i0 = head_dim.
      for (int64_t width : {int64_t(32), int64_t(64)})
        cases.push_back(simple(
            cat("rms_norm/per_head", width, "/", dtypeName(wd), "/", shape),
            kExact, rows, {cols},
            [=](OpGraph &g, const std::vector<uint32_t> &in,
                std::mt19937 &rng) {
              uint32_t w =
                  g.weight(wd, {width}, randomVector(rng, width, 0.5, 1.5));
              uint32_t out = g.buffer(rowsT(), cols);
              g.add(makeOp(LLMC_OP_RMS_NORM, {buf(in[0]), wt(w)}, {out},
                           {width}, {1e-6}));
              return out;
            }));
      for (int result : {0, 1})
        cases.push_back(simple(cat("add_rms_norm/", result ? "normed/" : "sum/",
                                   dtypeName(wd), "/", shape),
                               kExact, rows, {cols, cols},
                               [=](OpGraph &g, const std::vector<uint32_t> &in,
                                   std::mt19937 &rng) {
                                 uint32_t w = g.weight(
                                     wd, {cols},
                                     randomVector(rng, cols, 0.5, 1.5));
                                 uint32_t sum = g.buffer(rowsT(), cols);
                                 uint32_t normed = g.buffer(rowsT(), cols);
                                 g.add(makeOp(LLMC_OP_ADD_RMS_NORM,
                                              {buf(in[0]), buf(in[1]), wt(w)},
                                              {sum, normed}, {}, {1e-5}));
                                 return result ? normed : sum;
                               }));
      cases.push_back(simple(
          cat("layer_norm/", dtypeName(wd), "/", shape), kExact, rows, {cols},
          [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &rng) {
            uint32_t w =
                g.weight(wd, {cols}, randomVector(rng, cols, 0.5, 1.5));
            uint32_t b = g.weight(wd, {cols}, randomVector(rng, cols));
            uint32_t out = g.buffer(rowsT(), cols);
            g.add(makeOp(LLMC_OP_LAYER_NORM, {buf(in[0]), wt(w), wt(b)}, {out},
                         {}, {1e-5}));
            return out;
          }));
    }
}

void addLinearCases(std::vector<Case> &cases) {
  struct L {
    llmc_dtype dtype;
    int64_t group;
  };
  for (L l : {L{LLMC_F32, 0}, L{LLMC_BF16, 0}, L{LLMC_F16, 0}, L{LLMC_I8, 0},
              L{LLMC_I4, 32}, L{LLMC_I4, 128}})
    for (auto [rows, k, n] :
         {std::tuple{1, 256, 96},
          {5, 512, 64},
          {17, 128, 200},
          {25, 2176, 40}, // several blocks of K in the cpu GEMMs, and a tail
          {40, 384, 72}}) // a prompt's rows: i4 panels widened once
      for (bool bias : {false, true}) {
        std::string name =
            cat("linear/", dtypeName(l.dtype), l.group ? cat("g", l.group) : "",
                "/", rows, "x", k, "x", n, bias ? "/bias" : "");
        bool integer = l.dtype == LLMC_I8 || l.dtype == LLMC_I4;
        double bound = l.dtype == LLMC_F32 ? kExact
                       : integer           ? kInt8Activations
                                           : kLowPrecision;
        cases.push_back(simple(
            name, bound, rows, {k},
            [=](OpGraph &g, const std::vector<uint32_t> &in,
                std::mt19937 &rng) {
              auto w = randomVector(rng, size_t(n * k));
              uint32_t out = g.buffer(rowsT(), n);
              llmc_operand scales = none(), b = none();
              uint32_t wi;
              int64_t group = l.dtype == LLMC_I8 ? k : l.group;
              if (l.dtype == LLMC_I8 || l.dtype == LLMC_I4) {
                Quantized q = quantize(l.dtype, w, n, k, group);
                wi = g.weight(l.dtype, {n, l.dtype == LLMC_I8 ? k : k / 2},
                              q.bytes);
                scales = wt(g.weight(LLMC_F32, {n, k / group}, q.scales));
              } else {
                wi = g.weight(l.dtype, {n, k}, w);
              }
              if (bias)
                b = wt(g.weight(LLMC_F32, {n}, randomVector(rng, size_t(n))));
              g.add(makeOp(LLMC_OP_LINEAR, {buf(in[0]), wt(wi), scales, b},
                           {out}, {group}));
              return out;
            }));
      }
}

// gate/up then SWIGLU, which the cpu backend runs as one kernel where the
// weights are on its integer tiles and I is a multiple of their 32 columns
// (I = 40: the two ops apart), at a decode row, a batch and a prompt's rows.
void addLinearSwigluCases(std::vector<Case> &cases) {
  for (auto [dtype, group] : {std::pair{LLMC_I8, int64_t(0)}, {LLMC_I4, 32}})
    for (auto [rows, k, I] :
         {std::tuple{1, 256, 64}, {5, 512, 96}, {40, 384, 64}, {5, 256, 40}})
      for (bool bias : {false, true})
        cases.push_back(simple(
            cat("swiglu/after_linear/", dtypeName(dtype),
                group ? cat("g", group) : "", "/", rows, "x", k, "x", I,
                bias ? "/bias" : ""),
            kInt8Activations, rows, {k},
            [=](OpGraph &g, const std::vector<uint32_t> &in,
                std::mt19937 &rng) {
              const int64_t n = 2 * I, gr = dtype == LLMC_I8 ? k : group;
              Quantized q =
                  quantize(dtype, randomVector(rng, size_t(n * k)), n, k, gr);
              uint32_t w =
                  g.weight(dtype, {n, dtype == LLMC_I8 ? k : k / 2}, q.bytes);
              llmc_operand b = none();
              if (bias)
                b = wt(g.weight(LLMC_F32, {n}, randomVector(rng, size_t(n))));
              uint32_t gateUp = g.buffer(rowsT(), n),
                       out = g.buffer(rowsT(), I);
              g.add(makeOp(LLMC_OP_LINEAR,
                           {buf(in[0]), wt(w),
                            wt(g.weight(LLMC_F32, {n, k / gr}, q.scales)), b},
                           {gateUp}, {gr}));
              g.add(makeOp(LLMC_OP_SWIGLU, {buf(gateUp)}, {out}, {0, 0}));
              return out;
            }));
}

// MXFP4 weights (gpt-oss's experts), exact against f32 activations (i2 =
// 0, an f32 plan) or on int8 ones (i2 = 1).
void addMxfp4LinearCases(std::vector<Case> &cases) {
  for (auto [rows, k, n] :
       {std::tuple{1, 256, 96}, {5, 512, 64}, {17, 128, 200}, {25, 2176, 40}})
    for (int64_t int8 : {0, 1})
      for (bool bias : {false, true})
        cases.push_back(simple(
            cat("linear/mxfp4/", rows, "x", k, "x", n, bias ? "/bias" : "",
                int8 ? "/int8_activations" : ""),
            int8 ? kInt8Activations : kExact, rows, {k},
            [=](OpGraph &g, const std::vector<uint32_t> &in,
                std::mt19937 &rng) {
              uint32_t out = g.buffer(rowsT(), n);
              llmc_operand scales, b = none();
              uint32_t wi = mxfp4Weight(g, {n, k}, rng, scales);
              if (bias)
                b = wt(g.weight(LLMC_F32, {n}, randomVector(rng, size_t(n))));
              g.add(makeOp(LLMC_OP_LINEAR, {buf(in[0]), wt(wi), scales, b},
                           {out}, {32, 0, int8}));
              return out;
            }));
}

// GGUF K-quant weights as the plan keeps them: exact against f32
// activations (i2 = 0) or on q8_K ones (i2 = 1); tables; stacked experts.
void addKQuantCases(std::vector<Case> &cases) {
  for (llmc_dtype d : {LLMC_Q4_K, LLMC_Q5_K, LLMC_Q6_K}) {
    const std::string name(kquant::layout(*kquant::formatOfDtype(d)).name);
    for (auto [rows, k, n] :
         {std::tuple{1, 256, 96}, {3, 512, 64}, {9, 768, 40}, {33, 256, 72}})
      for (int64_t int8 : {0, 1})
        cases.push_back(simple(
            cat("linear/", name, "/", rows, "x", k, "x", n,
                int8 ? "/int8_activations" : ""),
            int8 ? kInt8Activations : kExact, rows, {k},
            [=](OpGraph &g, const std::vector<uint32_t> &in,
                std::mt19937 &rng) {
              uint32_t out = g.buffer(rowsT(), n);
              llmc_operand headers;
              uint32_t wi = kquantWeight(g, d, {n, k}, rng, headers);
              llmc_operand b =
                  rows == 3 ? wt(g.weight(LLMC_F32, {n}, randomVector(rng, n)))
                            : none();
              g.add(makeOp(LLMC_OP_LINEAR, {buf(in[0]), wt(wi), headers, b},
                           {out}, {256, 0, int8}));
              return out;
            }));
    // gate/up then SWIGLU on int8 activations: fused on the tiles above 32
    // rows, apart below.
    for (int rows : {5, 40})
      cases.push_back(simple(
          cat("swiglu/after_linear/", name, "/", rows, "x256x64"),
          kInt8Activations, rows, {256},
          [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &rng) {
            llmc_operand headers;
            uint32_t wi = kquantWeight(g, d, {128, 256}, rng, headers);
            uint32_t gateUp = g.buffer(rowsT(), 128),
                     out = g.buffer(rowsT(), 64);
            g.add(makeOp(LLMC_OP_LINEAR, {buf(in[0]), wt(wi), headers, none()},
                         {gateUp}, {256, 0, 1}));
            g.add(makeOp(LLMC_OP_SWIGLU, {buf(gateUp)}, {out}, {0, 0}));
            return out;
          }));
    cases.push_back(simple(
        cat("embedding/", name), kExact, 6, {},
        [=](OpGraph &g, const std::vector<uint32_t> &, std::mt19937 &rng) {
          llmc_operand headers;
          uint32_t t = kquantWeight(g, d, {300, 512}, rng, headers);
          uint32_t out = g.buffer(rowsT(), 512);
          g.add(makeOp(LLMC_OP_EMBEDDING, {wt(t), tokensInput(), headers},
                       {out}, {256}));
          return out;
        }));
    const int64_t E = 6, k = 2, H = 256, I = 64;
    for (int64_t int8 : {0, 1})
      for (int rows : {1, 7})
        cases.push_back(simple(
            cat("moe/expert_linear/", name, "/e", E, "k", k, "/", rows,
                int8 ? "/int8_activations" : ""),
            int8 ? kInt8Activations : kExact, rows, {H, E},
            [=](OpGraph &g, const std::vector<uint32_t> &in,
                std::mt19937 &rng) {
              uint32_t w = g.buffer(rowsT(), k), ids = g.buffer(rowsT(), k);
              g.bufferDesc(ids).dtype = LLMC_I32;
              g.add(makeOp(LLMC_OP_MOE_GATING, {buf(in[1])}, {w, ids},
                           {k, 1, 0}));
              llmc_operand headers;
              uint32_t wi = kquantWeight(g, d, {E, I, H}, rng, headers);
              uint32_t out = g.buffer(rowsT(), k * I);
              g.add(makeOp(LLMC_OP_EXPERT_LINEAR,
                           {buf(in[0]), wt(wi), headers, buf(ids)}, {out},
                           {256, k, int8}));
              return out;
            }));
  }
}

void addPointwiseCases(std::vector<Case> &cases) {
  for (auto [rows, cols] : {std::pair{1, 64}, {9, 1000}}) {
    std::string shape = cat(rows, "x", cols);
    for (llmc_op_kind kind : {LLMC_OP_ADD, LLMC_OP_MUL})
      cases.push_back(simple(
          std::string(kind == LLMC_OP_ADD ? "add/" : "mul/") + shape, kExact,
          rows, {cols, cols},
          [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &) {
            uint32_t out = g.buffer(rowsT(), cols);
            g.add(makeOp(kind, {buf(in[0]), buf(in[1])}, {out}));
            return out;
          }));
    for (auto [name, kind, attr] : {std::tuple{"silu/", LLMC_OP_SILU, 0},
                                    {"gelu_erf/", LLMC_OP_GELU, 0},
                                    {"gelu_tanh/", LLMC_OP_GELU, 1}})
      cases.push_back(simple(
          name + shape, kExact, rows, {cols},
          [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &) {
            uint32_t out = g.buffer(rowsT(), cols);
            g.add(makeOp(kind, {buf(in[0])}, {out}, {attr}));
            return out;
          },
          8.0f));
    // silu (SwiGLU), tanh GELU (GeGLU); one run per row, or four (one per
    // chosen expert, i1).
    for (int64_t act : {0, 1})
      for (int64_t runs : {0, 4})
        cases.push_back(simple(
            cat(act ? "geglu/" : "swiglu/", runs ? "runs4/" : "", shape),
            kExact, rows, {2 * cols},
            [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &) {
              uint32_t out = g.buffer(rowsT(), cols);
              g.add(makeOp(LLMC_OP_SWIGLU, {buf(in[0])}, {out}, {act, runs}));
              return out;
            },
            6.0f));
    // gpt-oss's clamped unit: gate and up as halves or interleaved, a limit
    // the inputs cross (|x| up to 6).
    for (int64_t interleaved : {0, 1})
      for (int64_t runs : {0, 4})
        cases.push_back(simple(
            cat("clamped_swiglu/", interleaved ? "interleaved/" : "",
                runs ? "runs4/" : "", shape),
            kExact, rows, {2 * cols},
            [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &) {
              uint32_t out = g.buffer(rowsT(), cols);
              g.add(makeOp(LLMC_OP_SWIGLU, {buf(in[0])}, {out},
                           {2, runs, interleaved}, {2.5, 1.702}));
              return out;
            },
            6.0f));
    // Gemma's embedding scale and final-logit soft-cap.
    for (auto [name, kind, f] : {std::tuple{"scale/", LLMC_OP_SCALE, 8.0},
                                 {"softcap/", LLMC_OP_SOFTCAP, 3.0}})
      cases.push_back(simple(
          name + shape, kExact, rows, {cols},
          [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &) {
            uint32_t out = g.buffer(rowsT(), cols);
            g.add(makeOp(kind, {buf(in[0])}, {out}, {}, {f}));
            return out;
          },
          8.0f));
    cases.push_back(simple(
        cat("slice/", shape), kExact, rows, {cols},
        [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &) {
          uint32_t out = g.buffer(rowsT(), cols / 3);
          g.add(makeOp(LLMC_OP_SLICE, {buf(in[0])}, {out}, {cols / 2}));
          return out;
        }));
  }
  for (llmc_dtype td : {LLMC_F32, LLMC_BF16, LLMC_F16})
    for (llmc_operand ids : {tokensInput(), positionsInput()})
      cases.push_back(simple(
          cat("embedding/", dtypeName(td),
              ids.index ? "/positions" : "/tokens"),
          kExact, 6, {},
          [=](OpGraph &g, const std::vector<uint32_t> &, std::mt19937 &rng) {
            uint32_t t = g.weight(td, {300, 48}, randomVector(rng, 300 * 48));
            uint32_t out = g.buffer(rowsT(), 48);
            g.add(makeOp(LLMC_OP_EMBEDDING, {wt(t), ids}, {out}));
            return out;
          }));
  // i8 tables with a scale per row (what quantized plans store) or per
  // group of 16 columns.
  for (int64_t group : {48, 16})
    cases.push_back(simple(
        cat("embedding/i8/g", group), kExact, 6, {},
        [=](OpGraph &g, const std::vector<uint32_t> &, std::mt19937 &rng) {
          Quantized q =
              quantize(LLMC_I8, randomVector(rng, 300 * 48), 300, 48, group);
          uint32_t t = g.weight(LLMC_I8, {300, 48}, q.bytes);
          uint32_t s = g.weight(LLMC_F32, {300, 48 / group}, q.scales);
          uint32_t out = g.buffer(rowsT(), 48);
          g.add(makeOp(LLMC_OP_EMBEDDING, {wt(t), tokensInput(), wt(s)}, {out},
                       {group}));
          return out;
        }));
  for (int style : {0, 1})
    for (auto [heads, headDim, rot] : {std::tuple{4, 64, 64}, {2, 128, 32}})
      for (double scaling : {1.0, 1.2})
        cases.push_back(simple(
            cat("rope/", style ? "interleaved/" : "half/", heads, "x", headDim,
                "/rot", rot, "/scale", scaling),
            kExact, 5, {heads * headDim},
            [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &) {
              std::vector<float> inv(size_t(rot / 2));
              for (int i = 0; i < rot / 2; ++i)
                inv[i] = float(1.0 / std::pow(500000.0, 2.0 * i / rot));
              uint32_t f = g.weight(LLMC_F32, {rot / 2}, inv);
              uint32_t out = g.buffer(rowsT(), heads * headDim);
              g.add(makeOp(LLMC_OP_ROPE, {buf(in[0]), positionsInput(), wt(f)},
                           {out}, {heads, headDim, rot, style}, {scaling}));
              return out;
            }));
}

void addTakeRowsCase(std::vector<Case> &cases) {
  cases.push_back({"take_rows/3of7", kExact,
                   [](const BackendInstance &backend, bool &supported) {
                     std::mt19937 rng(11);
                     OpGraph g;
                     uint32_t x = g.feed(randomVector(rng, 7 * 40), 40);
                     uint32_t out = g.buffer(rowsB(), 40);
                     g.add(makeOp(LLMC_OP_TAKE_ROWS, {buf(x)}, {out}));
                     StepData step = StepData::simple(7, 3);
                     step.numSeqs = 3;
                     step.queryStart = {0, 2, 6, 7};
                     step.contextLens = {2, 4, 1};
                     step.logitsRows = {1, 5, 6};
                     return runIfSupported(backend, g, out, step, supported);
                   }});
}

// Attention over a paged cache: `cached[b]` tokens are written by a first
// prefill step, then `fresh[b]` more run in a prefill or decode step.
struct AttentionParams {
  int heads, kvHeads, headDim, window, blockSize;
  llmc_dtype kvDtype;
  std::vector<int> cached, fresh;
  bool decode;
  float softcap = 0;  // Gemma 2's score cap (f1)
  bool sinks = false; // gpt-oss's per-head sink logits (operand 1)
};

Case attentionCase(const std::string &name, AttentionParams p) {
  double bound = p.kvDtype == LLMC_F32 ? kExact : 1e-6;
  return {
      name, bound, [=](const BackendInstance &backend, bool &supported) {
        std::mt19937 rng(std::hash<std::string>()(name) & 0xffffffff);
        size_t B = p.cached.size();
        int qCols = p.heads * p.headDim, kvCols = p.kvHeads * p.headDim;
        std::vector<int> base, len;
        int total = 0, maxBlocks = 0, blocks = 0;
        for (size_t b = 0; b < B; ++b) {
          base.push_back(total);
          len.push_back(p.cached[b] + p.fresh[b]);
          total += len.back();
          int nb = (len.back() + p.blockSize - 1) / p.blockSize;
          maxBlocks = std::max(maxBlocks, nb);
          blocks += nb;
        }
        auto q = randomVector(rng, size_t(total * qCols), -2, 2);
        auto k = randomVector(rng, size_t(total * kvCols), -2, 2);
        auto v = randomVector(rng, size_t(total * kvCols));
        const auto sinkLogits = randomVector(rng, size_t(p.heads), -1, 3);
        // Blocks handed out back to front, so no sequence is contiguous.
        std::vector<int32_t> tables(B * maxBlocks, 0);
        int next = blocks;
        for (size_t b = 0; b < B; ++b)
          for (int j = 0; j < (len[b] + p.blockSize - 1) / p.blockSize; ++j)
            tables[b * maxBlocks + j] = --next;
        DeviceKvCache cache = backend.createKvCache(
            {2, uint32_t(p.kvHeads), uint32_t(p.headDim), uint32_t(p.kvDtype),
             uint32_t(p.blockSize), uint32_t(blocks), 0, nullptr});

        auto step = [&](bool decode, bool firstHalf) {
          OpGraph g;
          uint32_t qi = g.feed(q, qCols), ki = g.feed(k, kvCols),
                   vi = g.feed(v, kvCols);
          uint32_t out = g.buffer(decode ? rowsB() : rowsT(), qCols);
          g.add(makeOp(LLMC_OP_KV_WRITE, {buf(ki), buf(vi)}, {}, {1}));
          const llmc_op_kind kind =
              decode ? LLMC_OP_DECODE_ATTENTION : LLMC_OP_PREFILL_ATTENTION;
          const double scale = 1.0 / std::sqrt(double(p.headDim));
          if (p.sinks) // around the scores' size: some heads' rows lose most
            g.add(makeOp(
                kind, {buf(qi), wt(g.weight(LLMC_F32, {p.heads}, sinkLogits))},
                {out}, {1, p.heads, p.kvHeads, p.headDim, p.window},
                {scale, p.softcap}));
          else
            g.add(makeOp(kind, {buf(qi)}, {out},
                         {1, p.heads, p.kvHeads, p.headDim, p.window},
                         {scale, p.softcap}));
          StepData d;
          d.numSeqs = int32_t(B);
          d.queryStart = {0};
          for (size_t b = 0; b < B; ++b) {
            int from = firstHalf ? 0 : p.cached[b];
            int to = firstHalf ? p.cached[b] : len[b];
            for (int pos = from; pos < to; ++pos) {
              d.tokens.push_back(base[b] + pos);
              d.positions.push_back(pos);
              d.slots.push_back(tables[b * maxBlocks + pos / p.blockSize] *
                                    p.blockSize +
                                pos % p.blockSize);
            }
            d.queryStart.push_back(int32_t(d.tokens.size()));
            d.contextLens.push_back(to);
          }
          d.blockTables = tables;
          d.maxBlocks = maxBlocks;
          d.numLogits = int32_t(d.tokens.size());
          return runIfSupported(backend, g, out, d, supported, &cache);
        };
        bool anyCached = false;
        for (int c : p.cached)
          anyCached |= c > 0;
        if (anyCached)
          step(false, true);
        return step(p.decode, false);
      }};
}

void addAttentionCases(std::vector<Case> &cases) {
  cases.push_back(attentionCase("prefill/mha/bs16",
                                {4, 4, 64, 0, 16, LLMC_F32, {0}, {23}, false}));
  cases.push_back(
      attentionCase("prefill/gqa/2seqs/bs4",
                    {8, 2, 32, 0, 4, LLMC_F32, {0, 0}, {9, 14}, false}));
  cases.push_back(
      attentionCase("prefill/window/bs4",
                    {4, 2, 32, 5, 4, LLMC_F32, {0, 0}, {12, 3}, false}));
  cases.push_back(
      attentionCase("prefill/chunked/bf16kv",
                    {8, 1, 64, 0, 16, LLMC_BF16, {5, 0}, {3, 7}, false}));
  // Long enough for several chunks of keys and tiles of query rows, with a
  // head size that is not a multiple of the tiles' 32 columns.
  cases.push_back(attentionCase(
      "prefill/gqa3/long/d80", {6, 2, 80, 0, 16, LLMC_F32, {0}, {100}, false}));
  cases.push_back(
      attentionCase("prefill/window/long/chunked",
                    {4, 1, 48, 37, 8, LLMC_F32, {40, 0}, {70, 45}, false}));
  cases.push_back(
      attentionCase("decode/gqa/bs16",
                    {8, 2, 64, 0, 16, LLMC_F32, {0, 5, 40}, {1, 1, 1}, true}));
  cases.push_back(
      attentionCase("decode/window/f16kv/bs4",
                    {4, 4, 32, 8, 4, LLMC_F16, {3, 20}, {1, 1}, true}));
  // Heads wider than the row kernels take (the staged path on every
  // level), windowed so the first chunk holds keys before every row's
  // window (masked rows of zeros).
  cases.push_back(
      attentionCase("prefill/window/d288/chunked",
                    {2, 1, 288, 20, 16, LLMC_F32, {40}, {30}, false}));
  cases.push_back(
      attentionCase("decode/window/d288/bf16kv",
                    {2, 1, 288, 20, 16, LLMC_BF16, {45, 3}, {1, 1}, true}));
  cases.push_back(attentionCase(
      "decode/mqa/bf16kv",
      {16, 1, 128, 0, 16, LLMC_BF16, {70, 17, 1, 32}, {1, 1, 1, 1}, true}));
  // Gemma 2's soft-capped scores (a cap of 1.5 bends most of the scores of
  // these inputs), with a window as on its even layers: prefill of a fresh
  // and a chunked prompt, long enough for several key chunks, and decode of
  // a long context (once split across threads: "splitk").
  cases.push_back(attentionCase(
      "prefill/softcap/window/chunked",
      {4, 2, 32, 16, 4, LLMC_F32, {7, 0}, {30, 41}, false, 1.5f}));
  cases.push_back(
      attentionCase("prefill/softcap/long/d80",
                    {6, 2, 80, 0, 16, LLMC_F32, {0}, {100}, false, 1.5f}));
  // The same over a bf16 cache.
  cases.push_back(attentionCase(
      "prefill/softcap/window/chunked/bf16kv",
      {4, 2, 32, 16, 4, LLMC_BF16, {7, 0}, {30, 41}, false, 1.5f}));
  cases.push_back(
      attentionCase("prefill/softcap/long/d80/bf16kv",
                    {6, 2, 80, 0, 16, LLMC_BF16, {0}, {100}, false, 1.5f}));
  cases.push_back(attentionCase(
      "decode/softcap/window/bf16kv",
      {8, 2, 64, 16, 16, LLMC_BF16, {3, 40}, {1, 1}, true, 1.5f}));
  cases.push_back(
      attentionCase("decode/softcap/splitk",
                    {4, 1, 64, 0, 16, LLMC_F32, {1500}, {1}, true, 1.5f}));
  // gpt-oss's sinks: prefill (fresh, chunked, windowed), decode, a long
  // decode.
  cases.push_back(attentionCase(
      "prefill/sinks/window/chunked",
      {4, 2, 32, 16, 4, LLMC_F32, {7, 0}, {30, 41}, false, 0, true}));
  cases.push_back(
      attentionCase("prefill/sinks/long/d64",
                    {8, 1, 64, 0, 16, LLMC_F32, {0}, {100}, false, 0, true}));
  cases.push_back(attentionCase(
      "decode/sinks/gqa",
      {8, 2, 64, 8, 16, LLMC_F32, {3, 40}, {1, 1}, true, 0, true}));
  cases.push_back(
      attentionCase("decode/sinks/splitk",
                    {4, 1, 64, 0, 16, LLMC_F32, {1500}, {1}, true, 0, true}));
  // KV_WRITE then both attentions with the cache in every dtype: a chunked
  // prefill long enough for several key chunks and query tiles (head size
  // 80: a tail past the 32-wide loops), a windowed one, a batched decode
  // (head size 36: a tail past the 8-wide conversions), and a long decode.
  for (llmc_dtype kv :
       {LLMC_F32, LLMC_BF16, LLMC_F16, LLMC_I8, LLMC_FP8_E4M3}) {
    const std::string d = std::string("/kv_") + llmc_kv_dtype_name(kv);
    cases.push_back(
        attentionCase("prefill/chunked/d80" + d,
                      {6, 2, 80, 0, 16, kv, {37, 0}, {70, 9}, false}));
    cases.push_back(attentionCase("prefill/window/bs8" + d,
                                  {4, 1, 48, 37, 8, kv, {40}, {45}, false}));
    cases.push_back(
        attentionCase("decode/gqa/d36" + d,
                      {8, 2, 36, 0, 16, kv, {0, 5, 40}, {1, 1, 1}, true}));
    cases.push_back(attentionCase("decode/splitk" + d,
                                  {4, 1, 64, 0, 16, kv, {1500}, {1}, true}));
    cases.push_back(
        attentionCase("prefill/sinks/chunked" + d,
                      {6, 2, 64, 0, 16, kv, {37, 0}, {70, 9}, false, 0, true}));
    cases.push_back(
        attentionCase("decode/sinks/splitk" + d,
                      {4, 1, 64, 0, 16, kv, {1500, 3}, {1, 1}, true, 0, true}));
  }
}

/// The experts [E, N, K] of `dtype` as one stacked weight (each expert
/// quantized as a linear's weight: group K for i8).
uint32_t stackedExperts(OpGraph &g, llmc_dtype dtype, int64_t E, int64_t N,
                        int64_t K, int64_t group, std::mt19937 &rng,
                        llmc_operand &scales) {
  auto w = randomVector(rng, size_t(E * N * K));
  scales = none();
  if (dtype != LLMC_I8 && dtype != LLMC_I4)
    return g.weight(dtype, {E, N, K}, w);
  // Quantizing [E * N, K] row by row is quantizing each expert.
  Quantized q = quantize(dtype, w, E * N, K, group);
  scales = wt(g.weight(LLMC_F32, {E, N, K / group}, q.scales));
  return g.weight(dtype, {E, N, K}, q.bytes);
}

// Mixture of experts: routing alone (the weights), then the whole block as
// a graph computes it (router linear, gating, gate/up experts, one SwiGLU
// run per chosen expert, down experts, weighted sum), whose output is wrong
// unless every expert id, the grouping of rows by expert and each expert's
// rows are. Rows 1 (decode), 5 (a batch) and 40 (a prefill: several rows
// per expert, uneven groups).
void addMoeCases(std::vector<Case> &cases) {
  for (auto [E, k, mode, renorm] :
       {std::tuple{8, 2, 0, 1}, {64, 8, 0, 1}, {8, 2, 0, 0}, {32, 4, 1, 0}})
    for (int rows : {1, 13}) {
      const char *scoring = mode     ? "topk_softmax"
                            : renorm ? "renorm"
                                     : "softmax";
      cases.push_back(simple(
          cat("moe/gating/", scoring, "/e", E, "k", k, "/", rows), kExact, rows,
          {E},
          [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &) {
            uint32_t w = g.buffer(rowsT(), k);
            uint32_t ids = g.buffer(rowsT(), k);
            g.bufferDesc(ids).dtype = LLMC_I32;
            g.add(makeOp(LLMC_OP_MOE_GATING, {buf(in[0])}, {w, ids},
                         {k, renorm, mode}));
            return w;
          },
          4.0f));
    }
  struct M {
    llmc_dtype dtype;
    int64_t group; // i4; i8 takes K
    int64_t E, k, H, I;
  };
  // One EXPERT_LINEAR, as LINEAR's cases: each row's runs read x (shared)
  // or their own run of x (per run), times the expert the gating chose.
  for (M m : {M{LLMC_F32, 0, 8, 2, 64, 96}, M{LLMC_BF16, 0, 8, 2, 64, 96},
              M{LLMC_F16, 0, 8, 2, 64, 96}, M{LLMC_I8, 0, 8, 2, 64, 96},
              M{LLMC_I4, 32, 8, 2, 64, 96}, M{LLMC_I4, 32, 64, 8, 256, 40}})
    for (int rows : {1, 5, 40})
      for (bool perRun : {false, true}) {
        const bool integer = m.dtype == LLMC_I8 || m.dtype == LLMC_I4;
        const double bound = m.dtype == LLMC_F32 ? kExact
                             : integer           ? kInt8Activations
                                                 : kLowPrecision;
        const int64_t xCols = perRun ? m.k * m.H : m.H;
        cases.push_back(
            simple(cat("moe/expert_linear/", dtypeName(m.dtype),
                       m.group ? cat("g", m.group) : "", "/e", m.E, "k", m.k,
                       "/", rows, "x", m.H, "x", m.I, perRun ? "/per_run" : ""),
                   bound, rows, {xCols, m.E},
                   [=](OpGraph &g, const std::vector<uint32_t> &in,
                       std::mt19937 &rng) {
                     uint32_t w = g.buffer(rowsT(), m.k);
                     uint32_t ids = g.buffer(rowsT(), m.k);
                     g.bufferDesc(ids).dtype = LLMC_I32;
                     g.add(makeOp(LLMC_OP_MOE_GATING, {buf(in[1])}, {w, ids},
                                  {m.k, 1, 0}));
                     const int64_t group = m.dtype == LLMC_I4 ? m.group : m.H;
                     llmc_operand scales;
                     uint32_t wi = stackedExperts(g, m.dtype, m.E, m.I, m.H,
                                                  group, rng, scales);
                     uint32_t out = g.buffer(rowsT(), m.k * m.I);
                     g.add(makeOp(LLMC_OP_EXPERT_LINEAR,
                                  {buf(in[0]), wt(wi), scales, buf(ids)}, {out},
                                  {group, m.k}));
                     return out;
                   }));
      }
  // The whole block chains two expert linears around SwiGLU, and each may
  // round its activations (to bf16, or to int8 per block of 32), so
  // low-precision experts get four times one linear's room (measured: up to
  // 1.5e-5 bf16 and 1.5e-4 i4 at one row, where no row group averages the
  // rounding out). The single-op cases above hold the per-op bounds.
  for (M m : {M{LLMC_F32, 0, 8, 2, 64, 96}, M{LLMC_BF16, 0, 8, 2, 64, 96},
              M{LLMC_F16, 0, 8, 2, 64, 96}, M{LLMC_I8, 0, 8, 2, 64, 96},
              M{LLMC_I4, 32, 8, 2, 64, 96}, M{LLMC_I8, 0, 16, 4, 128, 48},
              M{LLMC_I4, 32, 64, 8, 128, 64}, M{LLMC_F32, 0, 64, 8, 128, 64}})
    for (int rows : {1, 5, 40}) {
      const bool integer = m.dtype == LLMC_I8 || m.dtype == LLMC_I4;
      const double bound = m.dtype == LLMC_F32 ? kExact
                           : integer           ? 4 * kInt8Activations
                                               : 4 * kLowPrecision;
      cases.push_back(simple(
          cat("moe/block/", dtypeName(m.dtype),
              m.group ? cat("g", m.group) : "", "/e", m.E, "k", m.k, "/", rows,
              "x", m.H, "x", m.I),
          bound, rows, {m.H},
          [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &rng) {
            uint32_t router = g.weight(LLMC_F32, {m.E, m.H},
                                       randomVector(rng, size_t(m.E * m.H)));
            uint32_t logits = g.buffer(rowsT(), m.E);
            g.add(makeOp(LLMC_OP_LINEAR, {buf(in[0]), wt(router)}, {logits}));
            uint32_t w = g.buffer(rowsT(), m.k);
            uint32_t ids = g.buffer(rowsT(), m.k);
            g.bufferDesc(ids).dtype = LLMC_I32;
            g.add(makeOp(LLMC_OP_MOE_GATING, {buf(logits)}, {w, ids},
                         {m.k, 1, 0}));
            llmc_operand s1, s2;
            auto group = [&](int64_t K) {
              return m.dtype == LLMC_I4 ? m.group : K;
            };
            uint32_t gu = stackedExperts(g, m.dtype, m.E, 2 * m.I, m.H,
                                         group(m.H), rng, s1);
            uint32_t h = g.buffer(rowsT(), m.k * 2 * m.I);
            g.add(makeOp(LLMC_OP_EXPERT_LINEAR,
                         {buf(in[0]), wt(gu), s1, buf(ids)}, {h},
                         {group(m.H), m.k}));
            uint32_t a = g.buffer(rowsT(), m.k * m.I);
            g.add(makeOp(LLMC_OP_SWIGLU, {buf(h)}, {a}, {0, m.k}));
            uint32_t dn =
                stackedExperts(g, m.dtype, m.E, m.H, m.I, group(m.I), rng, s2);
            uint32_t y = g.buffer(rowsT(), m.k * m.H);
            g.add(makeOp(LLMC_OP_EXPERT_LINEAR, {buf(a), wt(dn), s2, buf(ids)},
                         {y}, {group(m.I), m.k}));
            uint32_t out = g.buffer(rowsT(), m.H);
            g.add(makeOp(LLMC_OP_MOE_COMBINE, {buf(y), buf(w)}, {out}, {m.k}));
            return out;
          }));
    }
}

// gpt-oss: MXFP4 expert linears (exact, or on int8 activations), the
// experts' biases, and its whole block: a biased router, the top k logits
// softmaxed, gate/up rows interleaved, the clamped unit, a biased down.
void addGptOssMoeCases(std::vector<Case> &cases) {
  const int64_t E = 8, k = 2, H = 64, I = 96;
  for (int64_t int8 : {0, 1})
    for (int rows : {1, 5, 40}) {
      cases.push_back(simple(
          cat("moe/expert_linear/mxfp4/e", E, "k", k, "/", rows,
              int8 ? "/int8_activations" : ""),
          int8 ? kInt8Activations : kExact, rows, {H, E},
          [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &rng) {
            uint32_t w = g.buffer(rowsT(), k), ids = g.buffer(rowsT(), k);
            g.bufferDesc(ids).dtype = LLMC_I32;
            g.add(
                makeOp(LLMC_OP_MOE_GATING, {buf(in[1])}, {w, ids}, {k, 0, 1}));
            llmc_operand scales;
            uint32_t wi = mxfp4Weight(g, {E, I, H}, rng, scales);
            uint32_t out = g.buffer(rowsT(), k * I);
            g.add(makeOp(LLMC_OP_EXPERT_LINEAR,
                         {buf(in[0]), wt(wi), scales, buf(ids)}, {out},
                         {32, k, int8}));
            return out;
          }));
      cases.push_back(simple(
          cat("moe/block/gpt_oss/e", E, "k", k, "/", rows,
              int8 ? "/int8_activations" : ""),
          int8 ? 4 * kInt8Activations : kExact, rows, {H},
          [=](OpGraph &g, const std::vector<uint32_t> &in, std::mt19937 &rng) {
            uint32_t router =
                g.weight(LLMC_F32, {E, H}, randomVector(rng, size_t(E * H)));
            uint32_t rb = g.weight(LLMC_F32, {E}, randomVector(rng, size_t(E)));
            uint32_t logits = g.buffer(rowsT(), E);
            g.add(makeOp(LLMC_OP_LINEAR,
                         {buf(in[0]), wt(router), none(), wt(rb)}, {logits}));
            uint32_t w = g.buffer(rowsT(), k), ids = g.buffer(rowsT(), k);
            g.bufferDesc(ids).dtype = LLMC_I32;
            g.add(
                makeOp(LLMC_OP_MOE_GATING, {buf(logits)}, {w, ids}, {k, 0, 1}));
            llmc_operand s1, s2;
            uint32_t gu = mxfp4Weight(g, {E, 2 * I, H}, rng, s1);
            uint32_t h = g.buffer(rowsT(), k * 2 * I);
            g.add(makeOp(LLMC_OP_EXPERT_LINEAR,
                         {buf(in[0]), wt(gu), s1, buf(ids)}, {h},
                         {32, k, int8}));
            uint32_t gub = g.weight(LLMC_F32, {E, 2 * I},
                                    randomVector(rng, size_t(E * 2 * I)));
            g.add(makeOp(LLMC_OP_EXPERT_BIAS, {buf(h), wt(gub), buf(ids)}, {h},
                         {k}));
            uint32_t a = g.buffer(rowsT(), k * I);
            g.add(
                makeOp(LLMC_OP_SWIGLU, {buf(h)}, {a}, {2, k, 1}, {7.0, 1.702}));
            uint32_t dn = mxfp4Weight(g, {E, H, I}, rng, s2);
            uint32_t y = g.buffer(rowsT(), k * H);
            g.add(makeOp(LLMC_OP_EXPERT_LINEAR, {buf(a), wt(dn), s2, buf(ids)},
                         {y}, {32, k, int8}));
            uint32_t db =
                g.weight(LLMC_F32, {E, H}, randomVector(rng, size_t(E * H)));
            uint32_t yb = g.buffer(rowsT(), k * H);
            g.add(makeOp(LLMC_OP_EXPERT_BIAS, {buf(y), wt(db), buf(ids)}, {yb},
                         {k}));
            uint32_t out = g.buffer(rowsT(), H);
            g.add(makeOp(LLMC_OP_MOE_COMBINE, {buf(yb), buf(w)}, {out}, {k}));
            return out;
          }));
    }
}

std::vector<Case> allCases() {
  std::vector<Case> cases;
  addNormCases(cases);
  addLinearCases(cases);
  addLinearSwigluCases(cases);
  addMxfp4LinearCases(cases);
  addKQuantCases(cases);
  addPointwiseCases(cases);
  addTakeRowsCase(cases);
  addAttentionCases(cases);
  addMoeCases(cases);
  addGptOssMoeCases(cases);
  return cases;
}

double nmse(const std::vector<float> &out, const std::vector<float> &ref) {
  if (out.size() != ref.size())
    return INFINITY;
  double err = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(out[i]))
      return INFINITY;
    err += (double(out[i]) - ref[i]) * (double(out[i]) - ref[i]);
    norm += double(ref[i]) * ref[i];
  }
  return norm > 0 ? err / norm : err;
}

/// The backends under test: every usable one but ref and null, or ref
/// itself when it is alone.
std::vector<const LoadedBackend *> backendsUnderTest() {
  std::vector<const LoadedBackend *> out;
  for (const LoadedBackend &b : registry().backends())
    if (b.name != "ref" && b.name != "null" && b.usable())
      out.push_back(&b);
  if (out.empty() && registry().find("ref"))
    out.push_back(registry().find("ref"));
  return out;
}

TEST(Conformance, ListsTheBackendsCompared) {
  ASSERT_NE(registry().find("ref"), nullptr) << "the ref backend was not found";
  for (const LoadedBackend &b : registry().backends())
    std::printf("loaded: %s (%s)%s\n", b.name.c_str(), b.path.c_str(),
                b.usable() ? "" : " [no usable device]");
  for (const std::string &p : registry().problems())
    std::printf("refused: %s\n", p.c_str());
  for (const LoadedBackend *b : backendsUnderTest())
    std::printf("comparing: %s vs ref\n", b->name.c_str());
}

/// With LLMC_CPU_ISA set (ctest runs the suite once per kernel level), the
/// level the cpu backend says it runs, or "" when it does not run that one
/// (a CPU without it): the suite then skips rather than test another level.
std::string cpuLevelMismatch() {
  const char *want = std::getenv("LLMC_CPU_ISA");
  const LoadedBackend *cpu = registry().find("cpu");
  if (!want || !*want || !cpu || cpu->devices().empty())
    return "";
  std::string name = cpu->devices()[0].name;
  if (name.find(std::string("kernels ") + want + ";") != std::string::npos)
    return "";
  return cat("LLMC_CPU_ISA=", want, " but the cpu backend runs: ", name);
}

class OpConformance : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    if (std::string why = cpuLevelMismatch(); !why.empty())
      GTEST_SKIP() << "this CPU lacks that kernel level: " << why;
  }
};

// One test per op family, so a failure names the op.
TEST_P(OpConformance, MatchesRef) {
  const LoadedBackend *refPlugin = registry().find("ref");
  ASSERT_NE(refPlugin, nullptr);
  BackendInstance ref(*refPlugin);
  for (const LoadedBackend *plugin : backendsUnderTest()) {
    BackendInstance backend(*plugin);
    int passed = 0, skipped = 0;
    for (const Case &c : allCases()) {
      if (c.name.rfind(cat(GetParam(), "/"), 0) != 0)
        continue;
      bool supported = true;
      std::vector<float> out = c.run(backend, supported);
      if (!supported) {
        std::printf("  %s %s: not supported\n", plugin->name.c_str(),
                    c.name.c_str());
        ++skipped;
        continue;
      }
      bool refSupported = true;
      std::vector<float> want = c.run(ref, refSupported);
      ASSERT_TRUE(refSupported) << c.name;
      double err = nmse(out, want);
      EXPECT_LE(err, c.maxNmse)
          << plugin->name << " " << c.name << ": nmse " << err;
      passed += err <= c.maxNmse;
    }
    std::printf("  %s %s: %d ok, %d not supported\n", plugin->name.c_str(),
                GetParam().c_str(), passed, skipped);
  }
}

const std::vector<std::string> kFamilies = {
    "embedding",     "rms_norm",  "add_rms_norm", "layer_norm", "linear",
    "rope",          "add",       "mul",          "silu",       "gelu_erf",
    "gelu_tanh",     "swiglu",    "geglu",        "scale",      "softcap",
    "slice",         "take_rows", "prefill",      "decode",     "moe",
    "clamped_swiglu"};

INSTANTIATE_TEST_SUITE_P(Ops, OpConformance, ::testing::ValuesIn(kFamilies));

// A backend that serves a weight from its own copy may drop the weight's
// pages only where they are a file mapping (LLMC_GRAPH_WEIGHTS_FILE_MAPPED,
// unset here): weights in the caller's memory come back as they were.
TEST(Conformance, WeightsInTheCallersMemoryStayIntact) {
  const int64_t n = 64, k = 8192; // whole pages inside every weight
  for (const LoadedBackend *plugin : backendsUnderTest()) {
    BackendInstance backend(*plugin);
    for (llmc_dtype dtype : {LLMC_I8, LLMC_I4, LLMC_BF16}) {
      SCOPED_TRACE(cat(plugin->name, " ", dtypeName(dtype)));
      std::mt19937 rng(9);
      OpGraph g;
      const uint32_t x = g.feed(randomVector(rng, size_t(k)), k);
      const std::vector<float> w = randomVector(rng, size_t(n * k));
      llmc_operand scales = none();
      uint32_t wi;
      int64_t group = 0;
      if (dtype == LLMC_BF16) {
        wi = g.weight(dtype, {n, k}, w);
      } else {
        group = dtype == LLMC_I8 ? k : 32;
        Quantized q = quantize(dtype, w, n, k, group);
        wi = g.weight(dtype, {n, dtype == LLMC_I8 ? k : k / 2}, q.bytes);
        scales = wt(g.weight(LLMC_F32, {n, k / group}, q.scales));
      }
      const llmc_weight_desc &wd = g.desc(0).weights[wi];
      const auto *bytes = static_cast<const uint8_t *>(wd.data);
      const std::vector<uint8_t> before(bytes, bytes + wd.nbytes);
      const uint32_t out = g.buffer(rowsT(), n);
      g.add(makeOp(LLMC_OP_LINEAR, {buf(x), wt(wi), scales, none()}, {out},
                   {group}));
      StepData step = StepData::simple(1, 1);
      bool supported = true;
      runIfSupported(backend, g, out, step, supported);
      if (!supported)
        continue;
      EXPECT_TRUE(std::equal(before.begin(), before.end(), bytes));
    }
  }
}

TEST(Conformance, EveryCaseBelongsToAFamily) {
  for (const Case &c : allCases()) {
    bool found = false;
    for (const std::string &f : kFamilies)
      found |= c.name.rfind(cat(f, "/"), 0) == 0;
    EXPECT_TRUE(found) << c.name;
  }
}

} // namespace
} // namespace llmc::testing
