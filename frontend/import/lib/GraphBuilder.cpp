#include "GraphBuilder.h"

#include "llmc/IR/LLMCOps.h"
#include "llmc/support/error.h"

#include <cmath>

using namespace mlir;

namespace llmc::import {
namespace {
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
constexpr int64_t kDyn = ShapedType::kDynamic;
} // namespace

GraphBuilder::GraphBuilder(OpBuilder &b, WeightSource &weights,
                           const ModelConfig &config)
    : b_(b), weights_(weights), config_(config), f32_(b.getF32Type()) {}

RankedTensorType GraphBuilder::tensor(ArrayRef<int64_t> shape) const {
  return RankedTensorType::get(shape, f32_);
}

/// A GGUF's block formats, F16 and BF16, and MXFP4 from any file, are
/// recorded (ggml_type) so that `llmc compile` keeps them as stored by
/// default (llmc-quantize mode=ggml; MXFP4 in mode none too).
bool GraphBuilder::keptAsStored(weights::DType t) const {
  if (t == weights::DType::MXFP4) // gpt-oss's experts, in either file
    return true;
  return weights_.isGGUF() &&
         (weights::isGgmlBlockFormat(t) || t == weights::DType::F16 ||
          t == weights::DType::BF16);
}

Value GraphBuilder::param(const std::string &name, std::vector<int64_t> shape,
                          bool transposed, int64_t ropeHeads, double offset) {
  std::vector<int64_t> stored = shape;
  if (transposed)
    std::swap(stored[0], stored[1]);
  weights::DType stores = weights_.require(name, stored).dtype;
  return b_.create<mlir::llmc::ParamOp>(
      loc(), tensor(shape), b_.getStringAttr(weights_.stored(name)),
      transposed ? b_.getUnitAttr() : UnitAttr(),
      ropeHeads > 0 ? b_.getI64IntegerAttr(ropeHeads) : IntegerAttr(),
      ArrayAttr(), StringAttr(), StringAttr(), IntegerAttr(),
      keptAsStored(stores) ? b_.getStringAttr(weights::dtypeName(stores))
                           : StringAttr(),
      offset != 0 ? b_.getF64FloatAttr(offset) : FloatAttr(), IntegerAttr(),
      mlir::DenseI64ArrayAttr());
}

namespace {
std::string expertName(const std::string &pattern, int64_t e) {
  std::string name = pattern;
  name.replace(name.find("{e}"), 3, std::to_string(e));
  return name;
}
} // namespace

Value GraphBuilder::expertParam(const std::string &name, int64_t experts,
                                int64_t rows, int64_t cols, bool transposed) {
  weights::DType stores;
  const int64_t sr = transposed ? cols : rows, sc = transposed ? rows : cols;
  if (name.find("{e}") != std::string::npos) {
    stores = weights_.require(expertName(name, 0), {sr, sc}).dtype;
    for (int64_t e = 1; e < experts; ++e)
      weights_.require(expertName(name, e), {sr, sc});
    if (weights_.contains(expertName(name, experts)))
      throw Error("tensor '" + expertName(name, experts) + "' in " +
                  weights_.location() +
                  ": the checkpoint holds more than the " +
                  std::to_string(experts) + " experts its config names");
  } else {
    if (const weights::TensorRef *t = weights_.find(name);
        t && t->shape.size() == 3 && t->shape[0] != experts)
      throw Error("tensor '" + name + "' in " + t->file + " stacks " +
                  std::to_string(t->shape[0]) +
                  " experts, but the config "
                  "names " +
                  std::to_string(experts));
    stores = weights_.require(name, {experts, sr, sc}).dtype;
  }
  return b_.create<mlir::llmc::ParamOp>(
      loc(), tensor({experts, rows, cols}),
      b_.getStringAttr(weights_.stored(name)),
      transposed ? b_.getUnitAttr() : UnitAttr(), IntegerAttr(), ArrayAttr(),
      StringAttr(), StringAttr(), IntegerAttr(),
      keptAsStored(stores) ? b_.getStringAttr(weights::dtypeName(stores))
                           : StringAttr(),
      FloatAttr(), IntegerAttr(), mlir::DenseI64ArrayAttr());
}

Value GraphBuilder::packedExpertParam(const std::vector<std::string> &names,
                                      int64_t experts, int64_t rows,
                                      int64_t cols) {
  weights::DType stores = weights::DType::F32;
  SmallVector<Attribute> sources;
  for (const std::string &name : names) {
    std::vector<int64_t> shape = rows > 0
                                     ? std::vector<int64_t>{experts, rows, cols}
                                     : std::vector<int64_t>{experts, cols};
    weights::DType t = weights_.require(name, shape).dtype;
    if (sources.empty())
      stores = t;
    else if (t != stores)
      throw Error("tensor '" + name + "' in " + weights_.location() + " is " +
                  weights::dtypeName(t) + ", but '" + names.front() +
                  "', packed with it, is " + weights::dtypeName(stores));
    sources.push_back(b_.getStringAttr(weights_.stored(name)));
  }
  const auto n = static_cast<int64_t>(names.size());
  return b_.create<mlir::llmc::ParamOp>(
      loc(), tensor({experts, n * std::max<int64_t>(rows, 1), cols}),
      b_.getStringAttr(weights_.stored(names.front())), UnitAttr(),
      IntegerAttr(), b_.getArrayAttr(sources), StringAttr(), StringAttr(),
      IntegerAttr(),
      keptAsStored(stores) ? b_.getStringAttr(weights::dtypeName(stores))
                           : StringAttr(),
      FloatAttr(), IntegerAttr(), mlir::DenseI64ArrayAttr());
}

Value GraphBuilder::routerParam(const std::string &name, int64_t experts,
                                int64_t hidden) {
  if (const weights::TensorRef *t = weights_.find(name);
      t && t->shape.size() == 2 && t->shape[1] == hidden &&
      t->shape[0] != experts)
    throw Error("tensor '" + name + "' in " + t->file + " routes to " +
                std::to_string(t->shape[0]) +
                " experts, but the config "
                "names " +
                std::to_string(experts));
  return param(name, {experts, hidden});
}

Value GraphBuilder::optionalParam(const std::string &name,
                                  std::vector<int64_t> shape, bool transposed) {
  if (!weights_.contains(name))
    return {};
  return param(name, std::move(shape), transposed);
}

Value GraphBuilder::embedding(Value table, Value ids) {
  return b_.create<mlir::llmc::EmbeddingOp>(
      loc(), tensor({kDyn, typeOf(table).getDimSize(1)}), table, ids);
}

Value GraphBuilder::rmsNorm(Value x, Value w) {
  return b_.create<mlir::llmc::RMSNormOp>(loc(), x.getType(), x, w,
                                          b_.getF64FloatAttr(config_.normEps));
}

Value GraphBuilder::layerNorm(Value x, Value w, Value bias) {
  return b_.create<mlir::llmc::LayerNormOp>(
      loc(), x.getType(), x, w, bias, b_.getF64FloatAttr(config_.normEps));
}

Value GraphBuilder::linear(Value x, Value w, Value bias) {
  auto shape = llvm::to_vector(typeOf(x).getShape());
  shape.back() = typeOf(w).getDimSize(0);
  return b_.create<mlir::llmc::LinearOp>(loc(), tensor(shape), x, w, bias);
}

Value GraphBuilder::slice(Value x, int64_t start, int64_t size) {
  auto shape = llvm::to_vector(typeOf(x).getShape());
  shape.back() = size;
  return b_.create<mlir::llmc::SliceOp>(loc(), tensor(shape), x,
                                        static_cast<uint64_t>(start),
                                        static_cast<uint64_t>(size));
}

Value GraphBuilder::add(Value a, Value c) {
  return b_.create<mlir::llmc::AddOp>(loc(), a.getType(), a, c);
}

Value GraphBuilder::mul(Value a, Value c) {
  return b_.create<mlir::llmc::MulOp>(loc(), a.getType(), a, c);
}

Value GraphBuilder::scale(Value x, double factor) {
  return b_.create<mlir::llmc::ScaleOp>(loc(), x.getType(), x,
                                        b_.getF64FloatAttr(factor));
}

Value GraphBuilder::softcap(Value x, double cap) {
  return b_.create<mlir::llmc::SoftcapOp>(loc(), x.getType(), x,
                                          b_.getF64FloatAttr(cap));
}

Value GraphBuilder::silu(Value x) {
  return b_.create<mlir::llmc::SiluOp>(loc(), x.getType(), x);
}

Value GraphBuilder::gelu(Value x, StringRef approximate) {
  return b_.create<mlir::llmc::GeluOp>(loc(), x.getType(), x,
                                       b_.getStringAttr(approximate));
}

Value GraphBuilder::splitHeads(Value x, int64_t heads, int64_t dim) {
  return b_.create<mlir::llmc::ReshapeOp>(loc(), tensor({kDyn, heads, dim}), x);
}

Value GraphBuilder::mergeHeads(Value x) {
  auto t = typeOf(x);
  return b_.create<mlir::llmc::ReshapeOp>(
      loc(), tensor({kDyn, t.getDimSize(1) * t.getDimSize(2)}), x);
}

Value GraphBuilder::rope(Value x, Value positions) {
  return rope(x, positions, config_.ropeTheta, config_.ropeScaling);
}

Value GraphBuilder::rope(Value x, Value positions, double theta,
                         const std::optional<RopeScaling> &ropeScaling) {
  DictionaryAttr scaling;
  if (const auto &s = ropeScaling) {
    SmallVector<NamedAttribute> entries = {
        b_.getNamedAttr("type", b_.getStringAttr(s->type)),
        b_.getNamedAttr("factor", b_.getF64FloatAttr(s->factor))};
    if (s->originalMaxPositions > 0)
      entries.push_back(
          b_.getNamedAttr("original_max_position_embeddings",
                          b_.getI64IntegerAttr(s->originalMaxPositions)));
    if (s->type == "llama3") {
      entries.push_back(b_.getNamedAttr("low_freq_factor",
                                        b_.getF64FloatAttr(s->lowFreqFactor)));
      entries.push_back(b_.getNamedAttr("high_freq_factor",
                                        b_.getF64FloatAttr(s->highFreqFactor)));
    }
    if (s->type == "freq_factors")
      entries.push_back(
          b_.getNamedAttr("factors", b_.getDenseF64ArrayAttr(s->freqFactors)));
    if (s->type == "longrope") {
      entries.push_back(b_.getNamedAttr(
          "short_factor", b_.getDenseF64ArrayAttr(s->shortFactors)));
      entries.push_back(b_.getNamedAttr(
          "long_factor", b_.getDenseF64ArrayAttr(s->longFactors)));
      entries.push_back(b_.getNamedAttr(
          "attention_factor", b_.getF64FloatAttr(*s->attentionFactor)));
    }
    if (s->type == "yarn") {
      entries.push_back(
          b_.getNamedAttr("beta_fast", b_.getF64FloatAttr(s->betaFast)));
      entries.push_back(
          b_.getNamedAttr("beta_slow", b_.getF64FloatAttr(s->betaSlow)));
      if (!s->truncate)
        entries.push_back(b_.getNamedAttr("truncate", b_.getBoolAttr(false)));
      if (s->attentionFactor)
        entries.push_back(b_.getNamedAttr(
            "attention_factor", b_.getF64FloatAttr(*s->attentionFactor)));
    }
    scaling = b_.getDictionaryAttr(entries);
  }
  return b_.create<mlir::llmc::RopeOp>(loc(), x.getType(), x, positions,
                                       b_.getF64FloatAttr(theta),
                                       b_.getI64IntegerAttr(config_.rotaryDim),
                                       b_.getStringAttr("half"), scaling);
}

Value GraphBuilder::moe(Value x, const Experts &e) {
  auto ids = RankedTensorType::get({kDyn, e.perToken}, b_.getI32Type());
  Value logits = linear(x, e.router, e.routerBias);
  auto gating = b_.create<mlir::llmc::TopKGatingOp>(
      loc(), tensor({kDyn, e.perToken}), ids, logits,
      b_.getI64IntegerAttr(e.perToken),
      e.normalize ? b_.getUnitAttr() : UnitAttr(),
      b_.getStringAttr(e.gptOss ? "topk_softmax" : "softmax_topk"));
  auto expertLinear = [&](Value in, Value w, Value bias = {}) -> Value {
    int64_t out = cast<RankedTensorType>(w.getType()).getDimSize(1);
    Value y = b_.create<mlir::llmc::ExpertLinearOp>(
        loc(), tensor({kDyn, e.perToken, out}), in, w, gating.getExperts());
    if (!bias)
      return y;
    return b_.create<mlir::llmc::ExpertBiasOp>(loc(), y.getType(), y, bias,
                                               gating.getExperts());
  };
  Value act;
  if (e.gptOss) {
    Value gu = expertLinear(x, e.gateUp, e.gateUpBias);
    auto t = typeOf(gu);
    act = b_.create<mlir::llmc::ClampedSwiGLUOp>(
        loc(), tensor({kDyn, e.perToken, t.getDimSize(2) / 2}), gu,
        b_.getF64FloatAttr(e.limit), b_.getF64FloatAttr(e.alpha),
        e.interleaved ? b_.getUnitAttr() : UnitAttr());
  } else {
    Value gate = expertLinear(x, e.gate);
    Value up = expertLinear(x, e.up);
    act = mul(silu(gate), up);
  }
  Value down = expertLinear(act, e.down, e.downBias);
  return b_.create<mlir::llmc::MoECombineOp>(
      loc(), tensor({kDyn, typeOf(down).getDimSize(2)}), down,
      gating.getWeights());
}

Value GraphBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  auto in = typeOf(x).getShape();
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(in[p]);
  return b_.create<mlir::llmc::TransposeOp>(loc(), tensor(shape), x,
                                            b_.getDenseI64ArrayAttr(perm));
}

Value GraphBuilder::attention(Value q, Value k, Value v, int64_t window,
                              double scale, double softcap, Value sinks) {
  int64_t heads = typeOf(q).getDimSize(1), dim = typeOf(q).getDimSize(2);
  int64_t kvHeads = typeOf(k).getDimSize(1);
  if (kvHeads != heads) {
    auto repeats = static_cast<uint64_t>(heads / kvHeads);
    k = b_.create<mlir::llmc::RepeatKVOp>(loc(), tensor({kDyn, heads, dim}), k,
                                          repeats);
    v = b_.create<mlir::llmc::RepeatKVOp>(loc(), tensor({kDyn, heads, dim}), v,
                                          repeats);
  }
  Value qt = transpose(q, {1, 0, 2}), kt = transpose(k, {1, 0, 2}),
        vt = transpose(v, {1, 0, 2});
  auto scoresType = tensor({heads, kDyn, kDyn});
  Value scores = b_.create<mlir::llmc::MatmulOp>(loc(), scoresType, qt, kt,
                                                 b_.getUnitAttr());
  if (scale == 0)
    scale = 1.0 / std::sqrt(static_cast<double>(dim));
  scores = b_.create<mlir::llmc::ScaleOp>(loc(), scoresType, scores,
                                          b_.getF64FloatAttr(scale));
  if (softcap > 0)
    scores = b_.create<mlir::llmc::SoftcapOp>(loc(), scoresType, scores,
                                              b_.getF64FloatAttr(softcap));
  scores = b_.create<mlir::llmc::CausalMaskOp>(loc(), scoresType, scores,
                                               static_cast<uint64_t>(window));
  Value probs =
      b_.create<mlir::llmc::SoftmaxOp>(loc(), scoresType, scores, sinks);
  Value out = b_.create<mlir::llmc::MatmulOp>(loc(), tensor({heads, kDyn, dim}),
                                              probs, vt, UnitAttr());
  return transpose(out, {1, 0, 2});
}

} // namespace llmc::import
