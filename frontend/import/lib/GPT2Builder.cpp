//===- GPT2Builder.cpp - GPT-2 graphs
//--------------------------------------===//
//
// Mirrors transformers' GPT2Block. Conv1D weights are stored [in, out]
// (y = x @ W + b); they are imported as transposed params so every linear in
// llmc has the torch.nn.Linear [out, in] layout. GGUF files (llama.cpp's
// gpt2) hold them as [out, in] already, under llama.cpp's names.
//
//===----------------------------------------------------------------------===//

#include "Architectures.h"

#include "llvm/ADT/StringRef.h"

namespace llmc::import {

bool isIgnorableBuffer(const std::string &name) {
  llvm::StringRef n(name);
  return n.ends_with(".attn.bias") || n.ends_with(".attn.masked_bias") ||
         n.ends_with(".rotary_emb.inv_freq");
}

namespace {

/// transformers' names, or those of llama.cpp's converter (which stores the
/// Conv1D weights transposed to [out, in] already).
struct GPT2Names {
  TensorNaming naming;
  std::string prefix; // "transformer." or "" (HF); unused for GGUF

  std::string top(const char *hf, const char *gguf) const {
    return naming == TensorNaming::GGUF ? gguf : prefix + hf;
  }
  std::string layer(int64_t i, const char *hf, const char *gguf) const {
    return naming == TensorNaming::GGUF
               ? "blk." + std::to_string(i) + "." + gguf
               : prefix + "h." + std::to_string(i) + "." + hf;
  }
  bool convTransposed() const { return naming == TensorNaming::HuggingFace; }
};

} // namespace

mlir::Value buildGPT2(GraphBuilder &g, const ModelConfig &c,
                      TensorNaming naming, mlir::Value ids,
                      mlir::Value positions) {
  const int64_t h = c.hiddenSize, ff = c.intermediateSize;
  // transformers writes "transformer.h.0..."; the original OpenAI exports
  // have no prefix.
  GPT2Names n{naming, g.hasWeight("wte.weight") &&
                              !g.hasWeight("transformer.wte.weight")
                          ? ""
                          : "transformer."};
  mlir::Value wte =
      g.param(n.top("wte.weight", "token_embd.weight"), {c.vocabSize, h});
  mlir::Value wpe =
      g.param(n.top("wpe.weight", "position_embd.weight"), {c.maxPositions, h});
  mlir::Value tok = g.embedding(wte, ids);
  mlir::Value pos = g.embedding(wpe, positions);
  mlir::Value x = g.add(tok, pos);
  llvm::StringRef approx = c.hiddenAct == "gelu_new" ? "tanh" : "none";

  for (int64_t i = 0; i < c.numLayers; ++i) {
    auto vec = [&](const char *hf, const char *gguf, int64_t size) {
      return g.param(n.layer(i, hf, gguf), {size});
    };
    auto conv = [&](const char *hf, const char *gguf, int64_t out, int64_t in) {
      return g.param(n.layer(i, hf, gguf), {out, in}, n.convTransposed());
    };
    // One statement per op, so the IR order does not depend on the
    // compiler's argument evaluation order.
    mlir::Value ln1w = vec("ln_1.weight", "attn_norm.weight", h);
    mlir::Value ln1b = vec("ln_1.bias", "attn_norm.bias", h);
    mlir::Value n1 = g.layerNorm(x, ln1w, ln1b);
    mlir::Value wqkv = conv("attn.c_attn.weight", "attn_qkv.weight", 3 * h, h);
    mlir::Value bqkv = vec("attn.c_attn.bias", "attn_qkv.bias", 3 * h);
    mlir::Value qkv = g.linear(n1, wqkv, bqkv);
    mlir::Value q = g.splitHeads(g.slice(qkv, 0, h), c.numHeads, c.headDim);
    mlir::Value k = g.splitHeads(g.slice(qkv, h, h), c.numHeads, c.headDim);
    mlir::Value v = g.splitHeads(g.slice(qkv, 2 * h, h), c.numHeads, c.headDim);
    mlir::Value attn = g.mergeHeads(g.attention(q, k, v, 0));
    mlir::Value wo = conv("attn.c_proj.weight", "attn_output.weight", h, h);
    mlir::Value bo = vec("attn.c_proj.bias", "attn_output.bias", h);
    x = g.add(x, g.linear(attn, wo, bo));
    mlir::Value ln2w = vec("ln_2.weight", "ffn_norm.weight", h);
    mlir::Value ln2b = vec("ln_2.bias", "ffn_norm.bias", h);
    mlir::Value n2 = g.layerNorm(x, ln2w, ln2b);
    mlir::Value wfc = conv("mlp.c_fc.weight", "ffn_up.weight", ff, h);
    mlir::Value bfc = vec("mlp.c_fc.bias", "ffn_up.bias", ff);
    mlir::Value fc = g.gelu(g.linear(n2, wfc, bfc), approx);
    mlir::Value wp = conv("mlp.c_proj.weight", "ffn_down.weight", h, ff);
    mlir::Value bp = vec("mlp.c_proj.bias", "ffn_down.bias", h);
    mlir::Value proj = g.linear(fc, wp, bp);
    x = g.add(x, proj);
  }
  mlir::Value lnfw = g.param(n.top("ln_f.weight", "output_norm.weight"), {h});
  mlir::Value lnfb = g.param(n.top("ln_f.bias", "output_norm.bias"), {h});
  x = g.layerNorm(x, lnfw, lnfb);
  mlir::Value head = c.tiedEmbeddings ? wte
                                      : g.param(naming == TensorNaming::GGUF
                                                    ? "output.weight"
                                                    : "lm_head.weight",
                                                {c.vocabSize, h});
  return g.linear(x, head);
}

} // namespace llmc::import
