//===- op_checks.h - What prepare checks of each op -------------*- C++ -*-===//
//
// One function per op family: operand kinds, dtypes, columns and
// attributes, everything a graph states before any step runs. loadGraph
// runs them; a backend that supports an op relies on them and checks at
// step time only what a step decides (rows, ids, cache slots).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "common/graph.h"
#include "llmc/support/kquant.h"

namespace llmc::common {

void checkEmbedding(const llmc_op_desc &, const Graph &);
void checkRmsNorm(const llmc_op_desc &, const Graph &);
void checkAddRmsNorm(const llmc_op_desc &, const Graph &);
void checkLayerNorm(const llmc_op_desc &, const Graph &);
void checkLinear(const llmc_op_desc &, const Graph &);
void checkRope(const llmc_op_desc &, const Graph &);
void checkBinary(const llmc_op_desc &, const Graph &);
void checkUnary(const llmc_op_desc &, const Graph &);
void checkSwiglu(const llmc_op_desc &, const Graph &);
void checkScale(const llmc_op_desc &, const Graph &);
void checkSlice(const llmc_op_desc &, const Graph &);
void checkTakeRows(const llmc_op_desc &, const Graph &);
void checkKvWrite(const llmc_op_desc &, const Graph &);
void checkAttention(const llmc_op_desc &, const Graph &);
void checkMoeGating(const llmc_op_desc &, const Graph &);
void checkExpertLinear(const llmc_op_desc &, const Graph &);
void checkMoeCombine(const llmc_op_desc &, const Graph &);
void checkExpertBias(const llmc_op_desc &, const Graph &);

/// A quantized W's scales (operand 2): f32 [rows * K / group] for i8/i4,
/// E8M0 bytes [rows * K / 32] (group 32) for MXFP4, KQ_HEADER bytes
/// [rows * K / 256 * header bytes] (group 256) for a K-quant. Throws
/// InvalidArgument naming what is wrong.
void checkQuantScales(const llmc_op_desc &op, const Graph &g,
                      const llmc_weight_desc &w, int64_t rows, int64_t K);

/// Whether W is stored in a format with scales (i8, i4, MXFP4).
static_assert(kquant::formatOfDtype(LLMC_Q4_K) == kquant::Format::Q4_K &&
              kquant::formatOfDtype(LLMC_Q5_K) == kquant::Format::Q5_K &&
              kquant::formatOfDtype(LLMC_Q6_K) == kquant::Format::Q6_K &&
              !kquant::formatOfDtype(LLMC_KQ_HEADER));
inline bool isKQuant(uint32_t dtype) {
  return kquant::formatOfDtype(dtype).has_value();
}
/// The kquant.h format of a K-quant dtype.
inline kquant::Format kquantFormat(uint32_t dtype) {
  return *kquant::formatOfDtype(dtype);
}

inline bool isQuantized(uint32_t dtype) {
  return dtype == LLMC_I8 || dtype == LLMC_I4 || dtype == LLMC_MXFP4 ||
         isKQuant(dtype);
}

/// EXPERT_LINEAR's shape, from its weight and attributes: E experts of
/// [N, K], k runs per row; x holds one row per run (perRun) or one shared.
struct ExpertShape {
  int64_t experts, N, K, k, group;
  bool perRun;
};
ExpertShape expertShape(const llmc_op_desc &op, const Graph &g);

/// SWIGLU's runs per row (i1; 0 and 1 both mean one).
inline int64_t gatedRuns(const llmc_op_desc &op) {
  return op.i[1] > 1 ? op.i[1] : 1;
}

/// LINEAR's operand slots; trailing NONE slots may be left out of
/// num_operands, and linearSlot reads them as NONE.
enum LinearSlot { LinearX = 0, LinearW = 1, LinearScales = 2, LinearBias = 3 };
const llmc_operand &linearSlot(const llmc_op_desc &op, int slot);

/// The width RMS_NORM normalizes over in a row of `cols`: i0, or the row
/// when i0 is 0. Throws InvalidArgument unless it divides `cols`.
int64_t rmsNormWidth(const llmc_op_desc &op, int64_t cols);

/// Attention attributes: i0 layer, i1 heads, i2 kv_heads, i3 head_dim,
/// i4 window; f0 scale, f1 logit soft-cap (0: none). The sinks, where
/// operand 1 holds them, are read by each backend.
struct AttentionShape {
  int64_t layer, heads, kvHeads, headDim, window;
  float scale, softcap;
  /// [heads] or null: each head's sink logit joins its softmax's
  /// denominator (set by the backend from operand 1).
  const float *sinks = nullptr;
};
AttentionShape attentionShape(const llmc_op_desc &op);

} // namespace llmc::common
