//===- graph.h - The executable form of a graph ---------------*- C++ -*-===//
//
// What llmc-serialize produces and a plan stores: a flat list of kernel calls
// (llmc_op_desc, see backends/include/llmc/backend.h for each op's operands
// and attributes) over numbered buffers whose rows are affine in T and B.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/backend.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llmc {

struct Graph {
  std::string name; // "prefill", "decode", "verify"
  std::vector<llmc_op_desc> ops;
  std::vector<llmc_buffer_desc> buffers;
  uint32_t logitsBuffer = 0;
  int64_t workspaceT = 0, workspaceB = 0, workspaceC = 0;

  /// Workspace bytes for a step of T tokens over B sequences.
  int64_t workspaceBytes(int64_t t, int64_t b) const {
    return workspaceT * t + workspaceB * b + workspaceC;
  }
};

const char *opKindName(llmc_op_kind kind);
/// What a reader calls the op: its kind's name, but "geglu" for SWIGLU with
/// the GELU activation.
const char *opLabel(const llmc_op_desc &op);

/// The backend ABI minor version an op's attributes need (0 for 1.0), and
/// the feature that needs it: an older plugin would read past them and
/// compute something else, so the host refuses it.
struct AbiNeed {
  uint32_t minor;
  std::string feature;
};
AbiNeed abiNeeded(const llmc_op_desc &op);
/// The largest need of any op of `g`.
AbiNeed abiNeeded(const Graph &g);
const char *dtypeName(llmc_dtype dtype);
/// Whether a plan weight may hold `dtype` (every dtype but fp8, which only
/// a KV cache holds).
inline bool isWeightDtype(uint32_t dtype) {
  return dtype <= LLMC_KQ_HEADER && dtype != LLMC_FP8_E4M3;
}
size_t dtypeBytes(llmc_dtype dtype, int64_t elements);

} // namespace llmc
