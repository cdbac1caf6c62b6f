//===- LLMCOps.cpp - llmc operation verifiers
//------------------------------===//
//
// Verifiers accept a dynamic dimension wherever a static one would do, and
// compare two dimensions only when both are known.
//
//===----------------------------------------------------------------------===//

#include "llmc/IR/LLMCOps.h"
#include "llmc/support/kquant.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::llmc;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

bool dimsMatch(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

bool known(int64_t d) { return !ShapedType::isDynamic(d); }

std::string dimStr(int64_t d) { return known(d) ? std::to_string(d) : "?"; }

/// Checks `v` has rank `rank`; `what` names the operand in the message.
LogicalResult expectRank(Operation *op, Value v, int64_t rank, StringRef what) {
  int64_t actual = tensorType(v).getRank();
  if (actual != rank)
    return op->emitOpError()
           << what << " must have rank " << rank << ", got rank " << actual;
  return success();
}

LogicalResult expectSameElementType(Operation *op, Value a, Value b,
                                    StringRef whatA, StringRef whatB) {
  Type ea = tensorType(a).getElementType(), eb = tensorType(b).getElementType();
  if (ea != eb)
    return op->emitOpError()
           << whatA << " element type (" << ea << ") must match " << whatB
           << " element type (" << eb << ")";
  return success();
}

/// Last dimension of `v` must match `dim`.
LogicalResult expectLastDim(Operation *op, Value v, int64_t dim, StringRef what,
                            StringRef against) {
  auto t = tensorType(v);
  if (t.getRank() == 0)
    return op->emitOpError() << what << " must not be a scalar";
  int64_t last = t.getShape().back();
  if (!dimsMatch(last, dim))
    return op->emitOpError()
           << what << " last dimension (" << dimStr(last) << ") must match "
           << against << " (" << dimStr(dim) << ")";
  return success();
}

/// Shapes of `a` and `b` agree dimension by dimension.
LogicalResult expectCompatibleShapes(Operation *op, Value a, Value b,
                                     StringRef whatA, StringRef whatB) {
  auto ta = tensorType(a), tb = tensorType(b);
  if (ta.getRank() != tb.getRank())
    return op->emitOpError()
           << whatA << " rank (" << ta.getRank() << ") must match " << whatB
           << " rank (" << tb.getRank() << ")";
  for (auto [i, da, db] : llvm::enumerate(ta.getShape(), tb.getShape()))
    if (!dimsMatch(da, db))
      return op->emitOpError()
             << whatA << " dimension " << i << " (" << dimStr(da)
             << ") must match " << whatB << " dimension " << i << " ("
             << dimStr(db) << ")";
  return success();
}

LogicalResult verifyEps(Operation *op, double eps) {
  if (!(eps > 0.0))
    return op->emitOpError() << "eps must be positive, got " << eps;
  return success();
}

LogicalResult verifyNormOperands(Operation *op, Value input, Value weight,
                                 Value result) {
  if (failed(expectRank(op, weight, 1, "weight")))
    return failure();
  if (failed(expectLastDim(op, input, tensorType(weight).getDimSize(0), "input",
                           "weight size")))
    return failure();
  return expectCompatibleShapes(op, input, result, "input", "result");
}

/// The [T, heads, head_dim] convention of attention operands.
LogicalResult verifyHeads(Operation *op, int64_t qHeads, int64_t kvHeads) {
  if (known(qHeads) && known(kvHeads) && (kvHeads == 0 || qHeads % kvHeads))
    return op->emitOpError()
           << "query heads (" << qHeads << ") must be a multiple of kv heads ("
           << kvHeads << ")";
  return success();
}

LogicalResult verifyScale(Operation *op, double scale) {
  if (!(scale > 0.0))
    return op->emitOpError() << "scale must be positive, got " << scale;
  return success();
}

LogicalResult verifySoftcap(Operation *op, double softcap) {
  if (!std::isfinite(softcap) || softcap < 0.0)
    return op->emitOpError()
           << "softcap must be finite and >= 0 (0 = none), got " << softcap;
  return success();
}

LogicalResult verifyWindow(Operation *op, int64_t window) {
  if (window < 0)
    return op->emitOpError()
           << "window must be >= 0 (0 = no window), got " << window;
  return success();
}

LogicalResult verifyLayer(Operation *op, int64_t layer, KVCacheType cache) {
  if (layer < 0 || layer >= cache.getLayers())
    return op->emitOpError() << "layer " << layer << " is out of range for a "
                             << cache.getLayers() << "-layer cache";
  return success();
}

/// K or V [T, Hkv, D] against the cache's geometry.
LogicalResult verifyAgainstCache(Operation *op, Value kv, KVCacheType cache,
                                 StringRef what) {
  if (failed(expectRank(op, kv, 3, what)))
    return failure();
  auto shape = tensorType(kv).getShape();
  if (!dimsMatch(shape[1], cache.getKvHeads()))
    return op->emitOpError() << what << " heads (" << dimStr(shape[1])
                             << ") must match the cache's kv heads ("
                             << cache.getKvHeads() << ")";
  if (!dimsMatch(shape[2], cache.getHeadDim()))
    return op->emitOpError() << what << " head_dim (" << dimStr(shape[2])
                             << ") must match the cache's head_dim ("
                             << cache.getHeadDim() << ")";
  return success();
}

/// The shared checks of linear and quantized_linear.
LogicalResult verifyLinearShapes(Operation *op, Value input, int64_t outDim,
                                 int64_t inDim, Value bias, Value result) {
  auto in = tensorType(input), res = tensorType(result);
  if (in.getRank() < 1)
    return op->emitOpError() << "input must have rank >= 1";
  if (!dimsMatch(in.getShape().back(), inDim))
    return op->emitOpError()
           << "input features (" << dimStr(in.getShape().back())
           << ") must match weight input features (" << dimStr(inDim) << ")";
  if (bias) {
    if (failed(expectRank(op, bias, 1, "bias")))
      return failure();
    int64_t b = tensorType(bias).getDimSize(0);
    if (!dimsMatch(b, outDim))
      return op->emitOpError() << "bias size (" << dimStr(b)
                               << ") must match weight output features ("
                               << dimStr(outDim) << ")";
  }
  if (res.getRank() != in.getRank())
    return op->emitOpError()
           << "result rank (" << res.getRank() << ") must match input rank ("
           << in.getRank() << ")";
  for (int64_t i = 0; i + 1 < in.getRank(); ++i)
    if (!dimsMatch(in.getDimSize(i), res.getDimSize(i)))
      return op->emitOpError()
             << "result dimension " << i << " (" << dimStr(res.getDimSize(i))
             << ") must match input dimension " << i << " ("
             << dimStr(in.getDimSize(i)) << ")";
  if (!dimsMatch(res.getShape().back(), outDim))
    return op->emitOpError()
           << "result features (" << dimStr(res.getShape().back())
           << ") must match weight output features (" << dimStr(outDim) << ")";
  return success();
}

} // namespace

#define GET_OP_CLASSES
#include "llmc/IR/LLMCOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Weights and decomposed ops
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError() << "name must not be empty";
  auto type = getResult().getType();
  if (!type.hasStaticShape())
    return emitOpError() << "weights must have a static shape, got " << type;
  if (getTransposed() && type.getRank() != 2 && type.getRank() != 3)
    return emitOpError() << "transposed requires a 2-D weight (or stacked "
                            "experts, each transposed), got rank "
                         << type.getRank();
  if (auto q = getQuant()) {
    if (*q != "int8" && *q != "int4" && *q != "mxfp4" &&
        !::llmc::kquant::formatNamed(q->str()))
      return emitOpError() << "quant must be \"int8\", \"int4\", \"mxfp4\", "
                              "\"q4_k\", \"q5_k\" or \"q6_k\", got \""
                           << *q << "\"";
    if (*q == "mxfp4" && (!getGroupSize() || *getGroupSize() != 32))
      return emitOpError() << "mxfp4 has groups of 32";
    if (::llmc::kquant::formatNamed(q->str()) &&
        (!getGroupSize() || *getGroupSize() != ::llmc::kquant::kBlock))
      return emitOpError() << *q << " has groups of 256";
    if (!getQuantPart() ||
        (*getQuantPart() != "weight" && *getQuantPart() != "scales"))
      return emitOpError()
             << "quant needs quant_part = \"weight\" or \"scales\"";
    if (!getGroupSize() || static_cast<int64_t>(*getGroupSize()) <= 0)
      return emitOpError() << "quant needs a positive group_size";
  }
  if (auto sources = getSources())
    if (sources->empty())
      return emitOpError() << "sources must not be empty";
  if (getShardDim().has_value() != getShardStarts().has_value())
    return emitOpError() << "shard_dim and shard_starts go together";
  if (auto dim = getShardDim()) {
    if (static_cast<int64_t>(*dim) < 0 ||
        static_cast<int64_t>(*dim) >= type.getRank())
      return emitOpError() << "shard_dim " << *dim << " is not a dimension of "
                           << type;
    ArrayRef<int64_t> starts = *getShardStarts();
    if (starts.empty() ||
        llvm::any_of(starts, [](int64_t s) { return s < -1; }))
      return emitOpError() << "shard_starts must be non-negative (or -1: "
                              "zeros), one run or more per rank";
  }
  if (auto offset = getOffset()) {
    if (!std::isfinite(offset->convertToDouble()))
      return emitOpError() << "offset must be finite";
    if (getQuant() || getSources())
      return emitOpError()
             << "offset applies to a plain weight (no quant, no sources)";
  }
  auto perExpert = [](StringRef n) { return n.contains("{e}"); };
  bool expertNames = perExpert(getName());
  if (auto sources = getSources())
    expertNames = expertNames || llvm::any_of(*sources, [&](Attribute a) {
                    return perExpert(cast<StringAttr>(a).getValue());
                  });
  if (expertNames && type.getRank() != 3)
    return emitOpError() << "a weight named per expert ({e}) stacks the "
                            "experts: it must be [experts, rows, cols], got "
                         << type;
  if (auto h = getRopeUnpermuteHeads()) {
    std::optional<int64_t> heads = static_cast<int64_t>(*h);
    if (*heads <= 0 || type.getRank() < 1 || type.getDimSize(0) % *heads)
      return emitOpError() << "rope_unpermute_heads (" << *heads
                           << ") must divide the weight's rows ("
                           << type.getDimSize(0) << ")";
  }
  return success();
}

LogicalResult EmbeddingOp::verify() {
  if (failed(expectRank(*this, getTable(), 2, "table")))
    return failure();
  auto ids = tensorType(getIds()), res = tensorType(getResult());
  if (res.getRank() != ids.getRank() + 1)
    return emitOpError() << "result rank (" << res.getRank()
                         << ") must be ids rank + 1 (" << ids.getRank() + 1
                         << ")";
  if (failed(expectLastDim(*this, getResult(),
                           tensorType(getTable()).getDimSize(1), "result",
                           "table width")))
    return failure();
  // A bf16/f16 table widens to f32 rows as it is read.
  Type table = tensorType(getTable()).getElementType();
  if (tensorType(getResult()).getElementType().isF32() &&
      (table.isBF16() || table.isF16()))
    return success();
  return expectSameElementType(*this, getResult(), getTable(), "result",
                               "table");
}

LogicalResult RMSNormOp::verify() {
  if (failed(verifyEps(*this, getEps().convertToDouble())))
    return failure();
  return verifyNormOperands(*this, getInput(), getWeight(), getResult());
}

LogicalResult LayerNormOp::verify() {
  if (failed(verifyEps(*this, getEps().convertToDouble())))
    return failure();
  if (failed(expectCompatibleShapes(*this, getBias(), getWeight(), "bias",
                                    "weight")))
    return failure();
  return verifyNormOperands(*this, getInput(), getWeight(), getResult());
}

LogicalResult LinearOp::verify() {
  if (failed(expectRank(*this, getWeight(), 2, "weight")))
    return failure();
  auto w = tensorType(getWeight());
  return verifyLinearShapes(*this, getInput(), w.getDimSize(0), w.getDimSize(1),
                            getBias(), getResult());
}

LogicalResult RopeOp::verify() {
  if (failed(expectRank(*this, getInput(), 3, "input")))
    return failure();
  if (failed(expectRank(*this, getPositions(), 1, "positions")))
    return failure();
  if (failed(expectCompatibleShapes(*this, getInput(), getResult(), "input",
                                    "result")))
    return failure();
  auto in = tensorType(getInput());
  if (!dimsMatch(in.getDimSize(0), tensorType(getPositions()).getDimSize(0)))
    return emitOpError() << "positions ("
                         << dimStr(tensorType(getPositions()).getDimSize(0))
                         << ") must match tokens (" << dimStr(in.getDimSize(0))
                         << ")";
  int64_t rot = static_cast<int64_t>(getRotaryDim()),
          headDim = in.getDimSize(2);
  if (rot <= 0 || rot % 2 || (known(headDim) && rot > headDim))
    return emitOpError() << "rotary_dim (" << rot
                         << ") must be even, positive and at most head_dim ("
                         << dimStr(headDim) << ")";
  if (!(getTheta().convertToDouble() > 0.0))
    return emitOpError() << "theta must be positive";
  if (getStyle() != "half" && getStyle() != "interleaved")
    return emitOpError() << "style must be \"half\" or \"interleaved\", got \""
                         << getStyle() << "\"";
  if (auto scaling = getScaling()) {
    auto type = scaling->getAs<StringAttr>("type");
    if (!type)
      return emitOpError() << "scaling needs a string 'type'";
    if (!llvm::is_contained(
            {"linear", "dynamic", "llama3", "yarn", "freq_factors", "longrope"},
            type.getValue()))
      return emitOpError() << "unsupported rope scaling type '"
                           << type.getValue()
                           << "' (supported: linear, dynamic, llama3, yarn, "
                              "freq_factors, longrope)";
    if (type.getValue() == "longrope") {
      for (StringRef key : {"short_factor", "long_factor"}) {
        auto factors = scaling->getAs<DenseF64ArrayAttr>(key);
        if (!factors || static_cast<int64_t>(factors.size()) != rot / 2 ||
            llvm::any_of(factors.asArrayRef(),
                         [](double f) { return !(f > 0); }))
          return emitOpError()
                 << "rope scaling 'longrope' needs '" << key << "': " << rot / 2
                 << " positive values, one per rotary pair";
      }
      auto original =
          scaling->getAs<IntegerAttr>("original_max_position_embeddings");
      if (!original || original.getInt() <= 0)
        return emitOpError() << "rope scaling 'longrope' needs a positive "
                                "'original_max_position_embeddings' (where "
                                "the long factors take over)";
      auto attention = scaling->getAs<FloatAttr>("attention_factor");
      if (!attention || !(attention.getValueAsDouble() > 0.0))
        return emitOpError()
               << "rope scaling 'longrope' needs a positive 'attention_factor'";
    }
    if (type.getValue() == "freq_factors") {
      auto factors = scaling->getAs<DenseF64ArrayAttr>("factors");
      if (!factors || static_cast<int64_t>(factors.size()) != rot / 2 ||
          llvm::any_of(factors.asArrayRef(), [](double f) { return !(f > 0); }))
        return emitOpError()
               << "rope scaling 'freq_factors' needs 'factors': " << rot / 2
               << " positive values, one per rotary pair";
    }
    auto factor = scaling->getAs<FloatAttr>("factor");
    if (!factor || !(factor.getValueAsDouble() > 0.0))
      return emitOpError() << "rope scaling '" << type.getValue()
                           << "' needs a positive 'factor'";
  }
  return success();
}

LogicalResult MatmulOp::verify() {
  auto a = tensorType(getLhs()), b = tensorType(getRhs()),
       c = tensorType(getResult());
  if (a.getRank() < 2 || a.getRank() != b.getRank() ||
      c.getRank() != a.getRank())
    return emitOpError() << "operands and result must have the same rank >= 2"
                         << ", got " << a.getRank() << ", " << b.getRank()
                         << " and " << c.getRank();
  int64_t r = a.getRank();
  for (int64_t i = 0; i + 2 < r; ++i)
    if (!dimsMatch(a.getDimSize(i), b.getDimSize(i)) ||
        !dimsMatch(a.getDimSize(i), c.getDimSize(i)))
      return emitOpError() << "batch dimension " << i << " must agree";
  int64_t m = a.getDimSize(r - 2), k = a.getDimSize(r - 1);
  int64_t kb = getTransposeB() ? b.getDimSize(r - 1) : b.getDimSize(r - 2);
  int64_t n = getTransposeB() ? b.getDimSize(r - 2) : b.getDimSize(r - 1);
  if (!dimsMatch(k, kb))
    return emitOpError() << "contraction dimensions differ: lhs has "
                         << dimStr(k) << ", rhs has " << dimStr(kb);
  if (!dimsMatch(c.getDimSize(r - 2), m) || !dimsMatch(c.getDimSize(r - 1), n))
    return emitOpError() << "result must be [.., " << dimStr(m) << ", "
                         << dimStr(n) << "]";
  return success();
}

LogicalResult ScaleOp::verify() {
  double f = getFactor().convertToDouble();
  if (!std::isfinite(f))
    return emitOpError() << "factor must be finite";
  return success();
}

LogicalResult SoftcapOp::verify() {
  double cap = getCap().convertToDouble();
  if (!std::isfinite(cap) || !(cap > 0))
    return emitOpError() << "cap must be finite and positive, got " << cap;
  return success();
}

/// Attention sinks: one logit per query head.
static LogicalResult verifySinks(Operation *op, Value sinks, int64_t heads) {
  if (!sinks)
    return success();
  if (failed(expectRank(op, sinks, 1, "sinks")))
    return failure();
  if (!dimsMatch(tensorType(sinks).getDimSize(0), heads))
    return op->emitOpError()
           << "sinks must hold one logit per query head (" << dimStr(heads)
           << "), got " << dimStr(tensorType(sinks).getDimSize(0));
  return success();
}

LogicalResult SoftmaxOp::verify() {
  if (failed(expectCompatibleShapes(*this, getInput(), getResult(), "input",
                                    "result")))
    return failure();
  int64_t rank = tensorType(getInput()).getRank();
  if (getSinks() && rank != 3)
    return emitOpError() << "sinks need [heads, queries, keys] scores, got "
                         << "rank " << rank;
  if (getSinks() && failed(verifySinks(*this, getSinks(),
                                       tensorType(getInput()).getDimSize(0))))
    return failure();
  if (static_cast<int64_t>(getAxis()) != -1 &&
      static_cast<int64_t>(getAxis()) != rank - 1)
    return emitOpError() << "only the last axis is supported, got axis "
                         << static_cast<int64_t>(getAxis()) << " of a rank-"
                         << rank << " tensor";
  return success();
}

LogicalResult CausalMaskOp::verify() {
  if (failed(expectRank(*this, getInput(), 3, "scores")))
    return failure();
  auto s = tensorType(getInput());
  if (known(s.getDimSize(1)) && known(s.getDimSize(2)) &&
      s.getDimSize(1) > s.getDimSize(2))
    return emitOpError() << "queries (" << s.getDimSize(1)
                         << ") must not outnumber keys (" << s.getDimSize(2)
                         << ")";
  return verifyWindow(*this, static_cast<int64_t>(getWindow()));
}

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError() << "approximate must be \"none\" or \"tanh\", got \""
                         << getApproximate() << "\"";
  return success();
}

LogicalResult ReshapeOp::verify() {
  auto in = tensorType(getInput()), out = tensorType(getResult());
  if (in.getElementType() != out.getElementType())
    return emitOpError() << "element type must not change";
  if (out.getNumDynamicDims() > 1)
    return emitOpError() << "at most one result dimension may be dynamic, got "
                         << out.getNumDynamicDims();
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError() << "element count changes from " << in.getNumElements()
                         << " to " << out.getNumElements();
  if (in.hasStaticShape() && !out.hasStaticShape()) {
    int64_t staticPart = 1;
    for (int64_t d : out.getShape())
      if (known(d))
        staticPart *= d;
    if (staticPart == 0 || in.getNumElements() % staticPart)
      return emitOpError() << "element count " << in.getNumElements()
                           << " is not divisible by the static result dims ("
                           << staticPart << ")";
  }
  return success();
}

LogicalResult TransposeOp::verify() {
  auto in = tensorType(getInput()), out = tensorType(getResult());
  ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != in.getRank() ||
      out.getRank() != in.getRank())
    return emitOpError() << "permutation size (" << perm.size()
                         << ") must equal the rank (" << in.getRank() << ")";
  llvm::SmallVector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen[p])
      return emitOpError() << "permutation must be a permutation of [0, "
                           << in.getRank() << ")";
    seen[p] = true;
  }
  for (auto [i, p] : llvm::enumerate(perm))
    if (!dimsMatch(out.getDimSize(i), in.getDimSize(p)))
      return emitOpError() << "result dimension " << i << " ("
                           << dimStr(out.getDimSize(i))
                           << ") must equal input dimension " << p << " ("
                           << dimStr(in.getDimSize(p)) << ")";
  return success();
}

LogicalResult RepeatKVOp::verify() {
  if (static_cast<int64_t>(getRepeats()) < 1)
    return emitOpError() << "repeats must be >= 1, got "
                         << static_cast<int64_t>(getRepeats());
  if (failed(expectRank(*this, getInput(), 3, "input")) ||
      failed(expectRank(*this, getResult(), 3, "result")))
    return failure();
  auto in = tensorType(getInput()), out = tensorType(getResult());
  int64_t heads = in.getDimSize(1);
  if (known(heads) &&
      !dimsMatch(out.getDimSize(1), heads * static_cast<int64_t>(getRepeats())))
    return emitOpError() << "result heads (" << dimStr(out.getDimSize(1))
                         << ") must be input heads (" << heads
                         << ") times repeats ("
                         << static_cast<int64_t>(getRepeats()) << ")";
  if (!dimsMatch(in.getDimSize(0), out.getDimSize(0)) ||
      !dimsMatch(in.getDimSize(2), out.getDimSize(2)))
    return emitOpError() << "tokens and head_dim must not change";
  return success();
}

LogicalResult SliceOp::verify() {
  auto in = tensorType(getInput()), out = tensorType(getResult());
  if (in.getRank() < 1 || in.getRank() != out.getRank())
    return emitOpError() << "input and result must have the same rank >= 1";
  int64_t start = static_cast<int64_t>(getStart()),
          size = static_cast<int64_t>(getSize());
  int64_t width = in.getShape().back();
  if (start < 0 || size <= 0 || (known(width) && start + size > width))
    return emitOpError() << "slice [" << start << ", " << start + size
                         << ") is out of bounds of width " << dimStr(width);
  if (!dimsMatch(out.getShape().back(), size))
    return emitOpError() << "result width (" << dimStr(out.getShape().back())
                         << ") must equal size (" << size << ")";
  for (int64_t i = 0; i + 1 < in.getRank(); ++i)
    if (!dimsMatch(in.getDimSize(i), out.getDimSize(i)))
      return emitOpError() << "only the last dimension may change";
  return success();
}

LogicalResult TakeLastOp::verify() {
  if (failed(expectRank(*this, getInput(), 2, "input")) ||
      failed(expectRank(*this, getResult(), 2, "result")))
    return failure();
  int64_t rows = tensorType(getResult()).getDimSize(0);
  if (auto indices = getIndices()) {
    if (failed(expectRank(*this, indices, 1, "indices")))
      return failure();
    int64_t n = tensorType(indices).getDimSize(0);
    if (!dimsMatch(rows, n))
      return emitOpError() << "result rows (" << dimStr(rows)
                           << ") must match indices (" << dimStr(n) << ")";
  } else if (!dimsMatch(rows, 1)) {
    return emitOpError() << "result must have one row without indices, got "
                         << dimStr(rows);
  }
  return expectLastDim(*this, getResult(), tensorType(getInput()).getDimSize(1),
                       "result", "input width");
}

//===----------------------------------------------------------------------===//
// Fused, cached and quantized ops
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  for (auto [v, what] :
       {std::pair{getQuery(), "query"}, std::pair{getKey(), "key"},
        std::pair{getValue(), "value"}, std::pair{getResult(), "result"}})
    if (failed(expectRank(*this, v, 3, what)))
      return failure();
  auto q = tensorType(getQuery()), k = tensorType(getKey()),
       v = tensorType(getValue()), o = tensorType(getResult());
  if (failed(verifyHeads(*this, q.getDimSize(1), k.getDimSize(1))))
    return failure();
  if (!dimsMatch(k.getDimSize(1), v.getDimSize(1)))
    return emitOpError() << "key heads (" << dimStr(k.getDimSize(1))
                         << ") must match value heads ("
                         << dimStr(v.getDimSize(1)) << ")";
  if (!dimsMatch(q.getDimSize(2), k.getDimSize(2)))
    return emitOpError() << "query head_dim (" << dimStr(q.getDimSize(2))
                         << ") must match key head_dim ("
                         << dimStr(k.getDimSize(2)) << ")";
  if (!dimsMatch(k.getDimSize(0), v.getDimSize(0)))
    return emitOpError() << "key and value must have the same length";
  if (!dimsMatch(o.getDimSize(0), q.getDimSize(0)) ||
      !dimsMatch(o.getDimSize(1), q.getDimSize(1)) ||
      !dimsMatch(o.getDimSize(2), v.getDimSize(2)))
    return emitOpError() << "result must be [query tokens, query heads, value "
                            "head_dim]";
  if (failed(verifyScale(*this, getScale().convertToDouble())))
    return failure();
  if (static_cast<int64_t>(getWindow()) != 0 && !getCausal())
    return emitOpError() << "a window requires causal attention";
  if (failed(verifySoftcap(*this, getSoftcap().convertToDouble())) ||
      failed(verifySinks(*this, getSinks(), q.getDimSize(1))))
    return failure();
  if (!getSegments().empty()) {
    if (getSegments().size() != 2)
      return emitOpError() << "segments must be (query_start, context_lens), "
                              "got "
                           << getSegments().size() << " operands";
    for (Value seg : getSegments())
      if (failed(expectRank(*this, seg, 1, "segments")))
        return failure();
  }
  return verifyWindow(*this, static_cast<int64_t>(getWindow()));
}

LogicalResult KVWriteOp::verify() {
  auto cache = getCache().getType();
  if (cache != getResult().getType())
    return emitOpError() << "result cache type must equal the input cache type";
  if (failed(verifyLayer(*this, static_cast<int64_t>(getLayer()), cache)) ||
      failed(verifyAgainstCache(*this, getKey(), cache, "key")) ||
      failed(verifyAgainstCache(*this, getValue(), cache, "value")) ||
      failed(expectRank(*this, getSlots(), 1, "slots")))
    return failure();
  int64_t t = tensorType(getKey()).getDimSize(0);
  if (!dimsMatch(t, tensorType(getSlots()).getDimSize(0)) ||
      !dimsMatch(t, tensorType(getValue()).getDimSize(0)))
    return emitOpError() << "key, value and slots must cover the same tokens";
  return success();
}

LogicalResult KVReadOp::verify() {
  auto cache = getCache().getType();
  if (failed(verifyLayer(*this, static_cast<int64_t>(getLayer()), cache)) ||
      failed(verifyAgainstCache(*this, getKey(), cache, "key")) ||
      failed(verifyAgainstCache(*this, getValue(), cache, "value")) ||
      failed(expectRank(*this, getBlockTables(), 2, "block_tables")) ||
      failed(expectRank(*this, getContextLens(), 1, "context_lens")))
    return failure();
  return success();
}

LogicalResult PagedAttentionOp::verify() {
  auto cache = getCache().getType();
  if (failed(verifyLayer(*this, static_cast<int64_t>(getLayer()), cache)) ||
      failed(expectRank(*this, getQuery(), 3, "query")) ||
      failed(expectRank(*this, getBlockTables(), 2, "block_tables")) ||
      failed(expectRank(*this, getContextLens(), 1, "context_lens")))
    return failure();
  auto q = tensorType(getQuery());
  if (failed(verifyHeads(*this, q.getDimSize(1), cache.getKvHeads())))
    return failure();
  if (!dimsMatch(q.getDimSize(2), cache.getHeadDim()))
    return emitOpError() << "query head_dim (" << dimStr(q.getDimSize(2))
                         << ") must match the cache's head_dim ("
                         << cache.getHeadDim() << ")";
  int64_t b = q.getDimSize(0);
  if (!dimsMatch(b, tensorType(getBlockTables()).getDimSize(0)) ||
      !dimsMatch(b, tensorType(getContextLens()).getDimSize(0)))
    return emitOpError() << "query, block_tables and context_lens must cover "
                            "the same sequences";
  if (failed(expectCompatibleShapes(*this, getQuery(), getResult(), "query",
                                    "result")))
    return failure();
  if (failed(verifyScale(*this, getScale().convertToDouble())) ||
      failed(verifySoftcap(*this, getSoftcap().convertToDouble())) ||
      failed(verifySinks(*this, getSinks(), q.getDimSize(1))))
    return failure();
  return verifyWindow(*this, static_cast<int64_t>(getWindow()));
}

namespace {
LogicalResult verifyGated(Operation *op, Value input, Value result) {
  auto in = tensorType(input), out = tensorType(result);
  if (in.getRank() < 1 || in.getRank() != out.getRank())
    return op->emitOpError() << "input and result must have the same rank >= 1";
  int64_t width = in.getShape().back();
  if (known(width) && width % 2)
    return op->emitOpError()
           << "input width (" << width << ") must be even: gate and up halves";
  if (known(width) && !dimsMatch(out.getShape().back(), width / 2))
    return op->emitOpError()
           << "result width (" << dimStr(out.getShape().back())
           << ") must be half the input width (" << width << ")";
  return success();
}
} // namespace

LogicalResult SwiGLUOp::verify() {
  return verifyGated(*this, getInput(), getResult());
}

LogicalResult GeGLUOp::verify() {
  return verifyGated(*this, getInput(), getResult());
}

LogicalResult ClampedSwiGLUOp::verify() {
  const double limit = getLimit().convertToDouble(),
               alpha = getAlpha().convertToDouble();
  if (!(limit > 0) || !std::isfinite(limit) || !std::isfinite(alpha))
    return emitOpError() << "limit must be finite and > 0 and alpha finite, "
                         << "got " << limit << " and " << alpha;
  return verifyGated(*this, getInput(), getResult());
}

LogicalResult ExpertBiasOp::verify() {
  auto biasRank = tensorType(getBias()).getRank();
  if (biasRank != 2 && biasRank != 3)
    return emitOpError() << "bias must be [E, N] (or [E, a, b], a * b = N), "
                            "got rank "
                         << biasRank;
  if (failed(expectRank(*this, getInput(), 3, "input")) ||
      failed(expectRank(*this, getExperts(), 2, "experts")) ||
      failed(expectCompatibleShapes(*this, getInput(), getResult(), "input",
                                    "result")))
    return failure();
  auto in = tensorType(getInput()), bias = tensorType(getBias()),
       ids = tensorType(getExperts());
  int64_t perExpert =
      bias.getDimSize(1) * (biasRank == 3 ? bias.getDimSize(2) : int64_t(1));
  if (!dimsMatch(in.getDimSize(2), perExpert))
    return emitOpError() << "bias rows (" << dimStr(perExpert)
                         << ") must match the input's width ("
                         << dimStr(in.getDimSize(2)) << ")";
  if (!dimsMatch(in.getDimSize(1), ids.getDimSize(1)) ||
      !dimsMatch(in.getDimSize(0), ids.getDimSize(0)))
    return emitOpError() << "input must be [tokens, k, N] for experts "
                            "[tokens, k]";
  return success();
}

/// The scales of a quantized linear: f32 (format "int"), E8M0 bytes as i8
/// (format "mxfp4", bits 4, groups of 32), or a K-quant's super-block
/// headers as i8 (format "q4_k", "q5_k", "q6_k": bits 4, 5, 6, groups of
/// 256).
static LogicalResult verifyQuantFormat(Operation *op, StringRef format,
                                       int64_t bits, int64_t group,
                                       Value scales) {
  Type elt = tensorType(scales).getElementType();
  auto kq = ::llmc::kquant::formatNamed(format.str());
  if (op->hasAttr("int8_activations") && format != "mxfp4" && !kq)
    return op->emitOpError() << "int8_activations applies to mxfp4 and "
                                "K-quant weights (int weights always round "
                                "them)";
  if (format == "int")
    return elt.isF32() ? success()
                       : op->emitOpError() << "int scales must be f32";
  if (kq) {
    if (bits != ::llmc::kquant::layout(*kq).bits ||
        group != ::llmc::kquant::kBlock || !elt.isInteger(8))
      return op->emitOpError()
             << format << " needs bits " << ::llmc::kquant::layout(*kq).bits
             << ", group_size 256 and i8 (header) scales";
    return success();
  }
  if (format != "mxfp4")
    return op->emitOpError() << "format must be \"int\", \"mxfp4\", "
                                "\"q4_k\", \"q5_k\" or \"q6_k\", got \""
                             << format << "\"";
  if (bits != 4 || group != 32 || !elt.isInteger(8))
    return op->emitOpError() << "mxfp4 needs bits 4, group_size 32 and i8 "
                                "(E8M0) scales";
  return success();
}

LogicalResult AddRMSNormOp::verify() {
  if (failed(verifyEps(*this, getEps().convertToDouble())))
    return failure();
  if (failed(expectCompatibleShapes(*this, getInput(), getResidual(), "input",
                                    "residual")) ||
      failed(
          expectCompatibleShapes(*this, getInput(), getSum(), "input", "sum")))
    return failure();
  return verifyNormOperands(*this, getInput(), getWeight(), getNormed());
}

/// The input features a quantized weight's last dimension holds, and its
/// scales' last dimension: bytes of codes and of headers for a K-quant.
static LogicalResult quantK(Operation *op, StringRef format, int64_t bits,
                            int64_t group, int64_t lastDim, int64_t &k,
                            int64_t &scaleCols) {
  if (auto kq = ::llmc::kquant::formatNamed(format.str())) {
    const ::llmc::kquant::Layout l = ::llmc::kquant::layout(*kq);
    if (lastDim % l.codeBytes)
      return op->emitOpError()
             << "the weight's last dimension (" << lastDim << ") is not whole "
             << format << " blocks (" << l.codeBytes << " bytes each)";
    k = lastDim / l.codeBytes * ::llmc::kquant::kBlock;
    scaleCols = lastDim / l.codeBytes * l.headerBytes;
    return success();
  }
  k = bits == 4 ? lastDim * 2 : lastDim;
  scaleCols = group > 0 ? k / group : 0;
  return success();
}

LogicalResult QuantizedEmbeddingOp::verify() {
  if (failed(expectRank(*this, getTable(), 2, "table")) ||
      failed(expectRank(*this, getScales(), 2, "scales")))
    return failure();
  auto t = tensorType(getTable()), s = tensorType(getScales());
  int64_t v = t.getDimSize(0), d = t.getDimSize(1);
  int64_t group = static_cast<int64_t>(getGroupSize());
  int64_t scaleCols = group > 0 ? d / group : 0;
  if (auto kq = ::llmc::kquant::formatNamed(getFormat().str())) {
    if (!s.getElementType().isInteger(8))
      return emitOpError() << getFormat() << " needs i8 (header) scales";
    if (failed(quantK(*this, getFormat(), ::llmc::kquant::layout(*kq).bits,
                      group, d, d, scaleCols)))
      return failure();
  } else if (getFormat() != "int") {
    return emitOpError() << "format must be \"int\", \"q4_k\", \"q5_k\" or "
                            "\"q6_k\", got \""
                         << getFormat() << "\"";
  } else if (!s.getElementType().isF32()) {
    return emitOpError() << "int scales must be f32";
  }
  if (group <= 0 || d % group)
    return emitOpError() << "group_size (" << group
                         << ") must divide the table width (" << d << ")";
  if (!dimsMatch(s.getDimSize(0), v) || !dimsMatch(s.getDimSize(1), scaleCols))
    return emitOpError() << "scales must be [" << v << ", " << scaleCols
                         << "], got [" << dimStr(s.getDimSize(0)) << ", "
                         << dimStr(s.getDimSize(1)) << "]";
  auto ids = tensorType(getIds()), res = tensorType(getResult());
  if (res.getRank() != ids.getRank() + 1)
    return emitOpError() << "result rank (" << res.getRank()
                         << ") must be ids rank + 1 (" << ids.getRank() + 1
                         << ")";
  if (!res.getElementType().isF32())
    return emitOpError() << "result must be f32, got " << res.getElementType();
  return expectLastDim(*this, getResult(), d, "result", "table width");
}

LogicalResult QuantizedLinearOp::verify() {
  if (failed(expectRank(*this, getWeight(), 2, "weight")) ||
      failed(expectRank(*this, getScales(), 2, "scales")))
    return failure();
  int64_t bits = static_cast<int64_t>(getBits()),
          group = static_cast<int64_t>(getGroupSize());
  if (bits < 4 || bits > 8 || bits == 7)
    return emitOpError() << "bits must be 8, 6, 5 or 4, got " << bits;
  if (failed(verifyQuantFormat(*this, getFormat(), bits, group, getScales())))
    return failure();
  auto w = tensorType(getWeight()), s = tensorType(getScales());
  int64_t n = w.getDimSize(0), k, scaleCols;
  if (failed(quantK(*this, getFormat(), bits, group, w.getDimSize(1), k,
                    scaleCols)))
    return failure();
  if (group <= 0 || k % group)
    return emitOpError() << "group_size (" << group
                         << ") must divide the input features (" << k << ")";
  if (!dimsMatch(s.getDimSize(0), n) || !dimsMatch(s.getDimSize(1), scaleCols))
    return emitOpError() << "scales must be [" << n << ", " << scaleCols
                         << "], got [" << dimStr(s.getDimSize(0)) << ", "
                         << dimStr(s.getDimSize(1)) << "]";
  return verifyLinearShapes(*this, getInput(), n, k, getBias(), getResult());
}

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

namespace {

/// experts [T, k] (i32) against the tokens and slots of `rows` [T, k, ...]
/// or [T, ...]; returns k (dynamic if unknown) through `slots`.
LogicalResult verifyExpertIds(Operation *op, Value experts, int64_t &slots) {
  if (failed(expectRank(op, experts, 2, "experts")))
    return failure();
  slots = tensorType(experts).getDimSize(1);
  return success();
}

/// The shared checks of expert_linear and quantized_expert_linear: W holds
/// `numExperts` experts of [outDim, inDim].
LogicalResult verifyExpertLinear(Operation *op, Value input, Value experts,
                                 Value result, int64_t outDim, int64_t inDim) {
  int64_t k;
  if (failed(verifyExpertIds(op, experts, k)))
    return failure();
  auto in = tensorType(input), res = tensorType(result);
  if (in.getRank() != 2 && in.getRank() != 3)
    return op->emitOpError()
           << "input must be [T, K] or [T, k, K], got rank " << in.getRank();
  if (in.getRank() == 3 && !dimsMatch(in.getDimSize(1), k))
    return op->emitOpError()
           << "input slots (" << dimStr(in.getDimSize(1))
           << ") must match the experts per token (" << dimStr(k) << ")";
  if (!dimsMatch(in.getShape().back(), inDim))
    return op->emitOpError()
           << "input features (" << dimStr(in.getShape().back())
           << ") must match the experts' input features (" << dimStr(inDim)
           << ")";
  if (failed(expectRank(op, result, 3, "result")))
    return failure();
  auto tokens = tensorType(experts).getDimSize(0);
  if (!dimsMatch(in.getDimSize(0), tokens) ||
      !dimsMatch(res.getDimSize(0), tokens))
    return op->emitOpError() << "input, experts and result must have the same "
                                "tokens (first dimension)";
  if (!dimsMatch(res.getDimSize(1), k))
    return op->emitOpError()
           << "result slots (" << dimStr(res.getDimSize(1))
           << ") must match the experts per token (" << dimStr(k) << ")";
  if (!dimsMatch(res.getDimSize(2), outDim))
    return op->emitOpError() << "result features (" << dimStr(res.getDimSize(2))
                             << ") must match the experts' output features ("
                             << dimStr(outDim) << ")";
  return success();
}

} // namespace

LogicalResult TopKGatingOp::verify() {
  if (failed(expectRank(*this, getLogits(), 2, "logits")))
    return failure();
  int64_t experts = tensorType(getLogits()).getDimSize(1);
  int64_t k = static_cast<int64_t>(getK());
  if (k <= 0 || (known(experts) && k > experts))
    return emitOpError() << "k (" << k << ") must be in 1.." << dimStr(experts)
                         << " (the experts)";
  if (getScoring() != "softmax_topk" && getScoring() != "topk_softmax")
    return emitOpError()
           << "scoring must be \"softmax_topk\" or \"topk_softmax\", got \""
           << getScoring() << "\"";
  if (getScoring() == "topk_softmax" && getNormalize())
    return emitOpError() << "normalize is implied by topk_softmax (its "
                            "weights already sum to 1)";
  int64_t tokens = tensorType(getLogits()).getDimSize(0);
  for (auto [v, what] : {std::pair<Value, StringRef>{getWeights(), "weights"},
                         {getExperts(), "experts"}}) {
    if (failed(expectRank(*this, v, 2, what)))
      return failure();
    auto t = tensorType(v);
    if (!dimsMatch(t.getDimSize(0), tokens) || !dimsMatch(t.getDimSize(1), k))
      return emitOpError() << what << " must be [" << dimStr(tokens) << ", "
                           << k << "], got [" << dimStr(t.getDimSize(0)) << ", "
                           << dimStr(t.getDimSize(1)) << "]";
  }
  if (!tensorType(getWeights()).getElementType().isF32())
    return emitOpError() << "weights must be f32";
  return success();
}

LogicalResult ExpertLinearOp::verify() {
  if (failed(expectRank(*this, getWeight(), 3, "weight")))
    return failure();
  auto w = tensorType(getWeight());
  return verifyExpertLinear(*this, getInput(), getExperts(), getResult(),
                            w.getDimSize(1), w.getDimSize(2));
}

LogicalResult QuantizedExpertLinearOp::verify() {
  if (failed(expectRank(*this, getWeight(), 3, "weight")) ||
      failed(expectRank(*this, getScales(), 3, "scales")))
    return failure();
  int64_t bits = static_cast<int64_t>(getBits()),
          group = static_cast<int64_t>(getGroupSize());
  if (bits < 4 || bits > 8 || bits == 7)
    return emitOpError() << "bits must be 8, 6, 5 or 4, got " << bits;
  if (failed(verifyQuantFormat(*this, getFormat(), bits, group, getScales())))
    return failure();
  auto w = tensorType(getWeight()), s = tensorType(getScales());
  int64_t e = w.getDimSize(0), n = w.getDimSize(1), k, scaleCols;
  if (failed(quantK(*this, getFormat(), bits, group, w.getDimSize(2), k,
                    scaleCols)))
    return failure();
  if (group <= 0 || k % group)
    return emitOpError() << "group_size (" << group
                         << ") must divide the input features (" << k << ")";
  if (!dimsMatch(s.getDimSize(0), e) || !dimsMatch(s.getDimSize(1), n) ||
      !dimsMatch(s.getDimSize(2), scaleCols))
    return emitOpError() << "scales must be [" << e << ", " << n << ", "
                         << scaleCols << "], got [" << dimStr(s.getDimSize(0))
                         << ", " << dimStr(s.getDimSize(1)) << ", "
                         << dimStr(s.getDimSize(2)) << "]";
  return verifyExpertLinear(*this, getInput(), getExperts(), getResult(), n, k);
}

LogicalResult MoECombineOp::verify() {
  if (failed(expectRank(*this, getInput(), 3, "input")) ||
      failed(expectRank(*this, getWeights(), 2, "weights")) ||
      failed(expectRank(*this, getResult(), 2, "result")))
    return failure();
  auto in = tensorType(getInput()), w = tensorType(getWeights()),
       res = tensorType(getResult());
  if (!dimsMatch(in.getDimSize(0), w.getDimSize(0)) ||
      !dimsMatch(in.getDimSize(0), res.getDimSize(0)))
    return emitOpError() << "input, weights and result must have the same "
                            "tokens (first dimension)";
  if (!dimsMatch(in.getDimSize(1), w.getDimSize(1)))
    return emitOpError() << "input slots (" << dimStr(in.getDimSize(1))
                         << ") must match the weights' ("
                         << dimStr(w.getDimSize(1)) << ")";
  return expectLastDim(*this, getResult(), in.getDimSize(2), "result",
                       "input features");
}
