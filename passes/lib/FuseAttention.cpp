//===- FuseAttention.cpp - Decomposed attention -> llmc.attention
//----------===//
//
//   transpose[1,0,2](matmul(softmax(causal_mask(softcap(scale(
//       matmul(transpose[1,0,2](q), transpose[1,0,2](repeat_kv(k)), T)))),
//       sinks),
//     transpose[1,0,2](repeat_kv(v))))
//   => llmc.attention %q, %k, %v, sinks {causal, scale, window, softcap}
// (the mask, the soft-cap and the sinks are optional)
//
//===----------------------------------------------------------------------===//

#include "llmc/IR/LLMCOps.h"
#include "llmc/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::llmc {
#define GEN_PASS_DEF_FUSEATTENTION
#include "llmc/Passes/Passes.h.inc"

namespace {

/// `v` defined by a [1, 0, 2] transpose with no other user: its input.
Value headsMajorInput(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t || !t->hasOneUse() || t.getPermutation() != ArrayRef<int64_t>{1, 0, 2})
    return {};
  return t.getInput();
}

/// Strips a single-use repeat_kv; returns the repeats (1 if none).
std::pair<Value, int64_t> stripRepeat(Value v) {
  if (auto r = v.getDefiningOp<RepeatKVOp>(); r && r->hasOneUse())
    return {r.getInput(), static_cast<int64_t>(r.getRepeats())};
  return {v, 1};
}

template <typename OpTy> OpTy singleUseDef(Value v) {
  auto op = v.getDefiningOp<OpTy>();
  return op && op->hasOneUse() ? op : OpTy();
}

struct FuseAttentionPattern : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp root,
                                PatternRewriter &rewriter) const override {
    if (root.getPermutation() != ArrayRef<int64_t>{1, 0, 2})
      return failure();
    auto pv = singleUseDef<MatmulOp>(root.getInput());
    if (!pv || pv.getTransposeB())
      return failure();
    auto softmax = singleUseDef<SoftmaxOp>(pv.getLhs());
    Value vRepeated = headsMajorInput(pv.getRhs());
    if (!softmax || !vRepeated)
      return failure();

    Value scores = softmax.getInput();
    bool causal = false;
    int64_t window = 0;
    if (auto mask = singleUseDef<CausalMaskOp>(scores)) {
      causal = true;
      window = static_cast<int64_t>(mask.getWindow());
      scores = mask.getInput();
    }
    double softcap = 0.0;
    if (auto c = singleUseDef<SoftcapOp>(scores)) {
      softcap = c.getCap().convertToDouble();
      scores = c.getInput();
    }
    double scale = 1.0;
    if (auto s = singleUseDef<ScaleOp>(scores)) {
      scale = s.getFactor().convertToDouble();
      scores = s.getInput();
    }
    auto qk = singleUseDef<MatmulOp>(scores);
    if (!qk || !qk.getTransposeB() || !(scale > 0))
      return failure();
    Value q = headsMajorInput(qk.getLhs());
    Value kRepeated = headsMajorInput(qk.getRhs());
    if (!q || !kRepeated)
      return failure();
    auto [k, kRepeats] = stripRepeat(kRepeated);
    auto [v, vRepeats] = stripRepeat(vRepeated);
    if (kRepeats != vRepeats)
      return failure();

    rewriter.replaceOpWithNewOp<AttentionOp>(
        root, root.getType(), q, k, v, ValueRange{}, softmax.getSinks(),
        causal ? rewriter.getUnitAttr() : UnitAttr(),
        rewriter.getF64FloatAttr(scale), rewriter.getI64IntegerAttr(window),
        rewriter.getF64FloatAttr(softcap));
    return success();
  }
};

struct FuseAttentionPass : impl::FuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAttentionPattern>(&getContext());
    int64_t before = 0, after = 0;
    getOperation().walk([&](AttentionOp) { ++before; });
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    getOperation().walk([&](AttentionOp) { ++after; });
    numFused += after - before;
  }
};

} // namespace
} // namespace mlir::llmc
