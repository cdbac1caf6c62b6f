//===- Pipeline.cpp - The named pass pipeline
//------------------------------===//
//
// Phase 1: recognise the model's structure (attention, KV cache, phases).
// Phase 2: optimise (fusion, weight conversion).
// Phase 3: lower (memory planning, serialization).
//
//===----------------------------------------------------------------------===//

#include "llmc/IR/LLMCOps.h"
#include "llmc/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::llmc {

const std::vector<std::string> &optionalPasses() {
  static const std::vector<std::string> passes = {"llmc-fuse",
                                                  "llmc-plan-memory"};
  return passes;
}

LogicalResult buildPipeline(OpPassManager &pm, const PipelineOptions &o,
                            std::string &error) {
  static const std::vector<std::string> all = {
      "llmc-fuse-attention", "llmc-insert-kv-cache", "llmc-specialize-phases",
      "llmc-fuse",           "llmc-quantize",        "llmc-plan-memory",
      "llmc-serialize"};
  for (const std::string &d : o.disabled) {
    if (!llvm::is_contained(all, d)) {
      error = "--disable-pass: unknown pass '" + d +
              "' (passes: " + llvm::join(all, ", ") + ")";
      return failure();
    }
    if (!llvm::is_contained(optionalPasses(), d) && d != "llmc-quantize") {
      error = "--disable-pass: pass '" + d +
              "' is required: the plan cannot run without it "
              "(optional: " +
              llvm::join(optionalPasses(), ", ") + ")";
      return failure();
    }
  }
  auto enabled = [&](StringRef name) {
    return !llvm::is_contained(o.disabled, name.str());
  };
  pm.addPass(createFuseAttention());
  InsertKVCacheOptions kv;
  kv.kvDtype = o.kvDtype.empty() ? o.dtype : o.kvDtype;
  pm.addPass(createInsertKVCache(kv));
  if (o.tp > 1) {
    ShardOptions shard;
    shard.tp = o.tp;
    pm.addPass(createShard(shard));
  }
  pm.addPass(createSpecializePhases());
  if (enabled("llmc-fuse"))
    pm.addPass(createFuse());
  if (o.quant == "auto") {
    error = "--quant auto must be resolved against the module first "
            "(resolveQuant)";
    return failure();
  }
  std::string mode = o.quant != "none" ? o.quant : o.dtype;
  if (enabled("llmc-quantize") && mode != "f32") {
    QuantizeOptions q;
    q.mode = mode;
    q.otherwise = o.dtype;
    q.group = o.group;
    q.quantizeHead = o.quantizeHead;
    q.quantizeEmbedding = o.quantizeHead;
    pm.addPass(createQuantize(q));
  }
  pm.addPass(createCanonicalizerPass());
  if (enabled("llmc-plan-memory"))
    pm.addPass(createPlanMemory());
  pm.addPass(createSerialize());
  return success();
}

std::string resolveQuant(ModuleOp module, const std::string &quant) {
  if (quant != "auto")
    return quant;
  bool ggml = false;
  module.walk([&](ParamOp p) {
    ggml |= static_cast<bool>(p.getGgmlType());
    return ggml ? WalkResult::interrupt() : WalkResult::advance();
  });
  return ggml ? "ggml" : "none";
}

std::string defaultKvDtype(ModuleOp module, const std::string &dtype,
                           const std::string &quant) {
  if (quant == "int8" || quant == "int4")
    return "bf16";
  bool blocks = false;
  if (quant == "ggml")
    module.walk([&](ParamOp p) {
      // MXFP4 is a checkpoint's own exact format (gpt-oss), not a
      // rounding llmc chose: the cache follows --dtype.
      if (auto t = p.getGgmlType(); t && *t != "MXFP4")
        blocks |= ggmlKeptBits(*t) > 0 && ggmlKeptBits(*t) <= 8;
    });
  return blocks ? "bf16" : dtype;
}

namespace {
struct PipelineCLOptions : public PassPipelineOptions<PipelineCLOptions> {
  Option<std::string> dtype{*this, "dtype", llvm::cl::desc("f32, bf16 or f16"),
                            llvm::cl::init("f32")};
  Option<std::string> quant{*this, "quant",
                            llvm::cl::desc("none, int8, int4 or ggml"),
                            llvm::cl::init("none")};
  Option<std::string> kvDtype{
      *this, "kv-dtype",
      llvm::cl::desc("f32, bf16, f16, int8 or fp8 (default: dtype)"),
      llvm::cl::init("")};
  Option<int64_t> group{*this, "group", llvm::cl::desc("int4 group size"),
                        llvm::cl::init(32)};
  Option<bool> quantizeHead{*this, "quantize-head",
                            llvm::cl::desc("The LM head in the weight type"),
                            llvm::cl::init(true)};
  ListOption<std::string> disable{*this, "disable",
                                  llvm::cl::desc("Passes to skip")};
};
} // namespace

void registerAllLLMCPasses() {
  registerLLMCPasses();
  PassPipelineRegistration<PipelineCLOptions>(
      "llmc-pipeline", "The full llmc compilation pipeline (as llmc compile)",
      [](OpPassManager &pm, const PipelineCLOptions &cl) {
        PipelineOptions o;
        o.dtype = cl.dtype;
        o.quant = cl.quant;
        o.kvDtype = cl.kvDtype;
        o.group = cl.group;
        o.quantizeHead = cl.quantizeHead;
        o.disabled.assign(cl.disable.begin(), cl.disable.end());
        std::string error;
        if (failed(buildPipeline(pm, o, error)))
          llvm::report_fatal_error(llvm::StringRef(error), false);
      });
}

} // namespace mlir::llmc
