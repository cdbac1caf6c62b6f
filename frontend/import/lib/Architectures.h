//===- Architectures.h - One graph builder per family ---------*- C++ -*-===//
#pragma once

#include "GraphBuilder.h"

namespace llmc::import {

/// Where a family's tensors live: Hugging Face names or GGUF names.
enum class TensorNaming { HuggingFace, GGUF };

/// Llama, Mistral and Qwen2: RMSNorm, rotary Q/K, grouped-query attention,
/// SwiGLU MLP. Returns logits [T, vocab].
mlir::Value buildLlama(GraphBuilder &g, const ModelConfig &c,
                       TensorNaming naming, mlir::Value ids,
                       mlir::Value positions);

/// GPT-2: learned positions, LayerNorm, packed c_attn, GELU MLP, tied head.
mlir::Value buildGPT2(GraphBuilder &g, const ModelConfig &c,
                      TensorNaming naming, mlir::Value ids,
                      mlir::Value positions);

/// Checkpoint tensors that are buffers, not weights (GPT-2's attn.bias and
/// attn.masked_bias, Llama's rotary_emb.inv_freq): ignored on import.
bool isIgnorableBuffer(const std::string &name);

} // namespace llmc::import
