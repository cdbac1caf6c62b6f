//===- Passes.h - llmc passes --------------------------------*- C++ -*-===//
#pragma once

#include "mlir/Pass/Pass.h"

namespace mlir::llmc {

#define GEN_PASS_DECL
#include "llmc/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "llmc/Passes/Passes.h.inc"

/// Registers every llmc pass and the named pipeline with the global registry,
/// so llmc-opt and `llmc compile` see the same set.
void registerAllLLMCPasses();

} // namespace mlir::llmc
