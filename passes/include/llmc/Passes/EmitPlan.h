//===- EmitPlan.h - Write the plan of a lowered module ---------*- C++ -*-===//
#pragma once

#include "llmc/Passes/Lowering.h"
#include "llmc/runtime/plan.h"

#include <functional>
#include <string>

namespace mlir::llmc {

/// What quantizing one weight stored in a GGUF block format cost.
struct Conversion {
  std::string weight, ggmlType, format; // format: "int8" | "int4"
  float maxAbsError = 0; // over the tensor, against its dequantized values
  float maxAbs = 0;      // the largest |w|, for scale
};

struct EmitOptions {
  std::string target = "cpu";
  std::string dtype = "f32";
  std::string quant = "none"; // resolved: none | int8 | int4 | ggml
  /// Called after each weight is converted and written.
  ::llmc::WriteProgressFn progress;
  /// Called for each weight quantized from a GGUF block format, from the
  /// thread that writes the plan.
  std::function<void(const Conversion &)> converted;
};

/// Writes `lowered` (from lowerToGraphs) as a plan: the config and
/// tokenizer recorded on the module by the importer, and every weight
/// converted from the checkpoint named by `llmc.source`, one at a time.
/// Throws llmc::Error naming the file or tensor on failure.
void emitPlan(ModuleOp module, const LoweredModule &lowered,
              const EmitOptions &options, const std::string &path);

} // namespace mlir::llmc
