//===- GraphBuilder.h - Emits the decomposed llmc ops ----------*- C++ -*-===//
//
// Architecture builders describe a model in terms of these helpers; each one
// emits exactly the decomposed ops of the reference math, with result types
// derived from operand shapes (dynamic token dimension T).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "WeightSource.h"
#include "llmc/config/model_config.h"

#include "mlir/IR/Builders.h"

namespace llmc::import {

class GraphBuilder {
public:
  GraphBuilder(mlir::OpBuilder &b, WeightSource &weights,
               const ModelConfig &config);

  /// A weight of logical shape `shape`. `transposed`: the checkpoint stores
  /// it [in, out]; `ropeHeads` > 0: rows carry GGUF's rotary permutation;
  /// `offset`: added to every value when the plan is written (Gemma's norms
  /// store w for a 1 + w scale).
  mlir::Value param(const std::string &name, std::vector<int64_t> shape,
                    bool transposed = false, int64_t ropeHeads = 0,
                    double offset = 0);
  /// `param` if the checkpoint has it, else null (optional biases).
  mlir::Value optionalParam(const std::string &name, std::vector<int64_t> shape,
                            bool transposed = false);

  bool hasWeight(const std::string &name) const {
    return weights_.contains(name);
  }

  /// Stacked experts [experts, rows, cols]: `name` holds "{e}" (one
  /// tensor per expert, as Hugging Face stores them) or names a tensor that
  /// already stacks them (GGUF's *_exps). Errors say when the checkpoint's
  /// expert count is not the config's.
  /// `transposed`: each expert is stored [cols, rows] and used as x·W
  /// (gpt-oss's unquantized gate_up_proj and down_proj).
  mlir::Value expertParam(const std::string &name, int64_t experts,
                          int64_t rows, int64_t cols, bool transposed = false);
  /// Stacked experts packed from several stacked tensors: expert e's rows
  /// are each tensor's rows of expert e, in order ([E, rows, cols] each;
  /// rows = 0: [E, cols] each, one row per expert: llama.cpp's expert
  /// biases). The result is [E, names.size() * max(rows, 1), cols].
  mlir::Value packedExpertParam(const std::vector<std::string> &names,
                                int64_t experts, int64_t rows, int64_t cols);
  /// A router [experts, hidden]; a checkpoint with another expert count is
  /// told so.
  mlir::Value routerParam(const std::string &name, int64_t experts,
                          int64_t hidden);

  mlir::Value embedding(mlir::Value table, mlir::Value ids);
  mlir::Value rmsNorm(mlir::Value x, mlir::Value w);
  mlir::Value layerNorm(mlir::Value x, mlir::Value w, mlir::Value b);
  mlir::Value linear(mlir::Value x, mlir::Value w, mlir::Value bias = {});
  mlir::Value slice(mlir::Value x, int64_t start, int64_t size);
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value scale(mlir::Value x, double factor);
  /// cap * tanh(x / cap).
  mlir::Value softcap(mlir::Value x, double cap);
  mlir::Value silu(mlir::Value x);
  mlir::Value gelu(mlir::Value x, llvm::StringRef approximate);
  /// [T, heads*dim] -> [T, heads, dim] and back.
  mlir::Value splitHeads(mlir::Value x, int64_t heads, int64_t dim);
  mlir::Value mergeHeads(mlir::Value x);
  /// RoPE with the config's base and scaling, or with `theta` and
  /// `scaling` (Gemma 3's sliding layers: their own base, no scaling).
  mlir::Value rope(mlir::Value x, mlir::Value positions);
  mlir::Value rope(mlir::Value x, mlir::Value positions, double theta,
                   const std::optional<RopeScaling> &scaling);
  /// Scores, mask, softmax and weighted sum over [T, H, D] operands,
  /// repeating kv heads for grouped-query attention. Scores are q.k *
  /// `scale` (0: head_dim^-0.5), soft-capped at `softcap` (0: not) before
  /// the mask.
  /// `sinks` [H]: one more logit per head in the softmax's denominator.
  mlir::Value attention(mlir::Value q, mlir::Value k, mlir::Value v,
                        int64_t window, double scale = 0, double softcap = 0,
                        mlir::Value sinks = {});

  /// An MoE block over x [T, H]: router logits, top-k gating, the SwiGLU
  /// experts of each token's choice, and their weighted sum [T, H].
  /// gpt-oss's (`gptOss`): a biased router, top-k then softmax, one packed
  /// gate/up weight `gateUp` [E, 2I, H] (rows alternating gate and up when
  /// `interleaved`, else gate rows then up rows) with biases, the clamped
  /// activation, a biased down projection.
  struct Experts {
    mlir::Value router, gate, up, down; // [E, H], [E, I, H] x2, [E, H, I]
    int64_t perToken;
    bool normalize;
    bool gptOss = false, interleaved = false;
    double limit = 0, alpha = 0;
    mlir::Value routerBias, gateUp, gateUpBias, downBias;
  };
  mlir::Value moe(mlir::Value x, const Experts &e);

  mlir::RankedTensorType tensor(llvm::ArrayRef<int64_t> shape) const;

private:
  bool keptAsStored(weights::DType t) const;
  mlir::Location loc() const { return b_.getUnknownLoc(); }
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);

  mlir::OpBuilder &b_;
  WeightSource &weights_;
  const ModelConfig &config_;
  mlir::Type f32_;
};

} // namespace llmc::import
