//===- Serialize.cpp - Record the executable form of each graph
//------------===//

#include "llmc/Passes/Lowering.h"
#include "llmc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::llmc {
#define GEN_PASS_DEF_SERIALIZE
#include "llmc/Passes/Passes.h.inc"

namespace {

struct SerializePass : impl::SerializeBase<SerializePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<LoweredModule> lowered = lowerToGraphs(module);
    if (failed(lowered))
      return signalPassFailure();
    Builder b(&getContext());
    for (const ::llmc::Graph &g : lowered->graphs) {
      auto func = module.lookupSymbol<func::FuncOp>(g.name);
      SmallVector<Attribute> lines;
      for (const std::string &line : describeGraph(g))
        lines.push_back(b.getStringAttr(line));
      func->setAttr("llmc.kernels", b.getArrayAttr(lines));
    }
    SmallVector<Attribute> weights;
    for (const WeightSpec &w : lowered->weights)
      weights.push_back(
          b.getStringAttr(w.name + " : " + ::llmc::dtypeName(w.dtype)));
    module->setAttr("llmc.weights", b.getArrayAttr(weights));
  }
};

} // namespace
} // namespace mlir::llmc
