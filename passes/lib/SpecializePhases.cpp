//===- SpecializePhases.cpp - @forward -> @prefill, @decode, @verify
//-------===//
//
//   @prefill: logits = linear(take_last(h, %logits_rows), W_head)
//             (then the final soft-cap, if the model has one)
//   @decode:  llmc.attention(q, kv_read(cache)) => llmc.paged_attention(q,
//   cache)
//   @verify:  @forward with the cache, logits for every new token
//
//===----------------------------------------------------------------------===//

#include "llmc/IR/LLMCOps.h"
#include "llmc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::llmc {
#define GEN_PASS_DEF_SPECIALIZEPHASES
#include "llmc/Passes/Passes.h.inc"

namespace {

/// The function argument named `name` (llmc.name), or null.
BlockArgument namedArg(func::FuncOp func, StringRef name) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto attr = func.getArgAttrOfType<StringAttr>(i, "llmc.name");
        attr && attr.getValue() == name)
      return func.getArgument(i);
  return {};
}

} // namespace

LinearOp lmHeadOf(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  Value logits = ret.getOperand(0);
  if (auto cap = logits.getDefiningOp<SoftcapOp>())
    logits = cap.getInput();
  return logits.getDefiningOp<LinearOp>();
}

namespace {

void setResultTypes(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  func.setFunctionType(FunctionType::get(
      func.getContext(), func.getBody().front().getArgumentTypes(),
      ret.getOperandTypes()));
}

/// Logits only for the rows in a new `logits_rows` argument.
LogicalResult moveHeadAfterTakeLast(func::FuncOp func) {
  LinearOp head = lmHeadOf(func);
  if (!head)
    return func.emitError("llmc-specialize-phases: the first result of @")
           << func.getSymName() << " is not produced by an LM head llmc.linear";
  OpBuilder b(head);
  auto rowsType = RankedTensorType::get({ShapedType::kDynamic}, b.getI32Type());
  unsigned index = func.getNumArguments();
  func.insertArgument(index, rowsType,
                      b.getDictionaryAttr(b.getNamedAttr(
                          "llmc.name", b.getStringAttr("logits_rows"))),
                      func.getLoc());
  Value rows = func.getArgument(index);
  auto hidden = cast<RankedTensorType>(head.getInput().getType());
  auto taken = b.create<TakeLastOp>(
      head.getLoc(),
      RankedTensorType::get({ShapedType::kDynamic, hidden.getDimSize(1)},
                            hidden.getElementType()),
      head.getInput(), rows);
  head.getInputMutable().assign(taken);
  setResultTypes(func);
  return success();
}

/// Decode: one query per sequence, attention straight over the paged cache.
void usePagedAttention(func::FuncOp func) {
  SmallVector<AttentionOp> attns;
  func.walk([&](AttentionOp op) { attns.push_back(op); });
  for (AttentionOp op : attns) {
    auto read = op.getKey().getDefiningOp<KVReadOp>();
    if (!read || op.getValue().getDefiningOp<KVReadOp>() != read)
      continue;
    OpBuilder b(op);
    auto paged = b.create<PagedAttentionOp>(
        op.getLoc(), op.getType(), op.getQuery(), read.getCache(),
        read.getBlockTables(), read.getContextLens(), op.getSinks(),
        read.getLayerAttr(), op.getScaleAttr(), op.getWindowAttr(),
        op.getSoftcapAttr());
    op.replaceAllUsesWith(paged.getResult());
    op.erase();
    if (read->use_empty())
      read.erase();
  }
  // query_start is meaningless when every sequence has one new token.
  if (BlockArgument qs = namedArg(func, "query_start"); qs && qs.use_empty())
    func.eraseArgument(qs.getArgNumber());
}

struct SpecializePhasesPass : impl::SpecializePhasesBase<SpecializePhasesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward)
      return; // nothing to specialize (already done, or not a model)
    bool hasCache = false;
    forward.walk([&](KVWriteOp) { hasCache = true; });
    if (!hasCache) {
      forward.emitError("llmc-specialize-phases: @forward has no KV cache; "
                        "run llmc-insert-kv-cache first");
      return signalPassFailure();
    }

    OpBuilder b(forward);
    auto clone = [&](StringRef name) {
      auto f = cast<func::FuncOp>(b.clone(*forward));
      f.setSymName(name);
      return f;
    };
    func::FuncOp prefill = clone("prefill");
    func::FuncOp decode = clone("decode");
    func::FuncOp verify = clone("verify");
    forward.erase();

    if (failed(moveHeadAfterTakeLast(prefill)))
      return signalPassFailure();
    usePagedAttention(decode);
    (void)verify; // every new token's logits: @forward as it was
  }
};

} // namespace
} // namespace mlir::llmc
