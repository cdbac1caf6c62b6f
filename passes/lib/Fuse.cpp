//===- Fuse.cpp - Residual+norm, gate/up+SwiGLU, packed Q/K/V -------------===//
//
//   %s = add %x, %r ; %n = rms_norm %s, %w
//       =>  %s, %n = add_rms_norm %x, %r, %w
//   mul(silu(linear(x, Wg)), linear(x, Wu))
//       =>  swiglu(linear(x, [Wg; Wu]))
//   mul(gelu{tanh}(linear(x, Wg)), linear(x, Wu))
//       =>  geglu(linear(x, [Wg; Wu]))
//   mul(silu(expert_linear(x, Wg, e)), expert_linear(x, Wu, e))
//       =>  swiglu(expert_linear(x, [Wg; Wu] per expert, e))
//   mul(silu(slice(y, 0, I)), slice(y, I, I))   (Phi-3's gate_up_proj)
//       =>  swiglu(y)
//   linear(x, Wq), linear(x, Wk), linear(x, Wv)
//       =>  slice x3 (linear(x, [Wq; Wk; Wv]))
//
// A post-norm (Gemma 2's rms_norm of a sublayer's output, before the
// residual add) normalizes a linear's result, not a sum: it stays a plain
// rms_norm, and the add after it fuses with the next pre-norm.
//
//===----------------------------------------------------------------------===//

#include "llmc/IR/LLMCOps.h"
#include "llmc/Passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringExtras.h"

#include <optional>

namespace mlir::llmc {
#define GEN_PASS_DEF_FUSE
#include "llmc/Passes/Passes.h.inc"

namespace {

struct FuseAddRMSNorm : OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RMSNormOp norm,
                                PatternRewriter &rewriter) const override {
    auto add = norm.getInput().getDefiningOp<AddOp>();
    if (!add)
      return failure();
    // The fused op replaces the add, so the norm weight must exist there;
    // params have no operands and can simply move up.
    Operation *weightDef = norm.getWeight().getDefiningOp();
    if (weightDef && weightDef->getBlock() == add->getBlock() &&
        add->isBeforeInBlock(weightDef)) {
      if (!isa<ParamOp>(weightDef))
        return failure();
      rewriter.modifyOpInPlace(weightDef, [&] { weightDef->moveBefore(add); });
    }
    rewriter.setInsertionPoint(add);
    auto fused = rewriter.create<AddRMSNormOp>(
        norm.getLoc(), add.getType(), norm.getType(), add.getLhs(),
        add.getRhs(), norm.getWeight(), norm.getEpsAttr());
    rewriter.replaceOp(add, fused.getSum());
    rewriter.replaceOp(norm, fused.getNormed());
    return success();
  }
};

/// A plain checkpoint weight that can be packed with others (a rank's
/// slice of one is not yet: sources carry no slices).
ParamOp packableParam(Value v) {
  auto p = v.getDefiningOp<ParamOp>();
  if (!p || p.getSources() || p.getQuant() || p.getTransposed() ||
      p.getRopeUnpermuteHeads() || p.getOffset() || p.getShardDim())
    return {};
  return p;
}

/// Whether two GGUF weights convert alike once packed: both F32 (no
/// ggml_type), both the same float type, or both block formats (the pack
/// then takes the widest, packParams).
bool sameGgmlKind(ParamOp a, ParamOp b) {
  auto block = [](ParamOp p) {
    return p.getGgmlType() && ggmlKeptBits(*p.getGgmlType()) <= 8;
  };
  // A K-quant may stay as it is (one format per weight): it packs only with
  // its own type.
  if (nativeKQuant(a) || nativeKQuant(b))
    return a.getGgmlTypeAttr() == b.getGgmlTypeAttr();
  return a.getGgmlTypeAttr() == b.getGgmlTypeAttr() || (block(a) && block(b));
}

/// A param whose rows are the given params' rows, in order (for stacked
/// experts [E, N, K]: each expert's rows are the parts' rows of that
/// expert).
Value packParams(OpBuilder &b, Location loc, ArrayRef<ParamOp> parts) {
  ParamOp front = parts.front();
  auto first = front.getType();
  const int64_t rowDim = first.getRank() - 2 >= 0 ? first.getRank() - 2 : 0;
  int64_t rows = 0;
  SmallVector<StringRef> names;
  for (ParamOp p : parts) {
    rows += p.getType().getDimSize(rowDim);
    names.push_back(p.getName());
  }
  SmallVector<int64_t> shape(first.getShape());
  shape[rowDim] = rows;
  std::string name = llvm::join(names, "+");
  // GGUF block formats may differ between parts (llama.cpp's Q4_K_M keeps
  // some attn_v in Q6_K): the pack takes the one kept with the most bits.
  StringAttr ggml = front.getGgmlTypeAttr();
  for (ParamOp p : parts)
    if (ggml && ggmlKeptBits(p.getGgmlTypeAttr().getValue()) >
                    ggmlKeptBits(ggml.getValue()))
      ggml = p.getGgmlTypeAttr();
  auto packed = b.create<ParamOp>(
      loc, RankedTensorType::get(shape, first.getElementType()),
      b.getStringAttr(name), UnitAttr(), IntegerAttr(),
      b.getStrArrayAttr(names), StringAttr(), StringAttr(), IntegerAttr(), ggml,
      FloatAttr(), IntegerAttr(), DenseI64ArrayAttr());
  return packed;
}

/// Linears of the same input with plain param weights and uniform biases.
bool packable(ArrayRef<LinearOp> linears) {
  LinearOp front = linears.front();
  bool withBias = static_cast<bool>(front.getBias());
  for (LinearOp l : linears) {
    if (!packableParam(l.getWeight()) ||
        !sameGgmlKind(front.getWeight().getDefiningOp<ParamOp>(),
                      l.getWeight().getDefiningOp<ParamOp>()) ||
        static_cast<bool>(l.getBias()) != withBias ||
        (withBias && !packableParam(l.getBias())))
      return false;
  }
  return true;
}

/// One linear over packed weights (and biases); returns it.
LinearOp packLinears(OpBuilder &b, ArrayRef<LinearOp> linears) {
  LinearOp front = linears.front();
  Location loc = front.getLoc();
  SmallVector<ParamOp> weights, biases;
  int64_t width = 0;
  for (LinearOp l : linears) {
    weights.push_back(l.getWeight().getDefiningOp<ParamOp>());
    if (l.getBias())
      biases.push_back(l.getBias().getDefiningOp<ParamOp>());
    width += cast<RankedTensorType>(l.getType()).getShape().back();
  }
  Value w = packParams(b, loc, weights);
  Value bias = biases.empty() ? Value() : packParams(b, loc, biases);
  auto in = cast<RankedTensorType>(front.getType());
  SmallVector<int64_t> shape(in.getShape());
  shape.back() = width;
  return b.create<LinearOp>(loc,
                            RankedTensorType::get(shape, in.getElementType()),
                            front.getInput(), w, bias);
}

/// The gate's activation: silu (SwiGLU) or the tanh GELU (GeGLU).
struct GateActivation {
  Operation *op = nullptr;
  bool gelu = false;
};

GateActivation gateActivation(Value v) {
  if (auto silu = v.getDefiningOp<SiluOp>())
    return {silu, false};
  if (auto gelu = v.getDefiningOp<GeluOp>();
      gelu && gelu.getApproximate() == "tanh")
    return {gelu, true};
  return {};
}

/// mul(act(gate), up) becomes the gated unit of its activation over the
/// packed [gate; up] projection.
void replaceWithGatedUnit(PatternRewriter &rewriter, MulOp mul,
                          const GateActivation &act, Value packed) {
  if (act.gelu)
    rewriter.replaceOpWithNewOp<GeGLUOp>(mul, mul.getType(), packed);
  else
    rewriter.replaceOpWithNewOp<SwiGLUOp>(mul, mul.getType(), packed);
}

/// mul(act(gate), up) where gate and up are single-use OpT ops over one
/// input: what each gate/up fusion starts from.
template <typename OpT> struct GateUp {
  GateActivation act;
  OpT gate, up;
};
template <typename OpT> std::optional<GateUp<OpT>> matchGateUp(MulOp mul) {
  GateActivation act = gateActivation(mul.getLhs());
  if (!act.op || !act.op->hasOneUse())
    return std::nullopt;
  auto gate = act.op->getOperand(0).template getDefiningOp<OpT>();
  auto up = mul.getRhs().getDefiningOp<OpT>();
  if (!gate || !up || !gate->hasOneUse() || !up->hasOneUse() ||
      gate.getInput() != up.getInput())
    return std::nullopt;
  return GateUp<OpT>{act, gate, up};
}

struct FuseGateUp : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    auto m = matchGateUp<LinearOp>(mul);
    if (!m || m->gate.getType() != m->up.getType())
      return failure();
    auto [act, gate, up] = *m;
    SmallVector<LinearOp> parts = {gate, up};
    if (!packable(parts))
      return failure();
    // New params are created with the packed linear, so only the shared
    // input must dominate it: the earlier of the two positions works.
    rewriter.setInsertionPoint(gate->isBeforeInBlock(up) ? gate : up);
    LinearOp packed = packLinears(rewriter, parts);
    rewriter.setInsertionPoint(mul);
    replaceWithGatedUnit(rewriter, mul, act, packed);
    return success();
  }
};

/// A checkpoint that stores gate and up as one projection (Phi-3's
/// gate_up_proj) already has the packed linear:
///   mul(act(slice(y, 0, I)), slice(y, I, I)), y [.., 2I]  =>  swiglu(y).
struct FuseSlicedGateUp : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    auto m = matchGateUp<SliceOp>(mul);
    if (!m)
      return failure();
    auto [act, gate, up] = *m;
    const int64_t width = static_cast<int64_t>(gate.getSize());
    auto packed = dyn_cast<RankedTensorType>(gate.getInput().getType());
    if (!packed || gate.getStart() != 0 || up.getStart() != gate.getSize() ||
        up.getSize() != gate.getSize() || packed.getShape().back() != 2 * width)
      return failure();
    replaceWithGatedUnit(rewriter, mul, act, gate.getInput());
    return success();
  }
};

/// The experts' gate and up projections of the same tokens, as the dense
/// MLP's: mul(silu(expert_linear(x, Wg, e)), expert_linear(x, Wu, e))
///   => swiglu(expert_linear(x, [Wg; Wu] per expert, e)).
struct FuseExpertGateUp : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp mul,
                                PatternRewriter &rewriter) const override {
    auto m = matchGateUp<ExpertLinearOp>(mul);
    if (!m || m->gate.getExperts() != m->up.getExperts() ||
        m->gate.getType() != m->up.getType())
      return failure();
    auto [act, gate, up] = *m;
    ParamOp wg = packableParam(gate.getWeight()),
            wu = packableParam(up.getWeight());
    if (!wg || !wu || !sameGgmlKind(wg, wu))
      return failure();
    Operation *first = gate->isBeforeInBlock(up) ? gate : up;
    rewriter.setInsertionPoint(first);
    Value w = packParams(rewriter, gate.getLoc(), {wg, wu});
    auto type = cast<RankedTensorType>(gate.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.back() *= 2;
    auto packed = rewriter.create<ExpertLinearOp>(
        gate.getLoc(), RankedTensorType::get(shape, type.getElementType()),
        gate.getInput(), w, gate.getExperts());
    rewriter.setInsertionPoint(mul);
    replaceWithGatedUnit(rewriter, mul, act, packed);
    return success();
  }
};

/// Packs the three projections (Q, K, V) of every value that has exactly
/// three packable linear users.
void fuseQKV(Operation *root) {
  SmallVector<Value> inputs;
  root->walk([&](LinearOp l) {
    if (!llvm::is_contained(inputs, l.getInput()))
      inputs.push_back(l.getInput());
  });
  for (Value x : inputs) {
    SmallVector<LinearOp> linears;
    for (Operation *user : x.getUsers())
      if (auto l = dyn_cast<LinearOp>(user); l && l.getInput() == x)
        linears.push_back(l);
    if (linears.size() != 3 || !packable(linears))
      continue;
    llvm::sort(linears,
               [](LinearOp a, LinearOp b) { return a->isBeforeInBlock(b); });
    OpBuilder b(linears.front()); // users of every part come after it
    LinearOp packed = packLinears(b, linears);
    int64_t start = 0;
    for (LinearOp l : linears) {
      int64_t width = cast<RankedTensorType>(l.getType()).getShape().back();
      auto slice = b.create<SliceOp>(l.getLoc(), l.getType(), packed,
                                     b.getI64IntegerAttr(start),
                                     b.getI64IntegerAttr(width));
      l.replaceAllUsesWith(slice.getResult());
      start += width;
    }
    for (LinearOp l : linears)
      l.erase();
  }
}

struct FusePass : impl::FuseBase<FusePass> {
  void runOnOperation() override {
    fuseQKV(getOperation());
    RewritePatternSet patterns(&getContext());
    patterns
        .add<FuseAddRMSNorm, FuseGateUp, FuseSlicedGateUp, FuseExpertGateUp>(
            &getContext());
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::llmc
