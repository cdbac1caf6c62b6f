//===- Quantize.cpp - Weight-only bf16/f16/int8/int4
//-----------------------===//
//
//   llmc.linear %x, %w : f32 weight
//   => bf16/f16: the same linear over `%w : tensor<NxKxbf16>`
//   => int8/int4: llmc.quantized_linear %x, %wq, %scales
//        %wq     = llmc.param {quant, quant_part = "weight", group_size}
//        %scales = llmc.param {quant, quant_part = "scales", group_size}
//
//===----------------------------------------------------------------------===//

#include "llmc/IR/LLMCOps.h"
#include "llmc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::llmc {
#define GEN_PASS_DEF_QUANTIZE
#include "llmc/Passes/Passes.h.inc"

namespace {

bool usedByEmbedding(ParamOp p) {
  return llvm::any_of(p->getUsers(),
                      [](Operation *u) { return isa<EmbeddingOp>(u); });
}

/// The linear producing the function's first result (the logits).
bool isHead(LinearOp l) {
  return llvm::any_of(l->getUsers(),
                      [](Operation *u) { return isa<func::ReturnOp>(u); });
}

ParamOp cloneParam(OpBuilder &b, ParamOp p, RankedTensorType type,
                   StringRef quant, StringRef part, int64_t group) {
  auto q = cast<ParamOp>(b.clone(*p));
  q.getResult().setType(type);
  q.setQuantAttr(b.getStringAttr(quant));
  q.setQuantPartAttr(b.getStringAttr(part));
  q.setGroupSizeAttr(b.getI64IntegerAttr(group));
  return q;
}

struct QuantizePass : impl::QuantizeBase<QuantizePass> {
  using QuantizeBase::QuantizeBase;

  void runOnOperation() override {
    if (mode != "f32" && mode != "bf16" && mode != "f16" && mode != "int8" &&
        mode != "int4") {
      getOperation().emitError("llmc-quantize: mode must be f32, bf16, f16, "
                               "int8 or int4, got '")
          << mode << "'";
      return signalPassFailure();
    }
    if (mode == "int4" && group != 32 && group != 128) {
      getOperation().emitError(
          "llmc-quantize: int4 group must be 32 or 128, got ")
          << static_cast<int64_t>(group); // the Option would print as a char
      return signalPassFailure();
    }
    if (mode == "f32")
      return;
    SmallVector<LinearOp> linears;
    getOperation().walk([&](LinearOp l) { linears.push_back(l); });
    for (LinearOp l : linears) {
      auto w = l.getWeight().getDefiningOp<ParamOp>();
      if (!w || w.getQuant() || !w.getType().getElementType().isF32())
        continue;
      bool head = isHead(l);
      if (!quantizeHead && head)
        continue;
      // A table shared with llmc.embedding is converted for a linear only
      // when asked; the linear then reads a converted copy (cloneParam) and
      // the embedding keeps the original.
      if (!quantizeEmbedding && !(quantizeHead && head) && usedByEmbedding(w))
        continue;
      if (mode == "bf16" || mode == "f16")
        convertFloat(l, w);
      else
        quantizeLinear(l, w);
    }
    if (quantizeEmbedding) {
      SmallVector<EmbeddingOp> lookups;
      getOperation().walk([&](EmbeddingOp e) { lookups.push_back(e); });
      for (EmbeddingOp e : lookups)
        convertTable(e);
    }
  }

  /// A lookup reads one row per token, so the table costs memory, not
  /// time: bf16 (f16 in f16 mode) in float plans, int8 with one scale per
  /// row in int8/int4 plans (int4 would cost too much quality for what it
  /// saves). The lookup dequantizes or widens one row to f32.
  void convertTable(EmbeddingOp e) {
    auto t = e.getTable().getDefiningOp<ParamOp>();
    if (!t || t.getQuant() || !t.getType().getElementType().isF32())
      return;
    OpBuilder b(e);
    if (mode == "int8" || mode == "int4") {
      int64_t v = t.getType().getDimSize(0), d = t.getType().getDimSize(1);
      ParamOp q =
          cloneParam(b, t, RankedTensorType::get({v, d}, b.getIntegerType(8)),
                     "int8", "weight", d);
      ParamOp scales =
          cloneParam(b, t, RankedTensorType::get({v, 1}, b.getF32Type()),
                     "int8", "scales", d);
      auto lookup =
          b.create<QuantizedEmbeddingOp>(e.getLoc(), e.getType(), q, scales,
                                         e.getIds(), b.getI64IntegerAttr(d));
      e.replaceAllUsesWith(lookup.getResult());
      e.erase();
      if (t->use_empty())
        t.erase();
      return;
    }
    Type elt = mode == "f16" ? Type(b.getF16Type()) : Type(b.getBF16Type());
    auto type = RankedTensorType::get(t.getType().getShape(), elt);
    if (t->hasOneUse()) {
      t.getResult().setType(type);
      return;
    }
    OpBuilder at(t);
    auto copy = cast<ParamOp>(at.clone(*t));
    copy.getResult().setType(type);
    e.getTableMutable().assign(copy);
  }

  void convertFloat(LinearOp l, ParamOp w) {
    OpBuilder b(w);
    Type elt = mode == "bf16" ? Type(b.getBF16Type()) : Type(b.getF16Type());
    auto shape = w.getType().getShape();
    if (w->hasOneUse()) {
      w.getResult().setType(RankedTensorType::get(shape, elt));
      return;
    }
    auto copy = cast<ParamOp>(b.clone(*w));
    copy.getResult().setType(RankedTensorType::get(shape, elt));
    l.getWeightMutable().assign(copy);
  }

  void quantizeLinear(LinearOp l, ParamOp w) {
    int64_t n = w.getType().getDimSize(0), k = w.getType().getDimSize(1);
    bool int4 = mode == "int4";
    int64_t g = int4 ? static_cast<int64_t>(group) : k;
    if (int4 && k % g) {
      // Like llama.cpp, fall back to the next wider type rather than to f32:
      // the layer keeps most of the saving and the user is told.
      l.emitWarning() << "llmc-quantize: '" << w.getName() << "' has " << k
                      << " input columns, not a multiple of the int4 group "
                      << g << "; quantized to int8 per row instead";
      int4 = false;
      g = k;
    }
    StringRef kind = int4 ? "int4" : "int8";
    OpBuilder b(l);
    auto i8 = b.getIntegerType(8);
    ParamOp wq =
        cloneParam(b, w, RankedTensorType::get({n, int4 ? k / 2 : k}, i8), kind,
                   "weight", g);
    ParamOp scales =
        cloneParam(b, w, RankedTensorType::get({n, k / g}, b.getF32Type()),
                   kind, "scales", g);
    auto q = b.create<QuantizedLinearOp>(
        l.getLoc(), l.getType(), l.getInput(), wq, scales, l.getBias(),
        b.getI64IntegerAttr(int4 ? 4 : 8), b.getI64IntegerAttr(g));
    l.replaceAllUsesWith(q.getResult());
    l.erase();
    if (w->use_empty())
      w.erase();
  }
};

} // namespace
} // namespace mlir::llmc
