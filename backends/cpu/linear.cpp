//===- linear.cpp - LINEAR: one arithmetic per weight at every row count --===//
//
// A row's result must not depend on the rows beside it: a request batched,
// in a mixed step, or recomputed after preemption must generate what it
// generates alone. So each weight dtype has one arithmetic for every row
// count, one decode token to a prompt: i8/i4 on the integer tiles (packed
// once) or, where their blocks do not fit K, the grouped gemv; K-quants on
// their dot and tiles, which round x alike; f32/bf16/f16 on the F32Tile
// over panels packed once (f32 activations, bias then k in order); MXFP4 on
// the F32Tile (f32 activations) or packed on the integer tiles. No library GEMM
// is used: one that picks another kernel per row count sums in another order.
//
//===----------------------------------------------------------------------===//
#include "cpu.h"
#include "gemv_kquant.h"

#include "common/op_checks.h"
#include "llmc/support/mapped_file.h"

#include <stdexcept>

namespace llmc::cpu {
namespace {

enum Slot { X = 0, W = 1, Scales = 2, Bias = 3 };

bool present(const llmc_op_desc &op, int s) {
  return uint32_t(s) < op.num_operands &&
         op.operands[s].kind != LLMC_OPERAND_NONE;
}

} // namespace

IntFormat intFormat(uint32_t dtype) {
  return dtype == LLMC_I4 ? kI4 : dtype == LLMC_MXFP4 ? kMx : kI8;
}

void releaseCopied(const Graph &g, const llmc_weight_desc &wd) {
  if (g.weightsFileMapped)
    dropMappedPages(wd.data, wd.nbytes);
}

OwnKernels ownKernelsFor(const Backend &b, const LinearWeight &w) {
  const bool quantized = w.dtype == LLMC_I8 || w.dtype == LLMC_I4 ||
                         (w.dtype == LLMC_MXFP4 && w.int8Activations);
  return OwnKernels{b.ints, b.kquant, b.f32Tile, b.bf16Tile,
                    quantized && intTilesApply(w.K, w.group)};
}

KQuantWeight kquantWeight(const LinearWeight &w, const OwnKernels &k) {
  const kquant::Format f = common::kquantFormat(w.dtype);
  return KQuantWeight{f,
                      static_cast<const uint8_t *>(w.data),
                      w.kqHeaders,
                      w.int8Activations,
                      k.kquant.dot[int(f)],
                      k.kquant.pairedX[int(f)],
                      k.kquant.maxRows,
                      &k.ints};
}

void runOwnLinear(const LinearWeight &w, const OwnKernels &k,
                  const GemvArgs &a) {
  if (common::isKQuant(w.dtype))
    return gemvKQuant(a, kquantWeight(w, k));
  if (k.intDot) // another arithmetic than the packed weight's
    throw std::logic_error("cpu: an integer-dot weight must run packed");
  switch (w.dtype) {
  case LLMC_MXFP4:
    return gemmMxfp4(k.f32Tile, a, static_cast<const uint8_t *>(w.data),
                     w.e8m0);
  case LLMC_F32:
  case LLMC_BF16:
  case LLMC_F16:
    return gemmFloat(k.f32Tile, w.dtype, a, w.data);
  case LLMC_I8:
    return gemvQ8(a, static_cast<const int8_t *>(w.data), w.scales, w.group);
  default:
    return gemvQ4(a, static_cast<const uint8_t *>(w.data), w.scales, w.group);
  }
}

namespace {

Kernel linearKernel(const llmc_op_desc &op, const Graph &g, Backend &b,
                    const llmc_op_desc *swiglu) {
  const llmc_weight_desc &wd = g.weights[op.operands[W].index];
  int64_t K = g.buffers[op.operands[X].index].cols;
  int64_t N = g.buffers[op.results[0]].cols;
  bool quantized = wd.dtype == LLMC_I8 || wd.dtype == LLMC_I4;
  const bool mxfp4 = wd.dtype == LLMC_MXFP4;
  const bool kq = common::isKQuant(wd.dtype);

  std::shared_ptr<std::vector<float>> scales, bias;
  if (quantized) {
    const llmc_weight_desc &s = g.weights[op.operands[Scales].index];
    // Owned copies: plan memory is only byte-aligned.
    scales = b.weights.get<std::vector<float>>(s.data, s.nbytes, 1, [&] {
      return std::make_shared<std::vector<float>>(
          toF32(s, common::weightElements(s)));
    });
  }
  if (present(op, Bias)) {
    const llmc_weight_desc &bw = g.weights[op.operands[Bias].index];
    bias = b.weights.get<std::vector<float>>(bw.data, bw.nbytes, 2, [&] {
      return std::make_shared<std::vector<float>>(toF32(bw, N));
    });
  }
  LinearWeight w{wd.dtype,
                 wd.data,
                 wd.nbytes,
                 scales ? scales->data() : nullptr,
                 N,
                 K,
                 quantized || mxfp4 ? op.i[0] : 0,
                 mxfp4 ? static_cast<const uint8_t *>(
                             g.weights[op.operands[Scales].index].data)
                       : nullptr,
                 (mxfp4 || kq) && op.i[2] == 1,
                 kq ? static_cast<const uint8_t *>(
                          g.weights[op.operands[Scales].index].data)
                    : nullptr};

  OwnKernels kernels = ownKernelsFor(b, w);
  // i8 / i4 / MXFP4 on integer dots: the tiles' panels, packed once, serve
  // every row count. The plan's pages are not read again: they leave the
  // resident set.
  std::shared_ptr<PackedIntWeight> packedInt;
  if (kernels.intDot)
    packedInt = b.weights.get<PackedIntWeight>(wd.data, wd.nbytes, 3, [&] {
      auto made = packIntWeight(b.ints, intFormat(wd.dtype), wd.data, w.scales,
                                N, K, w.group, w.e8m0);
      releaseCopied(g, wd);
      return made;
    });
  std::shared_ptr<PackedFloatWeight> packedFloat;
  if (wd.dtype == LLMC_F32 || wd.dtype == LLMC_BF16 || wd.dtype == LLMC_F16)
    packedFloat = b.weights.get<PackedFloatWeight>(wd.data, wd.nbytes, 4, [&] {
      auto made = packFloatWeight(wd.dtype, wd.data, N, K,
                                  wd.dtype == LLMC_BF16 && kernels.bf16Tile &&
                                      K % 2 == 0);
      releaseCopied(g, wd);
      return made;
    });

  if (swiglu) {
    // K-quants take the tiles above kKQuantGemmRows rows (a prompt); fewer
    // run the linear and the op apart, as unfused.
    const bool kqTiles = kq && w.int8Activations;
    if ((!packedInt && !kqTiles) || N % (2 * kTileN) != 0)
      return {};
    Kernel apart = makeElementwise(*swiglu, g, b);
    return [op, w, kernels, bias, packedInt, kqTiles, apart,
            swiglu = *swiglu](Step &step) {
      Matrix x = step.operand(op, X), y = step.result(swiglu, 0);
      expectRows(y, x.rows, "the SWIGLU result");
      const float *bp = bias ? bias->data() : nullptr;
      if (packedInt)
        return gemmPackedInt(kernels.ints,
                             GemvArgs{x.data, x.rows, w.K, w.N, bp, nullptr},
                             *packedInt, y.data);
      if (kqTiles && x.rows > kKQuantGemmRows)
        return gemmKQuant(kernels.ints,
                          GemvArgs{x.data, x.rows, w.K, w.N, bp, nullptr},
                          kquantWeight(w, kernels), y.data);
      Matrix r = step.result(op, 0);
      runOwnLinear(w, kernels, GemvArgs{x.data, x.rows, w.K, w.N, bp, r.data});
      apart(step);
    };
  }

  return [op, w, kernels, scales, bias, packedInt, packedFloat](Step &step) {
    Matrix x = step.operand(op, X), out = step.result(op, 0);
    expectRows(out, x.rows, "the result");
    const GemvArgs a{x.data,  x.rows, w.K, w.N, bias ? bias->data() : nullptr,
                     out.data};
    if (packedInt)
      return gemmPackedInt(kernels.ints, a, *packedInt);
    if (packedFloat && packedFloat->pairs)
      return gemmPackedBf16(kernels.bf16Tile, a, *packedFloat);
    if (packedFloat)
      return gemmPackedFloat(kernels.f32Tile, a, *packedFloat);
    runOwnLinear(w, kernels, a);
  };
}

} // namespace

Kernel makeLinear(const llmc_op_desc &op, const Graph &g, Backend &b) {
  return linearKernel(op, g, b, nullptr);
}

Kernel makeLinearSwiglu(const llmc_op_desc &linear, const llmc_op_desc &swiglu,
                        const Graph &g, Backend &b) {
  return linearKernel(linear, g, b, &swiglu);
}

} // namespace llmc::cpu
