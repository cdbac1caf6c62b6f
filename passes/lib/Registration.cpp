//===- Registration.cpp - Register every llmc pass -------------------------===//

#include "llmc/Passes/Passes.h"

void mlir::llmc::registerAllLLMCPasses() { registerLLMCPasses(); }
