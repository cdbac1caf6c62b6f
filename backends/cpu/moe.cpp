//===- moe.cpp - Routing, grouped expert GEMMs and the weighted sum -------===//
//
// EXPERT_LINEAR reads only the experts a step chose. The step's (token, run)
// pairs are grouped by expert; each expert's rows are gathered once into a
// contiguous block and multiplied by that expert's weight on the same
// kernels as LINEAR (i8 / i4 / MXFP4 stacks packed once, each expert into
// whole panels; bf16 stacks too where the CPU has vdpbf16ps), so an expert
// shared by several tokens of a batch is read once. The work is split over
// (expert, tile of output rows) in one parallel region, so two threads stay
// busy when a single token picks eight small experts and when a prefill
// gives one expert most of the tokens (largest groups first).
//
//===----------------------------------------------------------------------===//
#include "cpu.h"

#include "common/moe.h"
#include "common/op_checks.h"
#include "simd.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace llmc::cpu {
namespace {

/// Bytes of one row of K values of W (a K-quant's codes).
size_t rowBytes(uint32_t dtype, int64_t K) {
  if (common::isKQuant(dtype))
    return size_t(K / kquant::kBlock) *
           size_t(kquant::layout(common::kquantFormat(dtype)).codeBytes);
  switch (dtype) {
  case LLMC_F32:
    return size_t(K) * 4;
  case LLMC_BF16:
  case LLMC_F16:
    return size_t(K) * 2;
  case LLMC_I8:
    return size_t(K);
  default: // i4, MXFP4
    return size_t(K) / 2;
  }
}

Kernel makeGating(const llmc_op_desc &op) {
  return [op](Step &step) {
    Matrix logits = step.operand(op, 0);
    Matrix weights = step.result(op, 0), experts = step.result(op, 1);
    expectRows(weights, logits.rows, "the weights");
    expectRows(experts, logits.rows, "the experts");
    const int64_t k = op.i[0];
    for (int64_t t = 0; t < logits.rows; ++t)
      common::routeTopK(logits.row(t), logits.cols, k, op.i[1] == 1, op.i[2],
                        weights.row(t), experts.ids() + t * k);
  };
}

Kernel makeCombine(const llmc_op_desc &op) {
  const int64_t k = op.i[0];
  return [op, k](Step &step) {
    Matrix y = step.operand(op, 0), weights = step.operand(op, 1);
    Matrix out = step.result(op, 0);
    expectRows(weights, y.rows, "the weights");
    expectRows(out, y.rows, "the result");
    const int64_t N = out.cols;
#pragma omp parallel for schedule(static) if (y.rows * y.cols >= (1 << 16))
    for (int64_t t = 0; t < y.rows; ++t) {
      float *o = out.row(t);
      const float *w = weights.row(t), *in = y.row(t);
      int64_t n = 0;
      for (; n + 8 <= N; n += 8) {
        __m256 acc =
            _mm256_mul_ps(_mm256_set1_ps(w[0]), _mm256_loadu_ps(in + n));
        for (int64_t j = 1; j < k; ++j)
          acc = _mm256_fmadd_ps(_mm256_set1_ps(w[j]),
                                _mm256_loadu_ps(in + j * N + n), acc);
        _mm256_storeu_ps(o + n, acc);
      }
      for (; n < N; ++n) {
        float acc = w[0] * in[n];
        for (int64_t j = 1; j < k; ++j)
          acc = std::fma(w[j], in[j * N + n], acc);
        o[n] = acc;
      }
    }
  };
}

/// The smallest piece of an expert's weights one tile reads.
constexpr int64_t kMinTileBytes = 256 << 10;

/// One unit of work: output rows [n0, n1) of one expert, for its gathered
/// rows.
struct Tile {
  int32_t expert;
  int64_t n0, n1;
};

/// Scratch an expert kernel reuses step to step (one host thread runs a
/// backend at a time).
struct ExpertScratch {
  std::vector<float> gathered; // [pairs, K], grouped by expert
  std::vector<Tile> tiles;
};

Kernel makeExpertLinear(const llmc_op_desc &op, const Graph &g, Backend &b) {
  const common::ExpertShape s = common::expertShape(op, g);
  const llmc_weight_desc &wd = g.weights[op.operands[common::LinearW].index];
  const bool quantized = wd.dtype == LLMC_I8 || wd.dtype == LLMC_I4;
  const bool mxfp4 = wd.dtype == LLMC_MXFP4;
  const bool kq = common::isKQuant(wd.dtype);
  std::shared_ptr<std::vector<float>> scales;
  if (quantized) {
    const llmc_weight_desc &sw =
        g.weights[op.operands[common::LinearScales].index];
    scales = b.weights.get<std::vector<float>>(sw.data, sw.nbytes, 1, [&] {
      return std::make_shared<std::vector<float>>(
          toF32(sw, common::weightElements(sw)));
    });
  }
  // The whole stack as one [E * N, K] weight: an expert's tile is a range
  // of its rows.
  const LinearWeight all{
      wd.dtype,
      wd.data,
      wd.nbytes,
      scales ? scales->data() : nullptr,
      s.experts * s.N,
      s.K,
      quantized || mxfp4 ? s.group : 0,
      mxfp4 ? static_cast<const uint8_t *>(
                  g.weights[op.operands[common::LinearScales].index].data)
            : nullptr,
      (mxfp4 || kq) && op.i[2] == 1,
      kq ? static_cast<const uint8_t *>(
               g.weights[op.operands[common::LinearScales].index].data)
         : nullptr};
  const OwnKernels kernels = ownKernelsFor(b, all);
  // i8 / i4 / MXFP4 stacks are packed once, as a LINEAR's weights are,
  // each expert padded to whole panels: every row count runs the tiles over
  // them, so an expert's rows get the same bits whatever else a step routes
  // to it (the gemv and the per-call GEMM sum in different orders).
  std::shared_ptr<PackedIntWeight> packed;
  const int64_t expertPanels = (s.N + kTileN - 1) / kTileN;
  if (kernels.intDot)
    packed = b.weights.get<PackedIntWeight>(wd.data, wd.nbytes, 3, [&] {
      auto made =
          packIntWeight(b.ints, intFormat(wd.dtype), wd.data, all.scales, s.N,
                        s.K, all.group, all.e8m0, s.experts);
      releaseCopied(g, wd);
      return made;
    });
  // bf16 stacks on a level with vdpbf16ps: packed once in pairs of K, as
  // LINEAR's bf16 weights are (x rounded to bf16 at every row count).
  std::shared_ptr<PackedFloatWeight> packedBf16;
  if (wd.dtype == LLMC_BF16 && kernels.bf16Tile && s.K % 2 == 0 &&
      s.N % kTileN == 0)
    packedBf16 = b.weights.get<PackedFloatWeight>(wd.data, wd.nbytes, 4, [&] {
      auto made =
          packFloatWeight(LLMC_BF16, wd.data, s.experts * s.N, s.K, true);
      releaseCopied(g, wd);
      return made;
    });
  const int threads = b.threads;
  auto scratch = std::make_shared<ExpertScratch>();

  return [op, s, all, kernels, threads, scales, packed, packedBf16,
          expertPanels, scratch](Step &step) {
    Matrix x = step.operand(op, common::LinearX), out = step.result(op, 0);
    Matrix ids = step.operand(op, 3);
    expectRows(out, x.rows, "the result");
    expectRows(ids, x.rows, "the experts");
    const common::ExpertGroups groups =
        common::groupByExpert(ids.ids(), x.rows, s.k, s.experts);

    // Gather each expert's input rows, in group order.
    const int64_t pairs = x.rows * s.k;
    scratch->gathered.resize(size_t(pairs * s.K));
    float *gathered = scratch->gathered.data();
    for (int64_t p = 0; p < pairs; ++p) {
      const int64_t pair = groups.pairs[size_t(p)], t = pair / s.k,
                    j = pair % s.k;
      std::memcpy(gathered + p * s.K, x.row(t) + (s.perRun ? j * s.K : 0),
                  size_t(s.K) * 4);
    }

    // Tiles: enough per expert that every thread has work (a token's k
    // experts may be fewer than the threads), but none under kMinTileBytes
    // of weights (each tile quantizes its rows and restarts the weight
    // stream: measured ~1 us, so on moe-small a 512-row int4 expert in two
    // tiles decodes slower than in one); rows a multiple of 32 (the GEMM
    // tiles' width); the largest groups first, handed out as threads free
    // up.
    std::vector<Tile> &tiles = scratch->tiles;
    tiles.clear();
    int64_t active = 0;
    for (int64_t e = 0; e < s.experts; ++e)
      active += groups.begin[size_t(e + 1)] > groups.begin[size_t(e)];
    const int64_t expertBytes = int64_t(rowBytes(all.dtype, s.K)) * s.N;
    const int64_t perExpert = std::clamp<int64_t>(
        (2 * threads + active - 1) / std::max<int64_t>(active, 1), 1,
        std::max<int64_t>(1, expertBytes / kMinTileBytes));
    const int64_t step32 = (s.N + perExpert - 1) / perExpert;
    const int64_t width = std::max<int64_t>(32, (step32 + 31) / 32 * 32);
    for (int64_t e = 0; e < s.experts; ++e)
      if (groups.begin[size_t(e + 1)] > groups.begin[size_t(e)])
        for (int64_t n0 = 0; n0 < s.N; n0 += width)
          tiles.push_back({int32_t(e), n0, std::min(s.N, n0 + width)});
    std::stable_sort(tiles.begin(), tiles.end(),
                     [&](const Tile &a, const Tile &c) {
                       auto rows = [&](const Tile &t) {
                         return groups.begin[size_t(t.expert + 1)] -
                                groups.begin[size_t(t.expert)];
                       };
                       return rows(a) > rows(c);
                     });

    const size_t wRow = rowBytes(all.dtype, s.K);
    const size_t headerRow =
        common::isKQuant(all.dtype)
            ? size_t(s.K / kquant::kBlock) *
                  size_t(kquant::layout(common::kquantFormat(all.dtype))
                             .headerBytes)
            : 0;
    const int64_t groupsPerRow = all.group > 0 ? s.K / all.group : 0;
    const int64_t outCols = out.cols;
#pragma omp parallel num_threads(threads) if (tiles.size() > 1)
    {
      std::vector<float> tileOut;
#pragma omp for schedule(dynamic, 1)
      for (size_t i = 0; i < tiles.size(); ++i) {
        const Tile &tile = tiles[i];
        const int64_t first = groups.begin[size_t(tile.expert)];
        const int64_t rows = groups.begin[size_t(tile.expert) + 1] - first;
        const int64_t row0 = int64_t(tile.expert) * s.N + tile.n0;
        const int64_t n = tile.n1 - tile.n0;
        LinearWeight w = all;
        w.data = static_cast<const uint8_t *>(all.data) + size_t(row0) * wRow;
        w.nbytes = size_t(n) * wRow;
        if (w.scales)
          w.scales = all.scales + row0 * groupsPerRow;
        if (w.e8m0)
          w.e8m0 = all.e8m0 + row0 * groupsPerRow;
        if (w.kqHeaders)
          w.kqHeaders = all.kqHeaders + size_t(row0) * headerRow;
        w.N = n;
        tileOut.resize(size_t(rows * n));
        const GemvArgs a{gathered + first * s.K, rows, s.K, n, nullptr,
                         tileOut.data()};
        if (packed)
          gemmPackedInt(kernels.ints, a, *packed, nullptr,
                        tile.expert * expertPanels + tile.n0 / kTileN);
        else if (packedBf16)
          gemmPackedBf16(kernels.bf16Tile, a, *packedBf16, row0 / kTileN);
        else
          runOwnLinear(w, kernels, a);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t pair = groups.pairs[size_t(first + r)];
          const int64_t t = pair / s.k, j = pair % s.k;
          std::memcpy(out.data + t * outCols + j * s.N + tile.n0,
                      tileOut.data() + r * n, size_t(n) * 4);
        }
      }
    }
  };
}

} // namespace

/// EXPERT_BIAS: run j of row t += bias[experts[t][j]].
Kernel makeExpertBias(const llmc_op_desc &op, const Graph &g) {
  const llmc_weight_desc &bw = g.weights[op.operands[1].index];
  const int64_t E = bw.shape[0], N = common::weightElements(bw) / E,
                k = op.i[0];
  auto bias = std::make_shared<std::vector<float>>(toF32(bw, E * N));
  return [op, bias, E, N, k](Step &step) {
    Matrix y = step.operand(op, 0), ids = step.operand(op, 2);
    Matrix out = step.result(op, 0);
    expectRows(out, y.rows, "the result");
    expectRows(ids, y.rows, "the experts");
    for (int64_t t = 0; t < y.rows; ++t) // ids checked before any thread
      for (int64_t j = 0; j < k; ++j)
        common::expertAt(ids.ids(), k, t, j, E);
#pragma omp parallel for schedule(static) if (y.rows * y.cols >= (1 << 16))
    for (int64_t t = 0; t < y.rows; ++t)
      for (int64_t j = 0; j < k; ++j) {
        const int32_t e = ids.ids()[t * k + j];
        const float *in = y.row(t) + j * N, *b = bias->data() + e * N;
        float *o = out.row(t) + j * N;
        int64_t n = 0;
        for (; n + 8 <= N; n += 8)
          _mm256_storeu_ps(o + n, _mm256_add_ps(_mm256_loadu_ps(in + n),
                                                _mm256_loadu_ps(b + n)));
        for (; n < N; ++n)
          o[n] = in[n] + b[n];
      }
  };
}

Kernel makeMoe(const llmc_op_desc &op, const Graph &g, Backend &b) {
  switch (op.kind) {
  case LLMC_OP_EXPERT_BIAS:
    return makeExpertBias(op, g);
  case LLMC_OP_MOE_GATING:
    return makeGating(op);
  case LLMC_OP_EXPERT_LINEAR:
    return makeExpertLinear(op, g, b);
  default:
    return makeCombine(op);
  }
}

} // namespace llmc::cpu
