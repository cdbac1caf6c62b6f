//===- PlanMemory.cpp - Liveness-based workspace offsets
//-------------------===//
//
// Every activation has the step's row count (at most T) as its only dynamic
// dimension, so its bytes are rowBytes * T and offsets can be planned once,
// in bytes per token, for every T. First fit in definition order over live
// intervals [definition, last use]; a reshape is a view of its input and
// extends its lifetime.
//
//===----------------------------------------------------------------------===//

#include "llmc/IR/LLMCOps.h"
#include "llmc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <map>

namespace mlir::llmc {
#define GEN_PASS_DEF_PLANMEMORY
#include "llmc/Passes/Passes.h.inc"

namespace {

struct Interval {
  Value root;
  int64_t rowBytes = 0, start = 0, end = 0, offset = -1;
};

/// Bytes of one row of an activation (all dims but the first).
int64_t rowBytes(RankedTensorType t) {
  int64_t n = t.getElementTypeBitWidth() / 8;
  for (int64_t d : t.getShape().drop_front())
    n *= d;
  return n;
}

/// The buffer a value lives in: reshapes are views.
Value storageRoot(Value v) {
  while (auto r = v.getDefiningOp<ReshapeOp>())
    v = r.getInput();
  return v;
}

bool isActivation(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && v.getDefiningOp() && !isa<ParamOp>(v.getDefiningOp());
}

struct PlanMemoryPass : impl::PlanMemoryBase<PlanMemoryPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      plan(func);
  }

  void plan(func::FuncOp func) {
    std::map<Operation *, int64_t> index;
    int64_t n = 0;
    func.walk([&](Operation *op) { index[op] = n++; });

    llvm::MapVector<Value, Interval> intervals;
    func.walk([&](Operation *op) {
      for (Value r : op->getResults()) {
        if (!isActivation(r) || isa<ReshapeOp>(op))
          continue;
        Interval &iv = intervals[r];
        iv.root = r;
        iv.rowBytes = rowBytes(cast<RankedTensorType>(r.getType()));
        iv.start = iv.end = index[op];
      }
    });
    func.walk([&](Operation *op) {
      for (Value operand : op->getOperands()) {
        Value root = storageRoot(operand);
        auto it = intervals.find(root);
        if (it == intervals.end())
          continue;
        // Returned values stay live to the end.
        int64_t use = isa<func::ReturnOp>(op) ? n : index[op];
        it->second.end = std::max(it->second.end, use);
      }
    });

    // First fit: place each buffer at the lowest offset that does not
    // overlap a buffer live at the same time.
    SmallVector<Interval *> placed;
    int64_t peak = 0;
    for (auto &[v, iv] : intervals) {
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (Interval *p : placed)
        if (p->start <= iv.end && iv.start <= p->end)
          busy.push_back({p->offset, p->offset + p->rowBytes});
      llvm::sort(busy);
      int64_t offset = 0;
      for (auto [lo, hi] : busy) {
        if (offset + iv.rowBytes <= lo)
          break;
        offset = std::max(offset, alignTo64(hi));
      }
      iv.offset = offset;
      peak = std::max(peak, offset + iv.rowBytes);
      placed.push_back(&iv);
    }

    Builder b(func.getContext());
    func.walk([&](Operation *op) {
      SmallVector<int64_t> offsets;
      for (Value r : op->getResults()) {
        auto it = intervals.find(r);
        if (it != intervals.end())
          offsets.push_back(it->second.offset);
      }
      if (!offsets.empty())
        op->setAttr("llmc.offsets", b.getDenseI64ArrayAttr(offsets));
    });
    func->setAttr("llmc.workspace",
                  b.getDictionaryAttr(
                      {b.getNamedAttr("per_token", b.getI64IntegerAttr(peak)),
                       b.getNamedAttr("constant", b.getI64IntegerAttr(0))}));
  }

  static int64_t alignTo64(int64_t x) { return (x + 63) / 64 * 64; }
};

} // namespace
} // namespace mlir::llmc
