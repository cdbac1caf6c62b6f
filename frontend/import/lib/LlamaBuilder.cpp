//===- LlamaBuilder.cpp - Llama, Mistral, Qwen2/3 and their MoE graphs ----===//
//
// Mirrors transformers' LlamaDecoderLayer:
//   h = x + o_proj(attn(rope(q_proj(n)), rope(k_proj(n)), v_proj(n))),
//       n = rms_norm(x)
//   y = h + down_proj(silu(gate_proj(m)) * up_proj(m)),  m = rms_norm(h)
// Qwen3 normalizes each query and key head before RoPE:
//   rope(q_norm(split_heads(q_proj(n)))), and the same for k.
// Mixtral and Qwen3-MoE replace the MLP with a mixture of experts:
//   y = h + sum_j w_j * expert_{e_j}(m), (w, e) = top-k(softmax(gate(m)))
// Phi-3 stores q/k/v as one qkv_proj and gate/up as one gate_up_proj: one
// linear each, sliced (llmc-fuse turns the sliced gate/up back into
// swiglu). gpt-oss adds attention sinks (a learned logit per head in each
// softmax) and its own MoE block (gptOssExperts).
//
//===----------------------------------------------------------------------===//

#include "Architectures.h"

namespace llmc::import {

namespace {

/// The MoE block of layer i: Mixtral's block_sparse_moe (w1 gate, w3 up,
/// w2 down), Qwen3-MoE's mlp, or llama.cpp's stacked ffn_*_exps (its older
/// files: one ffn_*.{e} tensor per expert).
/// gpt-oss's MoE block: mlp.router (weight, bias) and mlp.experts'
/// gate_up_proj / down_proj, MXFP4 (the `_blocks` + `_scales` pairs, read as
/// one tensor each) or unquantized ([E, in, out], used as x·W), with biases.
GraphBuilder::Experts gptOssExperts(GraphBuilder &g, const ModelConfig &c,
                                    const DecoderNames &n, int64_t i) {
  const MoeConfig &m = c.moe;
  const int64_t h = c.hiddenSize, ff = m.expertIntermediate, e = m.numExperts;
  GraphBuilder::Experts x;
  x.gptOss = true;
  x.perToken = m.expertsPerToken;
  x.normalize = false;
  x.limit = m.swigluLimit;
  x.alpha = m.swigluAlpha;
  x.interleaved = true;
  x.router = g.routerParam(
      n.layer(i, "mlp.router.weight", "ffn_gate_inp.weight"), e, h);
  x.routerBias =
      g.param(n.layer(i, "mlp.router.bias", "ffn_gate_inp.bias"), {e});
  if (n.naming == TensorNaming::GGUF) {
    // llama.cpp's layouts: gate and up fused (ffn_gate_up_exps, gate rows
    // then up rows) or stacked apart (packed here, gate first), with
    // biases alike.
    x.interleaved = false;
    x.down = g.expertParam(n.layer(i, "", "ffn_down_exps.weight"), e, h, ff);
    x.downBias = g.param(n.layer(i, "", "ffn_down_exps.bias"), {e, h});
    const std::string fused = n.layer(i, "", "ffn_gate_up_exps.weight");
    if (g.hasWeight(fused)) {
      x.gateUp = g.expertParam(fused, e, 2 * ff, h);
      x.gateUpBias =
          g.param(n.layer(i, "", "ffn_gate_up_exps.bias"), {e, 2 * ff});
      return x;
    }
    auto both = [&](const char *suffix) {
      return std::vector<std::string>{
          n.layer(i, "", (std::string("ffn_gate_exps.") + suffix).c_str()),
          n.layer(i, "", (std::string("ffn_up_exps.") + suffix).c_str())};
    };
    x.gateUp = g.packedExpertParam(both("weight"), e, ff, h);
    x.gateUpBias = g.packedExpertParam(both("bias"), e, 0, ff);
    return x;
  }
  const std::string gateUp = n.layer(i, "mlp.experts.gate_up_proj", "");
  const std::string down = n.layer(i, "mlp.experts.down_proj", "");
  // Hugging Face's unquantized form stores each expert [in, out].
  const bool transposed = !g.hasWeight(gateUp + "_blocks");
  x.gateUp = g.expertParam(gateUp, e, 2 * ff, h, transposed);
  x.down = g.expertParam(down, e, h, ff, transposed);
  x.gateUpBias = g.param(gateUp + "_bias", {e, 2 * ff});
  x.downBias = g.param(down + "_bias", {e, h});
  return x;
}

GraphBuilder::Experts experts(GraphBuilder &g, const ModelConfig &c,
                              const DecoderNames &n, int64_t i) {
  if (c.moe.gptOss)
    return gptOssExperts(g, c, n, i);
  const MoeConfig &m = c.moe;
  const int64_t h = c.hiddenSize, ff = m.expertIntermediate, e = m.numExperts;
  const bool mixtral = c.architecture == "MixtralForCausalLM";
  auto gguf = [&](const char *stacked, const char *perExpert) {
    std::string name = n.layer(i, "", stacked);
    return g.hasWeight(name) ? name : n.layer(i, "", perExpert);
  };
  auto hf = [&](const char *mixtralName, const char *qwenName) {
    return n.layer(i, mixtral ? mixtralName : qwenName, "");
  };
  const bool isGGUF = n.naming == TensorNaming::GGUF;
  GraphBuilder::Experts x;
  x.router = g.routerParam(
      isGGUF ? n.layer(i, "", "ffn_gate_inp.weight")
             : hf("block_sparse_moe.gate.weight", "mlp.gate.weight"),
      e, h);
  x.gate =
      g.expertParam(isGGUF ? gguf("ffn_gate_exps.weight", "ffn_gate.{e}.weight")
                           : hf("block_sparse_moe.experts.{e}.w1.weight",
                                "mlp.experts.{e}.gate_proj.weight"),
                    e, ff, h);
  x.up = g.expertParam(isGGUF ? gguf("ffn_up_exps.weight", "ffn_up.{e}.weight")
                              : hf("block_sparse_moe.experts.{e}.w3.weight",
                                   "mlp.experts.{e}.up_proj.weight"),
                       e, ff, h);
  x.down =
      g.expertParam(isGGUF ? gguf("ffn_down_exps.weight", "ffn_down.{e}.weight")
                           : hf("block_sparse_moe.experts.{e}.w2.weight",
                                "mlp.experts.{e}.down_proj.weight"),
                    e, h, ff);
  x.perToken = m.expertsPerToken;
  x.normalize = m.normalizeTopK;
  return x;
}

} // namespace

mlir::Value buildLlama(GraphBuilder &g, const ModelConfig &c,
                       TensorNaming naming, mlir::Value ids,
                       mlir::Value positions) {
  DecoderNames n{naming};
  const int64_t h = c.hiddenSize, qDim = c.numHeads * c.headDim,
                kvDim = c.numKVHeads * c.headDim;
  // GGUF stores llama's Q/K rows permuted for llama.cpp's rope; the plan
  // writer undoes it so every source shares one graph. Qwen2 is not permuted.
  const bool unpermute =
      naming == TensorNaming::GGUF && (c.architecture == "LlamaForCausalLM" ||
                                       c.architecture == "MixtralForCausalLM");

  mlir::Value embed =
      g.param(n.top("model.embed_tokens.weight", "token_embd.weight"),
              {c.vocabSize, h});
  mlir::Value x = g.embedding(embed, ids);
  for (int64_t i = 0; i < c.numLayers; ++i) {
    auto w = [&](const char *hf, const char *gguf, std::vector<int64_t> shape,
                 int64_t ropeHeads = 0) {
      return g.param(n.layer(i, hf, gguf), std::move(shape), false,
                     unpermute ? ropeHeads : 0);
    };
    auto bias = [&](bool present, const char *hf, const char *gguf,
                    int64_t size) -> mlir::Value {
      return present ? g.param(n.layer(i, hf, gguf), {size}) : mlir::Value();
    };

    // One statement per op: C++ leaves argument evaluation order open, and
    // the IR must come out in the same order with every compiler.
    mlir::Value normed =
        g.rmsNorm(x, w("input_layernorm.weight", "attn_norm.weight", {h}));
    mlir::Value q, k, v;
    if (c.fusedProjections) { // Phi-3: q, k then v rows
      mlir::Value wqkv = w("self_attn.qkv_proj.weight", "attn_qkv.weight",
                           {qDim + 2 * kvDim, h});
      mlir::Value qkv = g.linear(normed, wqkv);
      q = g.slice(qkv, 0, qDim);
      k = g.slice(qkv, qDim, kvDim);
      v = g.slice(qkv, qDim + kvDim, kvDim);
    } else {
      mlir::Value wq =
          w("self_attn.q_proj.weight", "attn_q.weight", {qDim, h}, c.numHeads);
      mlir::Value bq =
          bias(c.qkvBias, "self_attn.q_proj.bias", "attn_q.bias", qDim);
      q = g.linear(normed, wq, bq);
      mlir::Value wk = w("self_attn.k_proj.weight", "attn_k.weight", {kvDim, h},
                         c.numKVHeads);
      mlir::Value bk =
          bias(c.qkvBias, "self_attn.k_proj.bias", "attn_k.bias", kvDim);
      k = g.linear(normed, wk, bk);
      mlir::Value wv =
          w("self_attn.v_proj.weight", "attn_v.weight", {kvDim, h});
      mlir::Value bv =
          bias(c.qkvBias, "self_attn.v_proj.bias", "attn_v.bias", kvDim);
      v = g.linear(normed, wv, bv);
    }
    q = g.splitHeads(q, c.numHeads, c.headDim);
    k = g.splitHeads(k, c.numKVHeads, c.headDim);
    if (c.qkNorm) {
      q = g.rmsNorm(
          q, w("self_attn.q_norm.weight", "attn_q_norm.weight", {c.headDim}));
      k = g.rmsNorm(
          k, w("self_attn.k_norm.weight", "attn_k_norm.weight", {c.headDim}));
    }
    q = g.rope(q, positions);
    k = g.rope(k, positions);
    v = g.splitHeads(v, c.numKVHeads, c.headDim);
    mlir::Value sinks = c.attentionSinks ? w("self_attn.sinks",
                                             "attn_sinks.weight", {c.numHeads})
                                         : mlir::Value();
    mlir::Value attn = g.mergeHeads(g.attention(
        q, k, v, c.slidingWindow[static_cast<size_t>(i)], 0, 0, sinks));
    mlir::Value wo =
        w("self_attn.o_proj.weight", "attn_output.weight", {h, qDim});
    mlir::Value bo =
        bias(c.outputBias, "self_attn.o_proj.bias", "attn_output.bias", h);
    x = g.add(x, g.linear(attn, wo, bo));

    mlir::Value m = g.rmsNorm(
        x, w("post_attention_layernorm.weight",
             c.moe.gptOss ? "post_attention_norm.weight" : "ffn_norm.weight",
             {h}));
    if (c.moe.sparse(i)) {
      x = g.add(x, g.moe(m, experts(g, c, n, i)));
      continue;
    }
    const int64_t ff = c.intermediateSize;
    if (c.fusedProjections) { // Phi-3: gate rows, then up rows
      mlir::Value wgu =
          w("mlp.gate_up_proj.weight", "ffn_up.weight", {2 * ff, h});
      mlir::Value gu = g.linear(m, wgu);
      mlir::Value gate = g.slice(gu, 0, ff);
      mlir::Value up = g.slice(gu, ff, ff);
      mlir::Value act = g.mul(g.silu(gate), up);
      mlir::Value wd = w("mlp.down_proj.weight", "ffn_down.weight", {h, ff});
      x = g.add(x, g.linear(act, wd));
      continue;
    }
    mlir::Value wg = w("mlp.gate_proj.weight", "ffn_gate.weight", {ff, h});
    mlir::Value bg = bias(c.mlpBias, "mlp.gate_proj.bias", "ffn_gate.bias", ff);
    mlir::Value gate = g.linear(m, wg, bg);
    mlir::Value wu = w("mlp.up_proj.weight", "ffn_up.weight", {ff, h});
    mlir::Value bu = bias(c.mlpBias, "mlp.up_proj.bias", "ffn_up.bias", ff);
    mlir::Value up = g.linear(m, wu, bu);
    mlir::Value act = g.mul(g.silu(gate), up);
    mlir::Value wd = w("mlp.down_proj.weight", "ffn_down.weight", {h, ff});
    mlir::Value bd = bias(c.mlpBias, "mlp.down_proj.bias", "ffn_down.bias", h);
    mlir::Value down = g.linear(act, wd, bd);
    x = g.add(x, down);
  }
  x = g.rmsNorm(x,
                g.param(n.top("model.norm.weight", "output_norm.weight"), {h}));
  mlir::Value head =
      c.tiedEmbeddings
          ? embed
          : g.param(n.top("lm_head.weight", "output.weight"), {c.vocabSize, h});
  return g.linear(x, head);
}

} // namespace llmc::import
