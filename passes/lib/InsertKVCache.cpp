//===- InsertKVCache.cpp - K/V through the paged cache
//---------------------===//
//
//   %o = llmc.attention %q, %k, %v {causal}
//   =>
//   %c1 = llmc.kv_write %c0, %k, %v, %slots {layer = i}
//   %hk, %hv = llmc.kv_read %c1, %block_tables, %context_lens {layer = i}
//   %o = llmc.attention %q, %hk, %hv, %query_start, %context_lens {causal}
//
//===----------------------------------------------------------------------===//

#include "llmc/IR/LLMCOps.h"
#include "llmc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::llmc {
#define GEN_PASS_DEF_INSERTKVCACHE
#include "llmc/Passes/Passes.h.inc"

namespace {

struct InsertKVCachePass : impl::InsertKVCacheBase<InsertKVCachePass> {
  using InsertKVCacheBase::InsertKVCacheBase;

  /// The cache's storage type by its flag name; null for an unknown name.
  Type storageType(Type keys) {
    Builder b(&getContext());
    return llvm::StringSwitch<Type>(kvDtype)
        .Case("", keys)
        .Case("f32", b.getF32Type())
        .Case("bf16", b.getBF16Type())
        .Case("f16", b.getF16Type())
        .Case("int8", b.getIntegerType(8))
        .Case("fp8", b.getFloat8E4M3FNType())
        .Default(Type());
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(insertInto(func)))
        return signalPassFailure();
  }

  LogicalResult insertInto(func::FuncOp func) {
    SmallVector<AttentionOp> layers;
    func.walk([&](AttentionOp op) {
      if (op.getCausal() && op.getSegments().empty())
        layers.push_back(op);
    });
    if (layers.empty())
      return success();

    auto keyType = cast<RankedTensorType>(layers.front().getKey().getType());
    int64_t kvHeads = keyType.getDimSize(1), headDim = keyType.getDimSize(2);
    for (AttentionOp op : layers) {
      auto t = cast<RankedTensorType>(op.getKey().getType());
      if (t.getDimSize(1) != kvHeads || t.getDimSize(2) != headDim)
        return op.emitOpError() << "every layer must share the cache geometry ("
                                << kvHeads << " kv heads of " << headDim << ")";
    }

    OpBuilder b(func.getContext());
    Type storage = storageType(keyType.getElementType());
    if (!storage)
      return func.emitError() << "llmc-insert-kv-cache: kv-dtype '" << kvDtype
                              << "' is not f32, bf16, f16, int8 or fp8";
    auto cacheType = KVCacheType::get(func.getContext(), layers.size(), kvHeads,
                                      headDim, storage);
    constexpr int64_t kDyn = ShapedType::kDynamic;
    auto vec = RankedTensorType::get({kDyn}, b.getI32Type());
    auto mat = RankedTensorType::get({kDyn, kDyn}, b.getI32Type());

    Block &entry = func.getBody().front();
    Location loc = func.getLoc();
    auto addArg = [&](Type type, StringRef name) -> Value {
      unsigned index = func.getNumArguments();
      func.insertArgument(index, type,
                          b.getDictionaryAttr(b.getNamedAttr(
                              "llmc.name", b.getStringAttr(name))),
                          loc);
      return func.getArgument(index);
    };
    Value cache = addArg(cacheType, "kv_cache");
    Value slots = addArg(vec, "slot_mapping");
    Value blockTables = addArg(mat, "block_tables");
    Value contextLens = addArg(vec, "context_lens");
    Value queryStart = addArg(vec, "query_start");

    for (auto [layer, op] : llvm::enumerate(layers)) {
      b.setInsertionPoint(op);
      auto kvType = cast<RankedTensorType>(op.getKey().getType());
      auto histType = RankedTensorType::get({kDyn, kvHeads, headDim},
                                            kvType.getElementType());
      cache =
          b.create<KVWriteOp>(op.getLoc(), cacheType, cache, op.getKey(),
                              op.getValue(), slots, b.getI64IntegerAttr(layer));
      auto read = b.create<KVReadOp>(op.getLoc(), histType, histType, cache,
                                     blockTables, contextLens,
                                     b.getI64IntegerAttr(layer));
      op.getKeyMutable().assign(read.getKey());
      op.getValueMutable().assign(read.getValue());
      op.getSegmentsMutable().assign(ValueRange{queryStart, contextLens});
    }

    // The updated cache is returned: the step's writes outlive the call.
    auto ret = cast<func::ReturnOp>(entry.getTerminator());
    SmallVector<Value> results(ret.getOperands());
    results.push_back(cache);
    ret->setOperands(results);
    func.setFunctionType(b.getFunctionType(entry.getArgumentTypes(),
                                           ValueRange(results).getTypes()));
    return success();
  }
};

} // namespace
} // namespace mlir::llmc
