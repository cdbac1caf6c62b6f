//===- EmitPlan.h - Write the plan of a lowered module ---------*- C++ -*-===//
#pragma once

#include "llmc/Passes/Lowering.h"

#include <functional>
#include <string>

namespace mlir::llmc {

struct EmitOptions {
  std::string target = "cpu";
  std::string dtype = "f32";
  std::string quant = "none";
  /// Called after each weight is converted and written.
  std::function<void(size_t done, size_t total)> progress;
};

/// Writes `lowered` (from lowerToGraphs) as a plan: the config and
/// tokenizer recorded on the module by the importer, and every weight
/// converted from the checkpoint named by `llmc.source`, one at a time.
/// Throws llmc::Error naming the file or tensor on failure.
void emitPlan(ModuleOp module, const LoweredModule &lowered,
              const EmitOptions &options, const std::string &path);

} // namespace mlir::llmc
