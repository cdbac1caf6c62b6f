//===- Gemma2Builder.cpp - Gemma 2 and Gemma 3 graphs ---------------------===//
//
// Mirrors transformers' Gemma2DecoderLayer (modeling_gemma2.py):
//   x = embed(ids) * sqrt(hidden)
//   x = x + post_attention_norm(o_proj(attn(input_norm(x))))
//   x = x + post_feedforward_norm(mlp(pre_feedforward_norm(x)))
//   logits = softcap(lm_head(norm(x)), final_logit_softcapping)
// with mlp(m) = down(gelu_tanh(gate(m)) * up(m)), attention scores
// q.k * query_pre_attn_scalar^-0.5 soft-capped before the mask, and a
// sliding window on even layers. Every RMSNorm scales by (1 + w): a
// checkpoint's w gets its 1 at compile time (the param's offset); llama.cpp's
// converter adds it before writing a GGUF. The tied head reads the unscaled
// table.
//
// Gemma 3 (modeling_gemma3.py) is the same layer plus a (1 + w) RMSNorm of
// every query and key head before RoPE, and RoPE of its own on the sliding
// layers (rope_local_base_freq, no scaling); its configs set no soft-caps.
//
//===----------------------------------------------------------------------===//

#include "Architectures.h"

#include <cmath>

namespace llmc::import {

mlir::Value buildGemma2(GraphBuilder &g, const ModelConfig &c,
                        TensorNaming naming, mlir::Value ids,
                        mlir::Value positions) {
  DecoderNames n{naming};
  const int64_t h = c.hiddenSize, ff = c.intermediateSize,
                qDim = c.numHeads * c.headDim, kvDim = c.numKVHeads * c.headDim;
  const double normOffset = naming == TensorNaming::HuggingFace ? 1.0 : 0.0;
  auto norm = [&](std::string name) {
    return g.param(name, {h}, false, 0, normOffset);
  };

  mlir::Value embed =
      g.param(n.top("model.embed_tokens.weight", "token_embd.weight"),
              {c.vocabSize, h});
  mlir::Value x = g.embedding(embed, ids);
  x = g.scale(x, std::sqrt(static_cast<double>(h)));
  for (int64_t i = 0; i < c.numLayers; ++i) {
    auto w = [&](const char *hf, const char *gguf, std::vector<int64_t> shape) {
      return g.param(n.layer(i, hf, gguf), std::move(shape));
    };
    auto bias = [&](const char *hf, const char *gguf,
                    int64_t size) -> mlir::Value {
      return c.qkvBias ? g.param(n.layer(i, hf, gguf), {size}) : mlir::Value();
    };

    // One statement per op, so the IR comes out in the same order with
    // every compiler.
    mlir::Value normed = g.rmsNorm(
        x, norm(n.layer(i, "input_layernorm.weight", "attn_norm.weight")));
    mlir::Value wq = w("self_attn.q_proj.weight", "attn_q.weight", {qDim, h});
    mlir::Value bq = bias("self_attn.q_proj.bias", "attn_q.bias", qDim);
    mlir::Value q = g.linear(normed, wq, bq);
    mlir::Value wk = w("self_attn.k_proj.weight", "attn_k.weight", {kvDim, h});
    mlir::Value bk = bias("self_attn.k_proj.bias", "attn_k.bias", kvDim);
    mlir::Value k = g.linear(normed, wk, bk);
    mlir::Value wv = w("self_attn.v_proj.weight", "attn_v.weight", {kvDim, h});
    mlir::Value bv = bias("self_attn.v_proj.bias", "attn_v.bias", kvDim);
    mlir::Value v = g.linear(normed, wv, bv);
    q = g.splitHeads(q, c.numHeads, c.headDim);
    k = g.splitHeads(k, c.numKVHeads, c.headDim);
    if (c.qkNorm) { // Gemma 3
      mlir::Value qn =
          g.param(n.layer(i, "self_attn.q_norm.weight", "attn_q_norm.weight"),
                  {c.headDim}, false, 0, normOffset);
      q = g.rmsNorm(q, qn);
      mlir::Value kn =
          g.param(n.layer(i, "self_attn.k_norm.weight", "attn_k_norm.weight"),
                  {c.headDim}, false, 0, normOffset);
      k = g.rmsNorm(k, kn);
    }
    const bool local =
        c.localRopeTheta > 0 && c.slidingWindow[static_cast<size_t>(i)] > 0;
    if (local) {
      q = g.rope(q, positions, c.localRopeTheta, std::nullopt);
      k = g.rope(k, positions, c.localRopeTheta, std::nullopt);
    } else {
      q = g.rope(q, positions);
      k = g.rope(k, positions);
    }
    v = g.splitHeads(v, c.numKVHeads, c.headDim);
    mlir::Value attn = g.mergeHeads(
        g.attention(q, k, v, c.slidingWindow[static_cast<size_t>(i)],
                    c.attentionScale, c.attnLogitSoftcap));
    mlir::Value wo =
        w("self_attn.o_proj.weight", "attn_output.weight", {h, qDim});
    mlir::Value bo = bias("self_attn.o_proj.bias", "attn_output.bias", h);
    mlir::Value o = g.linear(attn, wo, bo);
    o = g.rmsNorm(o, norm(n.layer(i, "post_attention_layernorm.weight",
                                  "post_attention_norm.weight")));
    x = g.add(x, o);

    mlir::Value m =
        g.rmsNorm(x, norm(n.layer(i, "pre_feedforward_layernorm.weight",
                                  "ffn_norm.weight")));
    mlir::Value wg = w("mlp.gate_proj.weight", "ffn_gate.weight", {ff, h});
    mlir::Value gate = g.linear(m, wg);
    mlir::Value wu = w("mlp.up_proj.weight", "ffn_up.weight", {ff, h});
    mlir::Value up = g.linear(m, wu);
    mlir::Value act = g.gelu(gate, "tanh");
    act = g.mul(act, up);
    mlir::Value wd = w("mlp.down_proj.weight", "ffn_down.weight", {h, ff});
    mlir::Value down = g.linear(act, wd);
    down = g.rmsNorm(down, norm(n.layer(i, "post_feedforward_layernorm.weight",
                                        "post_ffw_norm.weight")));
    x = g.add(x, down);
  }
  x = g.rmsNorm(x, norm(n.top("model.norm.weight", "output_norm.weight")));
  mlir::Value head =
      c.tiedEmbeddings
          ? embed
          : g.param(n.top("lm_head.weight", "output.weight"), {c.vocabSize, h});
  mlir::Value logits = g.linear(x, head);
  if (c.finalLogitSoftcap > 0)
    logits = g.softcap(logits, c.finalLogitSoftcap);
  return logits;
}

} // namespace llmc::import
