//===- Passes.td - llmc passes ----------------------------*- tablegen -*-===//
//
// One def per pass; each is implemented in passes/lib/<Name>.cpp and tested
// by test/lit/passes/<flag-without-llmc->.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_PASSES_TD
#define LLMC_PASSES_TD

include "mlir/Pass/PassBase.td"

#endif // LLMC_PASSES_TD
