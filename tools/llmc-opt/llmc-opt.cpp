//===- llmc-opt.cpp - mlir-opt with the llmc dialect and passes
//------------===//

#include "llmc/IR/LLMCDialect.h"
#include "llmc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::llmc::LLMCDialect, mlir::func::FuncDialect>();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::llmc::registerAllLLMCPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "llmc optimizer driver: the llmc dialect and its passes\n",
      registry));
}
