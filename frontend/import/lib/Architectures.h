//===- Architectures.h - One graph builder per family ---------*- C++ -*-===//
#pragma once

#include "GraphBuilder.h"

namespace llmc::import {

/// Where a family's tensors live: Hugging Face names or GGUF names.
enum class TensorNaming { HuggingFace, GGUF };

/// The names of a Llama-shaped decoder's tensors: "model.layers.N.<hf>" and
/// top-level "<hf>" in transformers' checkpoints, "blk.N.<gguf>" and
/// "<gguf>" in llama.cpp's.
struct DecoderNames {
  TensorNaming naming;
  std::string layer(int64_t i, const char *hf, const char *gguf) const {
    return naming == TensorNaming::GGUF
               ? "blk." + std::to_string(i) + "." + gguf
               : "model.layers." + std::to_string(i) + "." + hf;
  }
  std::string top(const char *hf, const char *gguf) const {
    return naming == TensorNaming::GGUF ? gguf : hf;
  }
};

/// Builds a family's forward graph; returns logits [T, vocab].
using BuildFn = mlir::Value (*)(GraphBuilder &g, const ModelConfig &c,
                                TensorNaming naming, mlir::Value ids,
                                mlir::Value positions);

/// Llama, Mistral and Qwen2: RMSNorm, rotary Q/K, grouped-query attention,
/// SwiGLU MLP. Returns logits [T, vocab].
mlir::Value buildLlama(GraphBuilder &g, const ModelConfig &c,
                       TensorNaming naming, mlir::Value ids,
                       mlir::Value positions);

/// GPT-2: learned positions, LayerNorm, packed c_attn, GELU MLP, tied head.
mlir::Value buildGPT2(GraphBuilder &g, const ModelConfig &c,
                      TensorNaming naming, mlir::Value ids,
                      mlir::Value positions);

/// Gemma 2: (1 + w) RMSNorms before and after each sublayer, a scaled
/// embedding, GeGLU, soft-capped attention scores and logits, a sliding
/// window on even layers.
mlir::Value buildGemma2(GraphBuilder &g, const ModelConfig &c,
                        TensorNaming naming, mlir::Value ids,
                        mlir::Value positions);

/// The builder of `family`: one line per family in Architectures.cpp.
BuildFn builderFor(ArchFamily family);

/// Checkpoint tensors that are buffers, not weights (GPT-2's attn.bias and
/// attn.masked_bias, Llama's rotary_emb.inv_freq): ignored on import.
bool isIgnorableBuffer(const std::string &name);

} // namespace llmc::import
