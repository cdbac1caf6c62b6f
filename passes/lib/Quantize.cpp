//===- Quantize.cpp - Weight-only bf16/f16/int8/int4
//-----------------------===//
//
//   llmc.linear %x, %w : f32 weight
//   => bf16/f16: the same linear over `%w : tensor<NxKxbf16>`
//   => int8/int4: llmc.quantized_linear %x, %wq, %scales
//        %wq     = llmc.param {quant, quant_part = "weight", group_size}
//        %scales = llmc.param {quant, quant_part = "scales", group_size}
//   llmc.expert_linear %x, %w, %e : f32 experts [E, N, K]
//   => the same per expert: bf16/f16 experts, or
//      llmc.quantized_expert_linear %x, %wq, %scales, %e
//   (a router's llmc.linear stays f32)
//   => ggml: each weight a GGUF stores in a block format takes int8 or int4
//        with groups of 32 (ggmlKeptBits), F16 and BF16 ones stay so, the
//        others (F32) take `otherwise`; MXFP4 (a GGUF's or a Hugging Face
//        checkpoint's) stays MXFP4:
//        llmc.quantized_[expert_]linear {format = "mxfp4"} over the codes
//        and E8M0 scales as stored; Q4_K, Q5_K and Q6_K stay as they are:
//        llmc.quantized_[expert_]linear {format = "q4_k", ...} over each
//        super-block's codes and headers (llmc/support/kquant.h).
//
//===----------------------------------------------------------------------===//

#include "llmc/IR/LLMCOps.h"
#include "llmc/Passes/Passes.h"
#include "llmc/support/kquant.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::llmc {
#define GEN_PASS_DEF_QUANTIZE
#include "llmc/Passes/Passes.h.inc"

int64_t ggmlKeptBits(StringRef type) {
  // Q4_0 is symmetric like llmc's int4 and stays exact. The others have a
  // min, a non-uniform grid or sub-block scales int4 cannot hold: as int4
  // (max error 7% of a tensor's max |w|) the bundled model's Q4_K_M argmax
  // agreed with llama.cpp's at 36 of 40 positions; as int8 (0.4%) at 40.
  // Q8_0 and Q5_0 stay exact too (weights::symmetricScale finds their grid).
  return llvm::StringSwitch<int64_t>(type)
      .Cases("F16", "BF16", 16)
      .Case("Q4_0", 4)
      .Cases("Q8_0", "Q5_0", "Q5_1", "Q4_1", "IQ4_NL", 8)
      .Cases("Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", 8)
      .Case("MXFP4", 4) // kept as it is: llmc runs MXFP4 itself
      .Default(0);
}

bool nativeKQuant(ParamOp p) {
  auto t = p.getGgmlType();
  return t && ::llmc::kquant::formatNamed(t->str()) &&
         p.getType().getShape().back() % ::llmc::kquant::kBlock == 0;
}

namespace {

/// A GGUF block holds 32 weights (a K-quant's sub-block 16 or 32): groups of
/// 32 keep each block's own scale.
constexpr int64_t kGgmlGroup = 32;

bool usedByEmbedding(ParamOp p) {
  return llvm::any_of(p->getUsers(),
                      [](Operation *u) { return isa<EmbeddingOp>(u); });
}

bool isRouter(LinearOp l) {
  return llvm::any_of(l->getUsers(),
                      [](Operation *u) { return isa<TopKGatingOp>(u); });
}

bool isHead(LinearOp l) {
  auto func = l->getParentOfType<func::FuncOp>();
  return func && lmHeadOf(func) == l;
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

/// f32 scales, or MXFP4's E8M0 bytes and K-quant headers (as i8).
Type scalesType(OpBuilder &b, bool bytes) {
  return bytes ? Type(b.getIntegerType(8)) : Type(b.getF32Type());
}

/// How a weight of `k` input columns is stored in `format` ("int8", "int4",
/// "mxfp4", "q4_k", ...): the last dimension of its weight and of its
/// scales, its bits and the op's format attribute.
struct Stored {
  int64_t weightCols, scaleCols, bits;
  StringRef format;
  bool byteScales;
};
Stored storedAs(StringRef kind, int64_t k, int64_t group) {
  if (auto kq = ::llmc::kquant::formatNamed(kind.str())) {
    const ::llmc::kquant::Layout l = ::llmc::kquant::layout(*kq);
    const int64_t blocks = k / ::llmc::kquant::kBlock;
    return {blocks * l.codeBytes, blocks * l.headerBytes, l.bits, kind, true};
  }
  const bool four = kind == "int4" || kind == "mxfp4";
  return {four ? k / 2 : k, k / group, four ? 4 : 8,
          kind == "mxfp4" ? "mxfp4" : "int", kind == "mxfp4"};
}

struct QuantizePass : impl::QuantizeBase<QuantizePass> {
  using QuantizeBase::QuantizeBase;

  void runOnOperation() override {
    auto known = [](StringRef m, bool ggml) {
      return m == "f32" || m == "bf16" || m == "f16" ||
             (ggml ? m == "ggml" : m == "int8" || m == "int4");
    };
    if (!known(mode, false) && !known(mode, true)) {
      getOperation().emitError("llmc-quantize: mode must be f32, bf16, f16, "
                               "int8, int4 or ggml, got '")
          << mode << "'";
      return signalPassFailure();
    }
    if (mode == "ggml" && (otherwise == "ggml" || !known(otherwise, false))) {
      getOperation().emitError("llmc-quantize: otherwise must be f32, bf16, "
                               "f16, int8 or int4, got '")
          << otherwise << "'";
      return signalPassFailure();
    }
    if (mode == "int4" && group != 32 && group != 128) {
      getOperation().emitError(
          "llmc-quantize: int4 group must be 32 or 128, got ")
          << static_cast<int64_t>(group); // the Option would print as a char
      return signalPassFailure();
    }
    bool failedGgml = false;
    getOperation().walk([&](ParamOp p) {
      if (auto t = p.getGgmlType(); t && !ggmlKeptBits(*t)) {
        p.emitError() << "llmc-quantize: unknown ggml_type '" << *t << "'";
        failedGgml = true;
      }
    });
    if (failedGgml)
      return signalPassFailure();
    SmallVector<LinearOp> linears;
    getOperation().walk([&](LinearOp l) { linears.push_back(l); });
    for (LinearOp l : linears) {
      auto w = l.getWeight().getDefiningOp<ParamOp>();
      if (!w || w.getQuant() || !w.getType().getElementType().isF32())
        continue;
      // A router stays f32, as llama.cpp's quantizer keeps ffn_gate_inp: it
      // is [experts, hidden], tiny, and a rounded router swaps near-tied
      // experts. A GGUF's stored type is kept as it is (exact).
      if (isRouter(l) && !(mode == "ggml" && w.getGgmlType()))
        continue;
      bool head = isHead(l);
      if (!quantizeHead && head)
        continue;
      // A table shared with llmc.embedding is converted for a linear only
      // when asked; the linear then reads a converted copy (cloneParam) and
      // the embedding keeps the original.
      if (!quantizeEmbedding && !(quantizeHead && head) && usedByEmbedding(w))
        continue;
      std::string m = modeFor(w);
      if (m == "bf16" || m == "f16")
        convertFloat(l.getWeightMutable(), w, m);
      else if (m != "f32")
        quantizeLinear(l, w, m);
    }
    SmallVector<ExpertLinearOp> experts;
    getOperation().walk([&](ExpertLinearOp l) { experts.push_back(l); });
    for (ExpertLinearOp l : experts) {
      auto w = l.getWeight().getDefiningOp<ParamOp>();
      if (!w || w.getQuant() || !w.getType().getElementType().isF32())
        continue;
      std::string m = modeFor(w);
      if (m == "bf16" || m == "f16")
        convertFloat(l.getWeightMutable(), w, m);
      else if (m != "f32")
        quantizeExperts(l, w, m);
    }
    if (quantizeEmbedding) {
      SmallVector<EmbeddingOp> lookups;
      getOperation().walk([&](EmbeddingOp e) { lookups.push_back(e); });
      for (EmbeddingOp e : lookups)
        convertTable(e);
    }
  }

  /// The conversion of one weight: `mode`, or in mode ggml its block
  /// format's nearest llmc format.
  std::string modeFor(ParamOp w) const {
    if (mode != "ggml")
      return mode;
    if (auto t = w.getGgmlType())
      return *t == "F16"             ? "f16"
             : *t == "BF16"          ? "bf16"
             : *t == "MXFP4"         ? "mxfp4"
             : nativeKQuant(w)       ? StringRef(*t).lower()
             : ggmlKeptBits(*t) == 8 ? "int8"
                                     : "int4";
    return otherwise;
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
    std::string m = modeFor(t);
    if (m == "mxfp4") // no MXFP4 lookup: a table is read a row at a time
      m = "int8";
    if (m == "f32")
      return;
    if (::llmc::kquant::formatNamed(m)) {
      // As a tied head's weight is kept (the same params): one copy.
      int64_t v = t.getType().getDimSize(0), d = t.getType().getDimSize(1);
      const Stored st = storedAs(m, d, ::llmc::kquant::kBlock);
      auto i8 = b.getIntegerType(8);
      ParamOp q =
          cloneParam(b, t, RankedTensorType::get({v, st.weightCols}, i8), m,
                     "weight", ::llmc::kquant::kBlock);
      ParamOp scales =
          cloneParam(b, t, RankedTensorType::get({v, st.scaleCols}, i8), m,
                     "scales", ::llmc::kquant::kBlock);
      auto lookup = b.create<QuantizedEmbeddingOp>(
          e.getLoc(), e.getType(), q, scales, e.getIds(),
          b.getI64IntegerAttr(::llmc::kquant::kBlock), b.getStringAttr(m));
      e.replaceAllUsesWith(lookup.getResult());
      e.erase();
      if (t->use_empty())
        t.erase();
      return;
    }
    if (m == "int8" || m == "int4") {
      int64_t v = t.getType().getDimSize(0), d = t.getType().getDimSize(1);
      // A GGUF table keeps its blocks' scales (exact for Q8_0).
      int64_t g = t.getGgmlType() && ggmlKeptBits(*t.getGgmlType()) <= 8 &&
                          d % kGgmlGroup == 0
                      ? kGgmlGroup
                      : d;
      ParamOp q =
          cloneParam(b, t, RankedTensorType::get({v, d}, b.getIntegerType(8)),
                     "int8", "weight", g);
      ParamOp scales =
          cloneParam(b, t, RankedTensorType::get({v, d / g}, b.getF32Type()),
                     "int8", "scales", g);
      auto lookup = b.create<QuantizedEmbeddingOp>(
          e.getLoc(), e.getType(), q, scales, e.getIds(),
          b.getI64IntegerAttr(g), b.getStringAttr("int"));
      e.replaceAllUsesWith(lookup.getResult());
      e.erase();
      if (t->use_empty())
        t.erase();
      return;
    }
    Type elt = m == "f16" ? Type(b.getF16Type()) : Type(b.getBF16Type());
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

  void convertFloat(OpOperand &use, ParamOp w, StringRef m) {
    OpBuilder b(w);
    Type elt = m == "bf16" ? Type(b.getBF16Type()) : Type(b.getF16Type());
    auto shape = w.getType().getShape();
    if (w->hasOneUse()) {
      w.getResult().setType(RankedTensorType::get(shape, elt));
      return;
    }
    auto copy = cast<ParamOp>(b.clone(*w));
    copy.getResult().setType(RankedTensorType::get(shape, elt));
    use.assign(copy);
  }

  /// The group of a weight of `k` input columns quantized to `m`, and
  /// whether it is int4 after all (a k no int4 group divides takes int8).
  std::pair<bool, int64_t> groupFor(Operation *user, ParamOp w, StringRef m,
                                    int64_t k) {
    if (m == "mxfp4")
      return {true, kGgmlGroup};
    if (::llmc::kquant::formatNamed(m.str()))
      return {false, ::llmc::kquant::kBlock};
    bool int4 = m == "int4";
    // A GGUF weight keeps its blocks' scales: groups of 32 in int8 too.
    bool ggml = w.getGgmlType() && ggmlKeptBits(*w.getGgmlType()) <= 8 &&
                k % kGgmlGroup == 0;
    int64_t g = ggml ? kGgmlGroup : int4 ? static_cast<int64_t>(group) : k;
    if (int4 && k % g) {
      // Like llama.cpp, fall back to the next wider type rather than to f32:
      // the layer keeps most of the saving and the user is told.
      user->emitWarning() << "llmc-quantize: '" << w.getName() << "' has " << k
                          << " input columns, not a multiple of the int4 group "
                          << g << "; quantized to int8 per row instead";
      int4 = false;
      g = k;
    }
    return {int4, g};
  }

  /// expert_linear over f32 experts => quantized_expert_linear, each expert
  /// quantized as one linear's weight.
  void quantizeExperts(ExpertLinearOp l, ParamOp w, StringRef m) {
    auto shape = w.getType().getShape();
    int64_t e = shape[0], n = shape[1], k = shape[2];
    auto [int4, g] = groupFor(l, w, m, k);
    const Stored st = storedAs(kindOf(m, int4), k, g);
    OpBuilder b(l);
    ParamOp wq = cloneParam(
        b, w, RankedTensorType::get({e, n, st.weightCols}, b.getIntegerType(8)),
        kindOf(m, int4), "weight", g);
    ParamOp scales =
        cloneParam(b, w,
                   RankedTensorType::get({e, n, st.scaleCols},
                                         scalesType(b, st.byteScales)),
                   kindOf(m, int4), "scales", g);
    auto q = b.create<QuantizedExpertLinearOp>(
        l.getLoc(), l.getType(), l.getInput(), wq, scales, l.getExperts(),
        b.getI64IntegerAttr(st.bits), b.getI64IntegerAttr(g),
        b.getStringAttr(st.format), int8Activations(b, st.format));
    l.replaceAllUsesWith(q.getResult());
    l.erase();
    if (w->use_empty())
      w.erase();
  }

  /// The quant attribute of a weight converted in mode `m`.
  static StringRef kindOf(StringRef m, bool int4) {
    return m == "mxfp4" || ::llmc::kquant::formatNamed(m.str()) ? m
           : int4                                               ? "int4"
                                                                : "int8";
  }

  /// K-quant products round their input to int8 blocks (llama.cpp's q8_K),
  /// as llmc's int8/int4 ones always do; MXFP4 ones too unless the plan
  /// computes in f32, where they are exact (gpt-oss in f32 is a reference
  /// run).
  UnitAttr int8Activations(OpBuilder &b, StringRef format) const {
    const bool kq = ::llmc::kquant::formatNamed(format.str()).has_value();
    return kq || (format == "mxfp4" && otherwise != "f32") ? b.getUnitAttr()
                                                           : UnitAttr();
  }

  void quantizeLinear(LinearOp l, ParamOp w, StringRef m) {
    int64_t n = w.getType().getDimSize(0), k = w.getType().getDimSize(1);
    auto [int4, g] = groupFor(l, w, m, k);
    const Stored st = storedAs(kindOf(m, int4), k, g);
    OpBuilder b(l);
    auto i8 = b.getIntegerType(8);
    ParamOp wq = cloneParam(b, w, RankedTensorType::get({n, st.weightCols}, i8),
                            kindOf(m, int4), "weight", g);
    ParamOp scales = cloneParam(
        b, w,
        RankedTensorType::get({n, st.scaleCols}, scalesType(b, st.byteScales)),
        kindOf(m, int4), "scales", g);
    auto q = b.create<QuantizedLinearOp>(
        l.getLoc(), l.getType(), l.getInput(), wq, scales, l.getBias(),
        b.getI64IntegerAttr(st.bits), b.getI64IntegerAttr(g),
        b.getStringAttr(st.format), int8Activations(b, st.format));
    l.replaceAllUsesWith(q.getResult());
    l.erase();
    if (w->use_empty())
      w.erase();
  }
};

} // namespace
} // namespace mlir::llmc
