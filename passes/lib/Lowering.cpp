//===- Lowering.cpp - llmc IR -> kernel calls over numbered buffers
//--------===//

#include "llmc/Passes/Lowering.h"

#include "llmc/IR/LLMCOps.h"
#include "llmc/support/kquant.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>
#include <sstream>

namespace mlir::llmc {
namespace {

using ::llmc::Graph;

llmc_operand none() { return {LLMC_OPERAND_NONE, 0}; }

class GraphLowering {
public:
  GraphLowering(func::FuncOp func, LoweredModule &out,
                std::map<std::string, uint32_t> &weightIndex)
      : func_(func), out_(out), weightIndex_(weightIndex) {}

  LogicalResult run() {
    graph_.name = func_.getSymName().str();
    bool decode = graph_.name == "decode";
    rowsOfDynamic_ = decode ? llmc_rows{0, 1, 0} : llmc_rows{1, 0, 0};
    for (unsigned i = 0; i < func_.getNumArguments(); ++i) {
      auto name = func_.getArgAttrOfType<StringAttr>(i, "llmc.name");
      if (!name)
        continue;
      if (name.getValue() == "tokens")
        inputs_[func_.getArgument(i)] = 0;
      else if (name.getValue() == "positions")
        inputs_[func_.getArgument(i)] = 1;
    }
    planned_ = static_cast<bool>(func_->getAttr("llmc.workspace"));
    for (Operation &op : func_.getBody().front())
      if (failed(lower(&op)))
        return failure();
    if (planned_) {
      auto ws = func_->getAttrOfType<DictionaryAttr>("llmc.workspace");
      int64_t perToken = ws.getAs<IntegerAttr>("per_token").getInt();
      (decode ? graph_.workspaceB : graph_.workspaceT) = perToken;
    } else {
      (decode ? graph_.workspaceB : graph_.workspaceT) = unplannedEnd_;
    }
    out_.graphs.push_back(std::move(graph_));
    return success();
  }

private:
  /// The buffer holding `v` (reshapes are views of their input).
  FailureOr<uint32_t> buffer(Operation *user, Value v) {
    while (auto r = v.getDefiningOp<ReshapeOp>())
      v = r.getInput();
    auto it = buffers_.find(v);
    if (it == buffers_.end())
      return user->emitError("llmc-serialize: operand has no buffer (is it a "
                             "weight or a step input used where an activation "
                             "is expected?)");
    return it->second;
  }

  FailureOr<llmc_operand> operand(Operation *user, Value v) {
    if (!v)
      return none();
    if (auto p = v.getDefiningOp<ParamOp>())
      return llmc_operand{LLMC_OPERAND_WEIGHT, weight(p)};
    if (auto it = inputs_.find(v); it != inputs_.end())
      return llmc_operand{LLMC_OPERAND_INPUT, it->second};
    FailureOr<uint32_t> b = buffer(user, v);
    if (failed(b))
      return failure();
    return llmc_operand{LLMC_OPERAND_BUFFER, *b};
  }

  /// `dynamicRows`: what a dynamic first dimension means for this result.
  uint32_t newBuffer(Value v, int64_t offsetPerToken, llmc_rows dynamicRows) {
    auto t = cast<RankedTensorType>(v.getType());
    llmc_buffer_desc d{};
    int64_t rows = t.getDimSize(0);
    if (ShapedType::isDynamic(rows)) {
      d.rows = dynamicRows;
    } else {
      d.rows = llmc_rows{0, 0, static_cast<int32_t>(rows)};
    }
    d.cols = 1;
    for (int64_t dim : t.getShape().drop_front())
      d.cols *= dim;
    d.dtype = t.getElementType().isInteger(32) ? LLMC_I32 : LLMC_F32;
    int64_t rowBytes = d.cols * 4;
    if (!planned_) {
      offsetPerToken = unplannedEnd_;
      unplannedEnd_ += (rowBytes + 63) / 64 * 64;
    }
    bool decode = graph_.name == "decode";
    (decode ? d.offset_b : d.offset_t) = offsetPerToken;
    auto index = static_cast<uint32_t>(graph_.buffers.size());
    graph_.buffers.push_back(d);
    buffers_[v] = index;
    return index;
  }

  uint32_t weight(ParamOp p) {
    std::string key;
    llvm::raw_string_ostream os(key);
    // Keyed by attributes and type only: the printed op would include its
    // SSA number, so the same weight at another position in another phase
    // would be stored twice.
    os << p->getAttrDictionary() << " : " << p.getType();
    auto it = weightIndex_.find(os.str());
    if (it != weightIndex_.end())
      return it->second;
    WeightSpec w;
    w.name = p.getName().str();
    auto type = p.getType();
    w.shape.assign(type.getShape().begin(), type.getShape().end());
    Type elt = type.getElementType();
    if (p.getQuant()) {
      w.quant = p.getQuant()->str();
      w.quantScales = *p.getQuantPart() == "scales";
      w.groupSize = static_cast<int64_t>(*p.getGroupSize());
      const bool mxfp4 = w.quant == "mxfp4";
      // A K-quant's halves are bytes, shaped as stored.
      const auto kq = ::llmc::kquant::formatNamed(w.quant);
      w.dtype = kq && w.quantScales ? LLMC_KQ_HEADER
                : kq ? llmc_dtype(LLMC_Q4_K + int(*kq)) // kquant::formatOfDtype
                : w.quantScales     ? (mxfp4 ? LLMC_E8M0 : LLMC_F32)
                : mxfp4             ? LLMC_MXFP4
                : w.quant == "int4" ? LLMC_I4
                                    : LLMC_I8;
      if ((w.quant == "int4" || mxfp4) && !w.quantScales)
        w.shape.back() *= 2;    // the logical [.., N, K]; two per byte
      if (kq && !w.quantScales) // the logical [.., N, K] of its code bytes
        w.shape.back() = w.shape.back() /
                         ::llmc::kquant::layout(*kq).codeBytes *
                         ::llmc::kquant::kBlock;
    } else {
      w.dtype = elt.isBF16() ? LLMC_BF16 : elt.isF16() ? LLMC_F16 : LLMC_F32;
    }
    if (auto sources = p.getSources())
      for (Attribute s : *sources)
        w.sources.push_back(cast<StringAttr>(s).str());
    else
      w.sources.push_back(w.name);
    if (type.getRank() == 3)
      w.experts = type.getDimSize(0);
    w.transposed = p.getTransposed();
    if (auto t = p.getGgmlType())
      w.ggmlType = t->str();
    if (auto h = p.getRopeUnpermuteHeads())
      w.ropeUnpermuteHeads = static_cast<int64_t>(*h);
    if (auto offset = p.getOffset())
      w.offset = static_cast<float>(offset->convertToDouble());
    if (auto dim = p.getShardDim()) {
      w.shardDim = static_cast<int64_t>(*dim);
      w.shardStarts.assign(p.getShardStarts()->begin(),
                           p.getShardStarts()->end());
    }
    auto index = static_cast<uint32_t>(out_.weights.size());
    out_.weights.push_back(std::move(w));
    weightIndex_[os.str()] = index;
    return index;
  }

  uint32_t syntheticWeight(std::string name, std::vector<float> data) {
    auto it = weightIndex_.find(name);
    if (it != weightIndex_.end())
      return it->second;
    WeightSpec w;
    w.name = name;
    w.shape = {static_cast<int64_t>(data.size())};
    w.data = std::move(data);
    auto index = static_cast<uint32_t>(out_.weights.size());
    out_.weights.push_back(std::move(w));
    weightIndex_[name] = index;
    return index;
  }

  /// Appends a kernel call whose results are `op`'s tensor results.
  LogicalResult emit(Operation *op, llmc_op_kind kind, ArrayRef<Value> ins,
                     ArrayRef<int64_t> ints = {},
                     ArrayRef<double> floats = {}) {
    llmc_op_desc d{};
    d.kind = kind;
    for (Value v : ins) {
      FailureOr<llmc_operand> o = operand(op, v);
      if (failed(o))
        return failure();
      d.operands[d.num_operands++] = *o;
    }
    // Results have the rows of the first activation operand (every kernel is
    // row-wise), T for an embedding of the step's tokens, and one row per
    // sequence after TAKE_ROWS.
    llmc_rows rows = rowsOfDynamic_;
    if (d.num_operands > 0 && d.operands[0].kind == LLMC_OPERAND_BUFFER)
      rows = graph_.buffers[d.operands[0].index].rows;
    if (kind == LLMC_OP_TAKE_ROWS)
      rows = llmc_rows{0, 1, 0};
    auto offsets = op->getAttrOfType<DenseI64ArrayAttr>("llmc.offsets");
    unsigned tensorIndex = 0;
    for (Value r : op->getResults()) {
      if (!isa<RankedTensorType>(r.getType()))
        continue;
      int64_t off =
          offsets && tensorIndex < offsets.size() ? offsets[tensorIndex] : 0;
      d.results[d.num_results++] = newBuffer(r, off, rows);
      ++tensorIndex;
    }
    for (auto [i, v] : llvm::enumerate(ints))
      d.i[i] = v;
    for (auto [i, v] : llvm::enumerate(floats))
      d.f[i] = v;
    graph_.ops.push_back(d);
    return success();
  }

  /// SWIGLU's i1: the gate/up runs in each row ([T, k, 2I]: k, one per
  /// chosen expert; [T, 2I]: 0, the row is one run).
  static int64_t gatedRuns(Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.getRank() == 3 ? t.getDimSize(1) : 0;
  }
  /// k of an MoE value [T, k, ...].
  static int64_t slots(Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(1);
  }
  static int64_t heads(Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(1);
  }
  static int64_t headDim(Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(2);
  }

  LogicalResult lower(Operation *op) {
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case<ParamOp, ReshapeOp, KVReadOp>([](auto) { return success(); })
        .Case([&](EmbeddingOp o) {
          return emit(op, LLMC_OP_EMBEDDING, {o.getTable(), o.getIds()});
        })
        .Case([&](QuantizedEmbeddingOp o) {
          return emit(op, LLMC_OP_EMBEDDING,
                      {o.getTable(), o.getIds(), o.getScales()},
                      {static_cast<int64_t>(o.getGroupSize())});
        })
        .Case([&](RMSNormOp o) {
          // Over each head of a [T, heads, head_dim] input (Qwen3's q_norm).
          auto in = cast<RankedTensorType>(o.getInput().getType());
          int64_t width = in.getRank() == 3 ? in.getDimSize(2) : 0;
          return emit(op, LLMC_OP_RMS_NORM, {o.getInput(), o.getWeight()},
                      {width}, {o.getEps().convertToDouble()});
        })
        .Case([&](AddRMSNormOp o) {
          return emit(op, LLMC_OP_ADD_RMS_NORM,
                      {o.getInput(), o.getResidual(), o.getWeight()}, {},
                      {o.getEps().convertToDouble()});
        })
        .Case([&](LayerNormOp o) {
          return emit(op, LLMC_OP_LAYER_NORM,
                      {o.getInput(), o.getWeight(), o.getBias()}, {},
                      {o.getEps().convertToDouble()});
        })
        .Case([&](LinearOp o) {
          return emit(op, LLMC_OP_LINEAR,
                      {o.getInput(), o.getWeight(), Value(), o.getBias()}, {0});
        })
        .Case([&](QuantizedLinearOp o) {
          return emit(op, LLMC_OP_LINEAR,
                      {o.getInput(), o.getWeight(), o.getScales(), o.getBias()},
                      {static_cast<int64_t>(o.getGroupSize()), 0,
                       o.getInt8Activations() ? 1 : 0});
        })
        .Case([&](RopeOp o) -> LogicalResult {
          RopeTables t;
          int64_t rot = static_cast<int64_t>(o.getRotaryDim());
          double theta = o.getTheta().convertToDouble();
          if (failed(ropeTables(op, theta, rot, o.getScalingAttr(), t)))
            return failure();
          std::string key;
          llvm::raw_string_ostream os(key);
          os << "rope.inv_freq(theta=" << theta << ",dim=" << rot;
          if (o.getScalingAttr())
            os << "," << o.getScalingAttr();
          os << ")";
          const bool longRope = !t.longInvFreq.empty();
          uint32_t table = syntheticWeight(os.str(), std::move(t.invFreq));
          if (failed(emit(op, LLMC_OP_ROPE, {o.getInput(), o.getPositions()},
                          {heads(o.getInput()), headDim(o.getInput()), rot,
                           o.getStyle() == "interleaved" ? 1 : 0,
                           longRope ? t.switchLength : 0},
                          {t.attentionScaling})))
            return failure();
          llmc_op_desc &rope = graph_.ops.back();
          rope.operands[rope.num_operands++] =
              llmc_operand{LLMC_OPERAND_WEIGHT, table};
          if (longRope)
            rope.operands[rope.num_operands++] = llmc_operand{
                LLMC_OPERAND_WEIGHT,
                syntheticWeight(os.str() + ".long", std::move(t.longInvFreq))};
          return success();
        })
        .Case([&](AddOp o) {
          return emit(op, LLMC_OP_ADD, {o.getLhs(), o.getRhs()});
        })
        .Case([&](MulOp o) {
          return emit(op, LLMC_OP_MUL, {o.getLhs(), o.getRhs()});
        })
        .Case([&](SiluOp o) { return emit(op, LLMC_OP_SILU, {o.getInput()}); })
        .Case([&](AllReduceOp o) {
          return emit(op, LLMC_OP_ALL_REDUCE, {o.getInput()});
        })
        .Case([&](GeluOp o) {
          return emit(op, LLMC_OP_GELU, {o.getInput()},
                      {o.getApproximate() == "tanh" ? 1 : 0});
        })
        .Case([&](SwiGLUOp o) {
          return emit(op, LLMC_OP_SWIGLU, {o.getInput()},
                      {0, gatedRuns(o.getInput())});
        })
        .Case([&](GeGLUOp o) {
          return emit(op, LLMC_OP_SWIGLU, {o.getInput()},
                      {1, gatedRuns(o.getInput())});
        })
        .Case([&](ClampedSwiGLUOp o) {
          return emit(
              op, LLMC_OP_SWIGLU, {o.getInput()},
              {2, gatedRuns(o.getInput()), o.getInterleaved() ? 1 : 0},
              {o.getLimit().convertToDouble(), o.getAlpha().convertToDouble()});
        })
        .Case([&](ExpertBiasOp o) {
          return emit(op, LLMC_OP_EXPERT_BIAS,
                      {o.getInput(), o.getBias(), o.getExperts()},
                      {slots(o.getExperts())});
        })
        .Case([&](TopKGatingOp o) {
          return emit(op, LLMC_OP_MOE_GATING, {o.getLogits()},
                      {static_cast<int64_t>(o.getK()), o.getNormalize() ? 1 : 0,
                       o.getScoring() == "topk_softmax" ? 1 : 0});
        })
        .Case([&](ExpertLinearOp o) {
          return emit(op, LLMC_OP_EXPERT_LINEAR,
                      {o.getInput(), o.getWeight(), Value(), o.getExperts()},
                      {0, slots(o.getExperts())});
        })
        .Case([&](QuantizedExpertLinearOp o) {
          return emit(
              op, LLMC_OP_EXPERT_LINEAR,
              {o.getInput(), o.getWeight(), o.getScales(), o.getExperts()},
              {static_cast<int64_t>(o.getGroupSize()), slots(o.getExperts()),
               o.getInt8Activations() ? 1 : 0});
        })
        .Case([&](MoECombineOp o) {
          return emit(op, LLMC_OP_MOE_COMBINE, {o.getInput(), o.getWeights()},
                      {slots(o.getWeights())});
        })
        .Case([&](ScaleOp o) {
          return emit(op, LLMC_OP_SCALE, {o.getInput()}, {},
                      {o.getFactor().convertToDouble()});
        })
        .Case([&](SoftcapOp o) {
          return emit(op, LLMC_OP_SOFTCAP, {o.getInput()}, {},
                      {o.getCap().convertToDouble()});
        })
        .Case([&](SliceOp o) {
          return emit(op, LLMC_OP_SLICE, {o.getInput()},
                      {static_cast<int64_t>(o.getStart())});
        })
        .Case([&](KVWriteOp o) {
          return emit(op, LLMC_OP_KV_WRITE, {o.getKey(), o.getValue()},
                      {static_cast<int64_t>(o.getLayer())});
        })
        .Case([&](AttentionOp o) -> LogicalResult {
          auto read = o.getKey().getDefiningOp<KVReadOp>();
          if (!read || o.getSegments().size() != 2)
            return op->emitError("llmc-serialize: attention must read the KV "
                                 "cache (run llmc-insert-kv-cache)");
          SmallVector<Value, 2> ins = {o.getQuery()};
          if (o.getSinks())
            ins.push_back(o.getSinks());
          return emit(op, LLMC_OP_PREFILL_ATTENTION, ins,
                      {static_cast<int64_t>(read.getLayer()),
                       heads(o.getQuery()), heads(o.getKey()),
                       headDim(o.getQuery()),
                       static_cast<int64_t>(o.getWindow())},
                      {o.getScale().convertToDouble(),
                       o.getSoftcap().convertToDouble()});
        })
        .Case([&](PagedAttentionOp o) {
          auto cache = o.getCache().getType();
          SmallVector<Value, 2> ins = {o.getQuery()};
          if (o.getSinks())
            ins.push_back(o.getSinks());
          return emit(op, LLMC_OP_DECODE_ATTENTION, ins,
                      {static_cast<int64_t>(o.getLayer()), heads(o.getQuery()),
                       cache.getKvHeads(), headDim(o.getQuery()),
                       static_cast<int64_t>(o.getWindow())},
                      {o.getScale().convertToDouble(),
                       o.getSoftcap().convertToDouble()});
        })
        .Case([&](TakeLastOp o) -> LogicalResult {
          if (!o.getIndices())
            return op->emitError("llmc-serialize: take_last needs the step's "
                                 "logits rows (run llmc-specialize-phases)");
          return emit(op, LLMC_OP_TAKE_ROWS, {o.getInput()});
        })
        .Case([&](func::ReturnOp o) -> LogicalResult {
          FailureOr<uint32_t> b = buffer(op, o.getOperand(0));
          if (failed(b))
            return failure();
          graph_.logitsBuffer = *b;
          return success();
        })
        .Default([&](Operation *other) {
          return other->emitError("llmc-serialize: '")
                 << other->getName() << "' has no kernel; the fusion passes "
                 << "must remove it before lowering";
        });
  }

  func::FuncOp func_;
  LoweredModule &out_;
  std::map<std::string, uint32_t> &weightIndex_;
  Graph graph_;
  llmc_rows rowsOfDynamic_{1, 0, 0};
  bool planned_ = false;
  int64_t unplannedEnd_ = 0;
  llvm::DenseMap<Value, uint32_t> buffers_;
  llvm::DenseMap<Value, uint32_t> inputs_;
};

} // namespace

FailureOr<LoweredModule> lowerToGraphs(ModuleOp module) {
  LoweredModule out;
  std::map<std::string, uint32_t> weightIndex;
  for (StringRef name : {"prefill", "decode", "verify"}) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    if (!func)
      return module.emitError("llmc-serialize: no @")
             << name << " function (run llmc-specialize-phases)";
    if (failed(GraphLowering(func, out, weightIndex).run()))
      return failure();
  }
  return out;
}

std::vector<std::string> describeGraph(const ::llmc::Graph &graph) {
  std::vector<std::string> lines;
  auto operand = [](std::ostream &os, const llmc_operand &o) {
    switch (o.kind) {
    case LLMC_OPERAND_BUFFER:
      os << "b" << o.index;
      break;
    case LLMC_OPERAND_WEIGHT:
      os << "w" << o.index;
      break;
    case LLMC_OPERAND_INPUT:
      os << (o.index == 0 ? "tokens" : "positions");
      break;
    default:
      os << "-";
    }
  };
  for (const llmc_op_desc &op : graph.ops) {
    std::ostringstream os;
    for (uint32_t r = 0; r < op.num_results; ++r)
      os << (r ? ", " : "") << "b" << op.results[r];
    os << (op.num_results ? " = " : "") << ::llmc::opLabel(op) << "(";
    for (uint32_t i = 0; i < op.num_operands; ++i) {
      os << (i ? ", " : "");
      operand(os, op.operands[i]);
    }
    os << ")";
    lines.push_back(os.str());
  }
  return lines;
}

} // namespace mlir::llmc
