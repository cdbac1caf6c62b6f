//===- Shard.cpp - Tensor parallelism: heads and MLPs over tp ranks -------===//
//
//   %q = llmc.linear %h, %wq       %q = llmc.linear %h, %wq_r  // its rows
//   attention over H heads    =>   attention over H / tp heads
//   %o = llmc.linear %a, %wo       %p = llmc.linear %a, %wo_r  // its cols
//                                  %o = llmc.all_reduce %p
//
//   %g = llmc.linear %h, %wg       %g = llmc.linear %h, %wg_r  // I/tp rows
//   %u = llmc.linear %h, %wu  =>   %u = llmc.linear %h, %wu_r
//   %d = llmc.linear silu(%g) * %u, %wd
//                                  %p = llmc.linear silu(%g) * %u, %wd_r
//                                  %d = llmc.all_reduce %p
//
// A MoE layer splits each expert's intermediate width the same way (the
// router and the experts' choice stay whole on every rank), its
// moe_combine's partial sums meeting in one all_reduce.
//
// Every rank runs the same graph: the types are one rank's, and each split
// weight says which rows or columns each rank reads (shard_dim,
// shard_starts).
//
//===----------------------------------------------------------------------===//

#include "llmc/IR/LLMCOps.h"
#include "llmc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

#include <type_traits>

namespace mlir::llmc {
#define GEN_PASS_DEF_SHARD
#include "llmc/Passes/Passes.h.inc"

namespace {

/// A value's new type: dimension `dim` of `v`'s type becomes `size`
/// (dim -1: the last).
void narrow(Value v, int64_t dim, int64_t size) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(t.getShape());
  shape[size_t(dim < 0 ? t.getRank() - 1 : dim)] = size;
  v.setType(RankedTensorType::get(shape, t.getElementType()));
}

int64_t lastDim(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape().back();
}

class Sharder {
public:
  Sharder(func::FuncOp func, int64_t tp) : func_(func), tp_(tp) {}

  LogicalResult run() {
    SmallVector<AttentionOp> layers;
    func_.walk([&](AttentionOp op) { layers.push_back(op); });
    std::optional<int64_t> cacheHeads;
    for (AttentionOp op : layers) {
      FailureOr<int64_t> kv = splitAttention(op);
      if (failed(kv))
        return failure();
      cacheHeads = *kv;
    }
    SmallVector<LinearOp> downs;
    func_.walk([&](LinearOp op) {
      if (!done_.contains(op) &&
          isa_and_nonnull<MulOp, SiluOp, GeluOp>(op.getInput().getDefiningOp()))
        downs.push_back(op);
    });
    // (unpack() adds linears as it goes: downs were found first.)
    for (LinearOp op : downs)
      if (failed(splitMlp(op)))
        return failure();
    SmallVector<MoECombineOp> moes;
    func_.walk([&](MoECombineOp op) { moes.push_back(op); });
    for (MoECombineOp op : moes)
      if (failed(splitMoe(op)))
        return failure();
    if (cacheHeads)
      narrowCache(*cacheHeads);
    return success();
  }

private:
  /// Rank r starts at r * per.
  SmallVector<int64_t> evenStarts(int64_t per) const {
    SmallVector<int64_t> starts;
    for (int64_t r = 0; r < tp_; ++r)
      starts.push_back(r * per);
    return starts;
  }

  /// Gives `param` (the weight or bias of `user`) rank r's slice of
  /// dimension `dim`, `size` long, starting at starts[r].
  LogicalResult shardParam(Value param, Operation *user, int64_t dim,
                           int64_t size, ArrayRef<int64_t> starts) {
    auto p = param.getDefiningOp<ParamOp>();
    if (!p)
      return user->emitOpError()
             << "llmc-shard: its weight is not an llmc.param";
    if (!p->hasOneUse())
      return p.emitOpError() << "llmc-shard: a split weight must have one "
                                "user (shared weights are not split)";
    if (p.getSources())
      return p.emitOpError()
             << "llmc-shard: packed weights (sources) are not split yet";
    auto t = cast<RankedTensorType>(p.getType());
    if (auto g = p.getGgmlType(); g && dim == t.getRank() - 1) {
      // A GGUF block format slices along its rows only at block bounds.
      const int64_t block =
          g->starts_with("Q") && g->ends_with("_K") ? 256 : 32;
      if (size % block != 0)
        return p.emitOpError()
               << "llmc-shard: " << *g << " columns split in " << size
               << " per rank, not whole blocks of " << block;
    }
    Builder b(p.getContext());
    narrow(p.getResult(), dim, size);
    p.setShardDimAttr(b.getI64IntegerAttr(dim));
    p.setShardStartsAttr(b.getDenseI64ArrayAttr(starts));
    return success();
  }

  /// `bias` (dimension 0 whole) on rank 0, zeros elsewhere (-1): a bias
  /// of a partial sum, added once by the all_reduce.
  LogicalResult onRankZero(Value bias, Operation *user) {
    SmallVector<int64_t> once(size_t(tp_), -1);
    once[0] = 0;
    return shardParam(bias, user, 0,
                      cast<RankedTensorType>(bias.getType()).getDimSize(0),
                      once);
  }

  /// `op`'s users read the sum of its result over every rank.
  void sumAfter(Operation *op) {
    OpBuilder b(op);
    b.setInsertionPointAfter(op);
    Value partial = op->getResult(0);
    auto sum = b.create<AllReduceOp>(op->getLoc(), partial.getType(), partial);
    partial.replaceAllUsesExcept(sum.getResult(), sum);
  }

  /// Marks `linear` split; a second split of it is an error.
  LogicalResult claim(LinearOp linear) {
    if (!done_.insert(linear).second)
      return linear.emitOpError() << "llmc-shard: split twice";
    return success();
  }

  /// `linear` keeps the rows (output columns) of each rank's starts, `size`
  /// of them (counted from its part of a packed weight, unpack()).
  LogicalResult columnParallel(LinearOp linear, int64_t size,
                               ArrayRef<int64_t> starts) {
    SmallVector<int64_t> rows(starts);
    for (int64_t &r : rows)
      r += packedAt_.lookup(linear);
    if (failed(claim(linear)) ||
        failed(shardParam(linear.getWeight(), linear, 0, size, rows)))
      return failure();
    if (linear.getBias() &&
        failed(shardParam(linear.getBias(), linear, 0, size, rows)))
      return failure();
    narrow(linear.getResult(), 1, size);
    return success();
  }

  /// `linear` reads the columns of each rank's starts, `size` of them, and
  /// its partial sums meet in an all_reduce.
  LogicalResult rowParallel(LinearOp linear, int64_t size,
                            ArrayRef<int64_t> starts) {
    if (failed(claim(linear)) ||
        failed(shardParam(linear.getWeight(), linear, 1, size, starts)))
      return failure();
    if (linear.getBias() && failed(onRankZero(linear.getBias(), linear)))
      return failure();
    sumAfter(linear);
    return success();
  }

  /// The linear that makes `cols`: itself, or for a slice of a packed
  /// projection (Phi's qkv_proj and gate_up_proj, GPT-2's c_attn) a linear
  /// of its own over that part of the packed weight (the same checkpoint
  /// tensor, its rows from the slice's start: packedAt_), so each part
  /// splits as an unpacked one; the packed linear goes once its last slice
  /// has.
  FailureOr<LinearOp> unpack(Value cols, Operation *user) {
    if (auto linear = cols.getDefiningOp<LinearOp>())
      return linear;
    auto slice = cols.getDefiningOp<SliceOp>();
    auto packed = slice ? slice.getInput().getDefiningOp<LinearOp>() : nullptr;
    if (!packed)
      return user->emitOpError()
             << "llmc-shard: heads and MLP widths must come from an "
                "llmc.linear (or a slice of one)";
    auto weight = packed.getWeight().getDefiningOp<ParamOp>();
    auto bias =
        packed.getBias() ? packed.getBias().getDefiningOp<ParamOp>() : nullptr;
    if (!weight || (packed.getBias() && !bias) ||
        !llvm::all_of(packed->getUsers(),
                      [](Operation *u) { return isa<SliceOp>(u); }))
      return packed.emitOpError() << "llmc-shard: a packed projection must "
                                     "be sliced by llmc.slice alone";
    const int64_t start = slice.getStart(), size = slice.getSize();
    OpBuilder b(packed);
    auto part = [&](ParamOp p) -> Value {
      auto q = cast<ParamOp>(b.clone(*p));
      narrow(q.getResult(), 0, size);
      return q.getResult();
    };
    auto linear =
        b.create<LinearOp>(packed.getLoc(), slice.getType(), packed.getInput(),
                           part(weight), bias ? part(bias) : Value());
    packedAt_[linear] = start;
    slice.getResult().replaceAllUsesWith(linear.getResult());
    slice.erase();
    if (packed->use_empty()) {
      packed.erase();
      for (ParamOp p : {weight, bias})
        if (p && p->use_empty())
          p.erase();
    }
    return linear;
  }

  /// Walks from `v` ([T, H, D], H to become `heads`, rank r's first head
  /// headStarts[r]) back to the linear that makes it, narrowing each value
  /// on the way.
  LogicalResult splitHeadsBack(Value v, int64_t heads,
                               ArrayRef<int64_t> headStarts) {
    while (true) {
      Operation *def = v.getDefiningOp();
      if (!def || !v.hasOneUse())
        return (def ? def : func_.getOperation())->emitError()
               << "llmc-shard: an attention input with other users or none "
                  "(cannot split its heads)";
      if (isa<RopeOp, RMSNormOp>(def)) {
        narrow(v, 1, heads);
        v = def->getOperand(0);
        continue;
      }
      auto reshape = dyn_cast<ReshapeOp>(def);
      if (!reshape)
        return def->emitOpError()
               << "llmc-shard: cannot split attention heads through it";
      auto t = cast<RankedTensorType>(v.getType());
      const int64_t D = t.getDimSize(2);
      narrow(v, 1, heads);
      Value cols = reshape.getInput();
      if (!cols.hasOneUse())
        return reshape.emitOpError() << "llmc-shard: its input has other users";
      FailureOr<LinearOp> linear = unpack(cols, reshape);
      if (failed(linear))
        return failure();
      SmallVector<int64_t> rows;
      for (int64_t s : headStarts)
        rows.push_back(s * D);
      return columnParallel(*linear, heads * D, rows);
    }
  }

  /// Splits one attention layer; returns the kv heads each rank caches.
  FailureOr<int64_t> splitAttention(AttentionOp op) {
    auto qt = cast<RankedTensorType>(op.getQuery().getType());
    auto kt = cast<RankedTensorType>(op.getKey().getType());
    const int64_t H = qt.getDimSize(1), KV = kt.getDimSize(1);
    if (H % tp_ != 0)
      return op.emitOpError()
             << "llmc-shard: " << H << " query heads do not split over " << tp_
             << " ranks";
    int64_t kvHeads;
    SmallVector<int64_t> kvStarts;
    if (KV % tp_ == 0) {
      kvHeads = KV / tp_;
      kvStarts = evenStarts(kvHeads);
    } else if (tp_ % KV == 0) {
      kvHeads = 1; // replicated: rank r's query heads all read kv head r*KV/tp
      for (int64_t r = 0; r < tp_; ++r)
        kvStarts.push_back(r * KV / tp_);
    } else {
      return op.emitOpError()
             << "llmc-shard: " << KV << " kv heads neither split over nor "
             << "replicate evenly across " << tp_ << " ranks";
    }
    auto read = op.getKey().getDefiningOp<KVReadOp>();
    auto write = read ? read.getCache().getDefiningOp<KVWriteOp>() : nullptr;
    if (!read || read.getValue() != op.getValue() || !write ||
        write.getLayer() != read.getLayer())
      return op.emitOpError() << "llmc-shard: attention must read the layer "
                                 "it writes (run llmc-insert-kv-cache first)";
    const int64_t heads = H / tp_;
    if (Value sinks = op.getSinks()) // gpt-oss: one logit per query head
      if (failed(shardParam(sinks, op, 0, heads, evenStarts(heads))))
        return failure();
    if (failed(splitHeadsBack(op.getQuery(), heads, evenStarts(heads))) ||
        failed(splitHeadsBack(write.getKey(), kvHeads, kvStarts)) ||
        failed(splitHeadsBack(write.getValue(), kvHeads, kvStarts)))
      return failure();
    narrow(read.getKey(), 1, kvHeads);
    narrow(read.getValue(), 1, kvHeads);

    // The output: [T, H, Dv] -> reshape [T, H * Dv] -> the O projection.
    const int64_t Dv = cast<RankedTensorType>(op.getType()).getDimSize(2);
    narrow(op.getResult(), 1, heads);
    if (!op->hasOneUse())
      return op.emitOpError() << "llmc-shard: its result has other users";
    auto reshape = dyn_cast<ReshapeOp>(*op->user_begin());
    if (!reshape || !reshape->hasOneUse())
      return op.emitOpError()
             << "llmc-shard: its result must go through one reshape";
    narrow(reshape.getResult(), 1, heads * Dv);
    auto o = dyn_cast<LinearOp>(*reshape->user_begin());
    if (!o || o.getInput() != reshape.getResult())
      return reshape.emitOpError()
             << "llmc-shard: the heads must meet an output llmc.linear";
    if (failed(rowParallel(o, heads * Dv, evenStarts(heads * Dv))))
      return failure();
    return kvHeads;
  }

  /// The ops from `input` back to the projections `Up` that make it: the
  /// activation between (silu/gelu, times up) into `region`, the
  /// projections into `ups`; each value used once.
  template <typename Up>
  LogicalResult activationOf(Operation *down, Value input,
                             SetVector<Operation *> &region,
                             SetVector<Operation *> &ups) {
    SmallVector<Value> work{input};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      Operation *def = v.getDefiningOp();
      if (!def || !v.hasOneUse())
        return down->emitOpError() << "llmc-shard: its input's producers have "
                                      "other users (cannot split the MLP)";
      if (isa<SliceOp>(def) && std::is_same_v<Up, LinearOp>) {
        FailureOr<LinearOp> part = unpack(v, down);
        if (failed(part))
          return failure();
        def = *part;
      }
      if (isa<Up>(def)) {
        if (done_.contains(def))
          return def->emitOpError() << "llmc-shard: split twice";
        ups.insert(def);
        continue;
      }
      auto clamped = dyn_cast<ClampedSwiGLUOp>(def);
      if (clamped && !clamped.getInterleaved())
        return def->emitOpError() << "llmc-shard: a gate-first clamped swiglu "
                                     "does not split by contiguous columns";
      // gpt-oss's expert ops only between expert linears (splitMoe splits
      // each width on its own; splitMlp one width for all).
      constexpr bool experts = std::is_same_v<Up, ExpertLinearOp>;
      if (!isa<MulOp, SiluOp, GeluOp>(def) &&
          !(experts && isa<ClampedSwiGLUOp, ExpertBiasOp>(def)))
        return def->emitOpError()
               << "llmc-shard: cannot split an MLP through it";
      region.insert(def);
      // An expert bias's own operands (the bias, the experts) stay out.
      for (Value in : isa<ExpertBiasOp>(def) ? def->getOperands().take_front()
                                             : def->getOperands())
        work.push_back(in);
    }
    return success();
  }

  /// The intermediate width `I` of rank's share, or an error on `op`.
  FailureOr<int64_t> share(Operation *op, int64_t I) {
    if (I % tp_ != 0)
      return op->emitOpError() << "llmc-shard: intermediate size " << I
                               << " does not split over " << tp_ << " ranks";
    return I / tp_;
  }

  /// `down`'s input is an activation of linears of a replicated input: they
  /// are column-parallel over the intermediate size, `down` row-parallel.
  LogicalResult splitMlp(LinearOp down) {
    SetVector<Operation *> region, ups;
    if (failed(activationOf<LinearOp>(down, down.getInput(), region, ups)))
      return failure();
    FailureOr<int64_t> per = share(down, lastDim(down.getInput()));
    if (failed(per))
      return failure();
    for (Operation *up : ups)
      if (failed(columnParallel(cast<LinearOp>(up), *per, evenStarts(*per))))
        return failure();
    for (Operation *op : region)
      narrow(op->getResult(0), -1, *per);
    return rowParallel(down, *per, evenStarts(*per));
  }

  /// moe_combine(expert_linear(activation(expert_linear(x, W1), ...), W2)):
  /// every expert's intermediate width split as the dense MLP's (W1, W3
  /// [E, I, H] by rows, W2 [E, H, I] by columns); the combined partial sums
  /// meet in one all_reduce.
  LogicalResult splitMoe(MoECombineOp combine) {
    // gpt-oss adds each expert's down bias before the combine: rank 0's.
    Value partial = combine.getInput();
    if (auto bias = partial.getDefiningOp<ExpertBiasOp>()) {
      if (!partial.hasOneUse())
        return combine.emitOpError() << "llmc-shard: its input has other users";
      if (failed(onRankZero(bias->getOperand(1), bias)))
        return failure();
      partial = bias->getOperand(0);
    }
    auto down = partial.getDefiningOp<ExpertLinearOp>();
    if (!down || !partial.hasOneUse())
      return combine.emitOpError()
             << "llmc-shard: its input must be one expert_linear";
    SetVector<Operation *> region, ups;
    if (failed(
            activationOf<ExpertLinearOp>(down, down.getInput(), region, ups)))
      return failure();
    FailureOr<int64_t> downPer = share(down, lastDim(down.getInput()));
    if (failed(downPer))
      return failure();
    // Each width splits in N (gpt-oss's gate_up is 2I wide, its activation
    // I): rank r takes the r-th run of every one.
    auto split = [&](Operation *op) -> FailureOr<int64_t> {
      return share(op, lastDim(op->getResult(0)));
    };
    for (Operation *op : ups) {
      auto up = cast<ExpertLinearOp>(op);
      FailureOr<int64_t> per = split(up);
      if (failed(per))
        return failure();
      done_.insert(up);
      if (failed(shardParam(up.getWeight(), up, 1, *per, evenStarts(*per))))
        return failure();
      narrow(up.getResult(), -1, *per);
    }
    for (Operation *op : region) {
      FailureOr<int64_t> per = split(op);
      if (failed(per))
        return failure();
      if (isa<ExpertBiasOp>(op) &&
          failed(shardParam(op->getOperand(1), op, 1, *per, evenStarts(*per))))
        return failure();
      narrow(op->getResult(0), -1, *per);
    }
    done_.insert(down);
    if (failed(shardParam(down.getWeight(), down, 2, *downPer,
                          evenStarts(*downPer))))
      return failure();
    sumAfter(combine);
    return success();
  }

  /// The cache argument, every write and the returned cache hold `heads`
  /// kv heads: each rank caches its own.
  void narrowCache(int64_t heads) {
    Block &entry = func_.getBody().front();
    for (BlockArgument arg : entry.getArguments()) {
      auto t = dyn_cast<KVCacheType>(arg.getType());
      if (!t)
        continue;
      auto narrowed = KVCacheType::get(t.getContext(), t.getLayers(), heads,
                                       t.getHeadDim(), t.getDtype());
      arg.setType(narrowed);
      func_.walk([&](KVWriteOp w) { w.getResult().setType(narrowed); });
    }
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    func_.setFunctionType(FunctionType::get(
        func_.getContext(), entry.getArgumentTypes(), ret.getOperandTypes()));
  }

  func::FuncOp func_;
  int64_t tp_;
  llvm::DenseSet<Operation *> done_;
  llvm::DenseMap<Operation *, int64_t> packedAt_; // unpack()'s parts
};

struct ShardPass : impl::ShardBase<ShardPass> {
  using ShardBase::ShardBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (tp < 1) {
      module.emitError() << "llmc-shard: tp must be at least 1, got " << tp;
      return signalPassFailure();
    }
    if (tp == 1)
      return;
    if (module->hasAttr("llmc.tp")) {
      module.emitError() << "llmc-shard: the module is split already";
      return signalPassFailure();
    }
    WalkResult lowered = module.walk([&](Operation *op) {
      if (isa<PagedAttentionOp, QuantizedLinearOp, QuantizedExpertLinearOp>(
              op)) {
        op->emitOpError() << "llmc-shard: runs before llmc-specialize-phases "
                             "and llmc-quantize";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (lowered.wasInterrupted())
      return signalPassFailure();
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(Sharder(func, tp).run()))
        return signalPassFailure();
    module->setAttr("llmc.tp", Builder(module).getI64IntegerAttr(tp));
  }
};

} // namespace
} // namespace mlir::llmc
