//===- GPT2Builder.cpp - GPT-2 graphs
//--------------------------------------===//
//
// Mirrors transformers' GPT2Block. Conv1D weights are stored [in, out]
// (y = x @ W + b); they are imported as transposed params so every linear in
// llmc has the torch.nn.Linear [out, in] layout.
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

mlir::Value buildGPT2(GraphBuilder &g, const ModelConfig &c, mlir::Value ids,
                      mlir::Value positions) {
  const int64_t h = c.hiddenSize, ff = c.intermediateSize;
  // transformers writes "transformer.h.0..."; the original OpenAI exports
  // have no prefix.
  std::string prefix =
      g.hasWeight("wte.weight") && !g.hasWeight("transformer.wte.weight")
          ? ""
          : "transformer.";
  auto name = [&](const std::string &suffix) { return prefix + suffix; };
  mlir::Value wte = g.param(name("wte.weight"), {c.vocabSize, h});
  mlir::Value wpe = g.param(name("wpe.weight"), {c.maxPositions, h});
  mlir::Value tok = g.embedding(wte, ids);
  mlir::Value pos = g.embedding(wpe, positions);
  mlir::Value x = g.add(tok, pos);
  llvm::StringRef approx = c.hiddenAct == "gelu_new" ? "tanh" : "none";

  for (int64_t i = 0; i < c.numLayers; ++i) {
    std::string p = "h." + std::to_string(i) + ".";
    auto vec = [&](const std::string &s, int64_t n) {
      return g.param(name(p + s), {n});
    };
    auto conv = [&](const std::string &s, int64_t out, int64_t in) {
      return g.param(name(p + s), {out, in}, /*transposed=*/true);
    };
    // One statement per op, so the IR order does not depend on the
    // compiler's argument evaluation order.
    mlir::Value ln1w = vec("ln_1.weight", h);
    mlir::Value ln1b = vec("ln_1.bias", h);
    mlir::Value n1 = g.layerNorm(x, ln1w, ln1b);
    mlir::Value wqkv = conv("attn.c_attn.weight", 3 * h, h);
    mlir::Value bqkv = vec("attn.c_attn.bias", 3 * h);
    mlir::Value qkv = g.linear(n1, wqkv, bqkv);
    mlir::Value q = g.splitHeads(g.slice(qkv, 0, h), c.numHeads, c.headDim);
    mlir::Value k = g.splitHeads(g.slice(qkv, h, h), c.numHeads, c.headDim);
    mlir::Value v = g.splitHeads(g.slice(qkv, 2 * h, h), c.numHeads, c.headDim);
    mlir::Value attn = g.mergeHeads(g.attention(q, k, v, 0));
    mlir::Value wo = conv("attn.c_proj.weight", h, h);
    mlir::Value bo = vec("attn.c_proj.bias", h);
    x = g.add(x, g.linear(attn, wo, bo));
    mlir::Value ln2w = vec("ln_2.weight", h);
    mlir::Value ln2b = vec("ln_2.bias", h);
    mlir::Value n2 = g.layerNorm(x, ln2w, ln2b);
    mlir::Value wfc = conv("mlp.c_fc.weight", ff, h);
    mlir::Value bfc = vec("mlp.c_fc.bias", ff);
    mlir::Value fc = g.gelu(g.linear(n2, wfc, bfc), approx);
    mlir::Value wp = conv("mlp.c_proj.weight", h, ff);
    mlir::Value bp = vec("mlp.c_proj.bias", h);
    mlir::Value proj = g.linear(fc, wp, bp);
    x = g.add(x, proj);
  }
  mlir::Value lnfw = g.param(name("ln_f.weight"), {h});
  mlir::Value lnfb = g.param(name("ln_f.bias"), {h});
  x = g.layerNorm(x, lnfw, lnfb);
  mlir::Value head =
      c.tiedEmbeddings ? wte : g.param("lm_head.weight", {c.vocabSize, h});
  return g.linear(x, head);
}

} // namespace llmc::import
