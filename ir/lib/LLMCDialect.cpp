//===- LLMCDialect.cpp - The llmc dialect ---------------------------------===//

#include "llmc/IR/LLMCDialect.h"
#include "llmc/IR/LLMCOps.h"

using namespace mlir;
using namespace mlir::llmc;

#include "llmc/IR/LLMCDialect.cpp.inc"

void LLMCDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "llmc/IR/LLMCOps.cpp.inc"
      >();
  registerTypes();
}
