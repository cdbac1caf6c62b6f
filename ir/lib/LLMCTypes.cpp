//===- LLMCTypes.cpp - llmc dialect types ---------------------------------===//

#include "llmc/IR/LLMCTypes.h"
#include "llmc/IR/LLMCDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::llmc;

#define GET_TYPEDEF_CLASSES
#include "llmc/IR/LLMCTypes.cpp.inc"

void LLMCDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "llmc/IR/LLMCTypes.cpp.inc"
      >();
}

LogicalResult
KVCacheType::verify(llvm::function_ref<InFlightDiagnostic()> emitError,
                    int64_t layers, int64_t kvHeads, int64_t headDim,
                    Type dtype) {
  if (layers <= 0)
    return emitError() << "kv_cache layers must be positive, got " << layers;
  if (kvHeads <= 0)
    return emitError() << "kv_cache kv_heads must be positive, got " << kvHeads;
  if (headDim <= 0)
    return emitError() << "kv_cache head_dim must be positive, got " << headDim;
  if (!dtype.isF32() && !dtype.isBF16() && !dtype.isF16() &&
      !dtype.isSignlessInteger(8) && !dtype.isFloat8E4M3FN())
    return emitError() << "kv_cache dtype must be f32, bf16, f16, i8 or "
                          "f8E4M3FN, got "
                       << dtype;
  return success();
}

int64_t KVCacheType::bytesPerToken() const {
  int64_t bytes = getDtype().getIntOrFloatBitWidth() / 8;
  // An 8-bit row carries an f32 scale (per token and kv head).
  int64_t scale = bytes == 1 ? 4 : 0;
  return 2 * getLayers() * getKvHeads() * (getHeadDim() * bytes + scale);
}
