//===- Passes.h - llmc passes --------------------------------*- C++ -*-===//
#pragma once

#include "llmc/IR/LLMCDialect.h"
#include "llmc/IR/LLMCOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <string>
#include <vector>

namespace mlir::llmc {

#define GEN_PASS_DECL
#include "llmc/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "llmc/Passes/Passes.h.inc"

/// What `llmc compile` and `llmc-opt --llmc-pipeline` run.
struct PipelineOptions {
  std::string dtype = "f32";  // f32 | bf16 | f16: the KV cache and any
                              // weight --quant leaves alone
  std::string quant = "none"; // none | int8 | int4 | ggml (resolveQuant)
  /// The KV cache's dtype: f32 | bf16 | f16 | int8 | fp8; "" = `dtype`
  /// (llmc compile fills in defaultKvDtype).
  std::string kvDtype;
  int64_t group = 32;
  int64_t tp = 1; // tensor-parallel ranks (llmc-shard)
  /// The LM head in the weight type too (bf16, int8, int4) and the
  /// embedding tables in bf16 (f16 with --dtype f16); false keeps both f32
  /// (`llmc compile --no-quantize-head`).
  bool quantizeHead = true;
  std::vector<std::string> disabled; // pass arguments to skip
};

/// The passes that may be turned off: the graph stays correct without them.
const std::vector<std::string> &optionalPasses();

/// Builds the pipeline; disabling a required pass is an error naming it.
LogicalResult buildPipeline(OpPassManager &pm, const PipelineOptions &options,
                            std::string &error);

/// `quant` with "auto" resolved: "ggml" when the module has weights a GGUF
/// stores in block formats or in F16/BF16 (they stay so), else "none".
std::string resolveQuant(ModuleOp module, const std::string &quant);

/// The KV dtype a plan gets unless told: bf16 when weights are quantized
/// (`quant` int8/int4, or a GGUF with block-format weights), else `dtype`.
std::string defaultKvDtype(ModuleOp module, const std::string &dtype,
                           const std::string &quant);

/// The bits of the llmc format `llmc-quantize` mode=ggml gives a GGUF type:
/// 16 for F16 and BF16, 8 or 4 for a block format ("Q4_K", ...); 0 for a
/// name it does not know.
int64_t ggmlKeptBits(StringRef ggmlType);
/// Whether mode=ggml keeps this weight's GGUF type as it is: Q4_K, Q5_K or
/// Q6_K over whole super-blocks of 256 (MXFP4 has its own path).
bool nativeKQuant(ParamOp p);

/// The LM head of a model function: the llmc.linear whose result is the
/// logits (the first result), or feeds them through a final llmc.softcap
/// (Gemma 2). Null if the function has no such linear.
LinearOp lmHeadOf(func::FuncOp func);

/// Registers every llmc pass and the named pipeline `llmc-pipeline` with the
/// global registry, so llmc-opt and `llmc compile` see the same set.
void registerAllLLMCPasses();

} // namespace mlir::llmc
