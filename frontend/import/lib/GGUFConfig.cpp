#include "GGUFConfig.h"

#include "llmc/support/error.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace llmc::import {
namespace {

/// GGUF stores hyper-parameters as float32; 1e-5 arrives as 9.9999997e-6.
/// The shortest decimal that rounds to the same float is what the
/// checkpoint's author wrote, so the graph matches an HF import exactly.
double shortestDecimal(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  if (ec != std::errc())
    return v;
  *end = 0;
  return std::strtod(buf, nullptr);
}

/// llama.cpp's gpt2 (convert_hf_to_gguf.py's GPT2Model): the keys of
/// transformers' GPT2Config under other names; always the tanh GELU.
ModelConfig gpt2FromGGUF(const weights::GGUFFile &f) {
  ModelConfig c;
  c.architecture = "GPT2LMHeadModel";
  c.numLayers = f.getInt("gpt2.block_count");
  c.hiddenSize = f.getInt("gpt2.embedding_length");
  c.intermediateSize = f.getInt("gpt2.feed_forward_length");
  c.numHeads = f.getInt("gpt2.attention.head_count");
  setGPT2Structure(c);
  c.maxPositions = f.getInt("gpt2.context_length");
  c.normEps = shortestDecimal(f.getFloat("gpt2.attention.layer_norm_epsilon"));
  c.hiddenAct = "gelu_new";
  return c;
}

/// rope.scaling.* as llama.cpp's converter writes linear and yarn scaling.
std::optional<RopeScaling> ropeScalingFromGGUF(const weights::GGUFFile &f,
                                               const std::string &arch) {
  auto key = [&](const char *k) { return arch + "." + k; };
  auto type = f.findString(key("rope.scaling.type"));
  if (!type || *type == "none")
    return std::nullopt;
  RopeScaling s;
  s.type = *type;
  s.factor = f.getFloat(key("rope.scaling.factor"));
  s.originalMaxPositions =
      f.findInt(key("rope.scaling.original_context_length")).value_or(0);
  // llmc-make-gguf's key for transformers' `truncate: false`; llama.cpp
  // knows none and rounds, as a file without it is read here.
  s.truncate = f.findBool(key("rope.scaling.yarn_truncate")).value_or(true);
  return s;
}

/// llama.cpp's gpt-oss (convert_hf_to_gguf.py's GptOssModel): Llama's keys,
/// the experts' width as expert_feed_forward_length, a window on even
/// layers (llama.cpp's pattern of 2), attention sinks, biases on q/k/v/o,
/// the router and the experts, whose gate and up come as two stacked
/// tensors.
void gptOssFromGGUF(const weights::GGUFFile &f, ModelConfig &c) {
  c.architecture = "GptOssForCausalLM";
  c.qkvBias = c.outputBias = true;
  c.attentionSinks = true;
  const int64_t window = f.getInt("gpt-oss.attention.sliding_window");
  const int64_t pattern =
      f.findInt("gpt-oss.attention.sliding_window_pattern").value_or(2);
  if (pattern != 2)
    throw Error(f.fileName() +
                ": gpt-oss.attention.sliding_window_pattern must be 2 "
                "(sliding, full, ...), got " +
                std::to_string(pattern));
  setEvenLayerWindows(c, window);
  MoeConfig &m = c.moe;
  m.expertIntermediate =
      f.findInt("gpt-oss.expert_feed_forward_length").value_or(0);
  if (m.expertIntermediate <= 0)
    throw Error(f.fileName() +
                ": gpt-oss.expert_feed_forward_length must be positive");
  m.normalizeTopK = false;
  m.gptOss = true;
}

/// llama.cpp's gemma2 and gemma3 (convert_hf_to_gguf.py's Gemma2Model and
/// Gemma3Model; their norms already hold 1 + w, gemma3's q/k norms too).
/// llama.cpp has no key for query_pre_attn_scalar: it takes hidden / heads
/// for the 27B models (46 layers for Gemma 2, 62 for Gemma 3) and head_dim
/// otherwise, as google's gemma_pytorch does, and so do we. Gemma 3's
/// sliding layers rotate with base 10000 and no scaling there, every sixth
/// layer is global, and nothing is soft-capped.
ModelConfig gemmaFromGGUF(const weights::GGUFFile &f, const std::string &arch) {
  const bool gemma3 = arch == "gemma3";
  auto key = [&](const char *k) { return arch + "." + k; };
  ModelConfig c;
  c.architecture = gemma3 ? "Gemma3ForCausalLM" : "Gemma2ForCausalLM";
  c.family = ArchFamily::Gemma2;
  c.numLayers = f.getInt(key("block_count"));
  c.hiddenSize = f.getInt(key("embedding_length"));
  c.intermediateSize = f.getInt(key("feed_forward_length"));
  c.numHeads = f.getInt(key("attention.head_count"));
  c.numKVHeads = f.findInt(key("attention.head_count_kv")).value_or(c.numHeads);
  c.headDim = f.findInt(key("attention.key_length")).value_or(256);
  c.rotaryDim = f.findInt(key("rope.dimension_count")).value_or(c.headDim);
  c.maxPositions =
      f.findInt(key("context_length")).value_or(gemma3 ? 131072 : 8192);
  c.normEps =
      shortestDecimal(f.getFloat(key("attention.layer_norm_rms_epsilon")));
  c.ropeTheta = shortestDecimal(
      f.findFloat(key("rope.freq_base")).value_or(gemma3 ? 1e6 : 10000.0));
  c.hiddenAct = "gelu_pytorch_tanh";
  const int64_t scalar = c.numLayers == (gemma3 ? 62 : 46) && c.numHeads > 0
                             ? c.hiddenSize / c.numHeads
                             : c.headDim;
  if (scalar > 0)
    c.attentionScale = 1.0 / std::sqrt(static_cast<double>(scalar));
  if (auto v = f.findInt(key("vocab_size")))
    c.vocabSize = *v;
  const int64_t window =
      f.findInt(key("attention.sliding_window")).value_or(4096);
  if (gemma3) {
    c.qkNorm = true;
    c.localRopeTheta = 10000.0;
    c.ropeScaling = ropeScalingFromGGUF(f, arch);
    setGemma3Windows(c, window, 6);
  } else {
    // llama.cpp's defaults when a key is absent.
    c.attnLogitSoftcap = shortestDecimal(
        f.findFloat(key("attn_logit_softcapping")).value_or(50.0));
    c.finalLogitSoftcap = shortestDecimal(
        f.findFloat(key("final_logit_softcapping")).value_or(30.0));
    setEvenLayerWindows(c, window);
  }
  // llama.cpp's set_swa_pattern(n): layer i slides iff i % n < n - 1
  // (every layer for n = 0).
  if (auto period = f.findInt(key("attention.sliding_window_pattern"))) {
    if (*period < 0)
      throw Error(f.fileName() + ": " +
                  key("attention.sliding_window_pattern") + " must be >= 0");
    for (int64_t i = 0; i < c.numLayers; ++i)
      c.slidingWindow[static_cast<size_t>(i)] =
          *period == 0 || i % *period < *period - 1 ? window : 0;
  }
  return c;
}

/// A tensor of per-rotary-pair rope factors (rope_freqs, rope_factors_long,
/// rope_factors_short): rotaryDim / 2 positive values.
std::vector<double> pairFactors(const weights::GGUFFile &f,
                                const std::string &name, int64_t rotaryDim) {
  const weights::TensorRef *t = f.find(name);
  if (!t)
    throw Error(f.fileName() + ": tensor '" + name + "' is missing");
  if (t->shape.size() != 1 || t->shape[0] != rotaryDim / 2)
    throw Error(f.fileName() + ": tensor '" + name + "' must hold " +
                std::to_string(rotaryDim / 2) +
                " factors (one per rotary pair)");
  std::vector<float> v(static_cast<size_t>(t->shape[0]));
  weights::toFloat32(*t, v.data());
  std::vector<double> out;
  for (float x : v) {
    if (!(x > 0))
      throw Error(f.fileName() + ": tensor '" + name +
                  "' holds a factor that is not positive");
    out.push_back(x);
  }
  return out;
}

/// llama.cpp's converter turns llama3 rope scaling into per-pair factors
/// (rope_freqs.weight) and writes no rope.scaling keys for it.
RopeScaling freqFactors(const weights::GGUFFile &f, int64_t rotaryDim) {
  RopeScaling s;
  s.type = "freq_factors";
  s.freqFactors = pairFactors(f, "rope_freqs.weight", rotaryDim);
  return s;
}

/// llama.cpp's phi3 (convert_hf_to_gguf.py's Phi3MiniModel): Llama's keys,
/// the fused attn_qkv and ffn_up (gate then up) tensors, the rotary width
/// as rope.dimension_count, and LongRoPE as rope_factors_short/long tensors
/// with rope.scaling.original_context_length and attn_factor.
ModelConfig phi3FromGGUF(const weights::GGUFFile &f) {
  auto key = [](const char *k) { return std::string("phi3.") + k; };
  ModelConfig c;
  c.architecture = "Phi3ForCausalLM";
  c.family = ArchFamily::Llama;
  c.fusedProjections = true;
  c.numLayers = f.getInt(key("block_count"));
  c.hiddenSize = f.getInt(key("embedding_length"));
  c.intermediateSize = f.getInt(key("feed_forward_length"));
  c.numHeads = f.getInt(key("attention.head_count"));
  c.numKVHeads = f.findInt(key("attention.head_count_kv")).value_or(c.numHeads);
  c.headDim = c.numHeads > 0 ? c.hiddenSize / c.numHeads : 0;
  c.rotaryDim = f.findInt(key("rope.dimension_count")).value_or(c.headDim);
  c.maxPositions = f.findInt(key("context_length")).value_or(4096);
  c.normEps =
      shortestDecimal(f.getFloat(key("attention.layer_norm_rms_epsilon")));
  c.ropeTheta =
      shortestDecimal(f.findFloat(key("rope.freq_base")).value_or(10000.0));
  if (auto v = f.findInt(key("vocab_size")))
    c.vocabSize = *v;
  c.slidingWindow.assign(
      static_cast<size_t>(std::max<int64_t>(c.numLayers, 0)),
      f.findInt(key("attention.sliding_window")).value_or(0));
  if (f.find("rope_factors_long.weight") ||
      f.find("rope_factors_short.weight")) {
    RopeScaling s;
    s.type = "longrope";
    s.shortFactors = pairFactors(f, "rope_factors_short.weight", c.rotaryDim);
    s.longFactors = pairFactors(f, "rope_factors_long.weight", c.rotaryDim);
    s.originalMaxPositions =
        f.getInt(key("rope.scaling.original_context_length"));
    if (s.originalMaxPositions <= 0)
      throw Error(f.fileName() + ": " +
                  key("rope.scaling.original_context_length") +
                  " must be positive");
    s.factor = static_cast<double>(c.maxPositions) /
               static_cast<double>(s.originalMaxPositions);
    s.attentionFactor = shortestDecimal(
        f.findFloat(key("rope.scaling.attn_factor"))
            .value_or(s.factor <= 1.0
                          ? 1.0
                          : std::sqrt(1.0 + std::log(s.factor) /
                                                std::log(static_cast<double>(
                                                    s.originalMaxPositions)))));
    c.ropeScaling = s;
  }
  return c;
}

/// llama.cpp's MoE keys: expert_count and expert_used_count; qwen3moe's
/// expert width is expert_feed_forward_length (feed_forward_length is the
/// dense MLP's), llama's (Mixtral's) is feed_forward_length. llama.cpp
/// renormalises the chosen experts' weights of both, and makes every layer
/// sparse.
MoeConfig moeFromGGUF(const weights::GGUFFile &f, const std::string &arch,
                      const ModelConfig &c) {
  MoeConfig m;
  auto key = [&](const char *k) { return arch + "." + k; };
  const std::optional<int64_t> experts = f.findInt(key("expert_count"));
  if (!experts || *experts == 0) {
    if (arch == "qwen3moe" || arch == "gpt-oss" ||
        f.find("blk.0.ffn_gate_inp.weight"))
      throw Error(f.fileName() + ": " + key("expert_count") +
                  " is missing or 0, but " +
                  (arch == "qwen3moe" || arch == "gpt-oss"
                       ? "a " + arch + " GGUF has experts"
                       : std::string("the file has a router "
                                     "(blk.0.ffn_gate_inp.weight)")));
    return m;
  }
  m.numExperts = *experts;
  const std::optional<int64_t> used = f.findInt(key("expert_used_count"));
  m.expertsPerToken = used.value_or(0);
  if (m.numExperts < 0 || m.expertsPerToken <= 0 ||
      m.expertsPerToken > m.numExperts)
    throw Error(f.fileName() + ": " + key("expert_used_count") + " (" +
                (used ? std::to_string(*used) : std::string("missing")) +
                ") must be in 1.." + std::to_string(m.numExperts) + " (" +
                key("expert_count") + ")");
  m.expertIntermediate =
      arch == "qwen3moe" || arch == "gpt-oss"
          ? f.findInt(key("expert_feed_forward_length")).value_or(0)
          : c.intermediateSize;
  if (m.expertIntermediate <= 0)
    throw Error(f.fileName() + ": " + key("expert_feed_forward_length") +
                " must be positive");
  for (const char *unsupported :
       {"expert_shared_count", "expert_shared_feed_forward_length"})
    if (f.findInt(key(unsupported)).value_or(0) > 0)
      throw Error(f.fileName() + ": " + key(unsupported) +
                  " (shared experts) is not supported yet");
  m.normalizeTopK = true;
  m.sparseLayers.assign(static_cast<size_t>(std::max<int64_t>(c.numLayers, 0)),
                        true);
  return m;
}

} // namespace

ModelConfig configFromGGUF(const weights::GGUFFile &f) {
  std::string arch = f.getString("general.architecture");
  ModelConfig c;
  if (arch == "gpt2") {
    c = gpt2FromGGUF(f);
  } else if (arch == "gemma2" || arch == "gemma3") {
    c = gemmaFromGGUF(f, arch);
  } else if (arch == "phi3") {
    c = phi3FromGGUF(f);
  } else if (arch == "llama" || arch == "qwen2" || arch == "qwen3" ||
             arch == "qwen3moe" || arch == "gpt-oss") {
    // llama.cpp writes Mistral and Mixtral checkpoints as "llama" too.
    c.architecture = arch == "llama"      ? "LlamaForCausalLM"
                     : arch == "qwen2"    ? "Qwen2ForCausalLM"
                     : arch == "qwen3moe" ? "Qwen3MoeForCausalLM"
                                          : "Qwen3ForCausalLM";
    c.qkvBias = arch == "qwen2";
    c.qkNorm = arch == "qwen3" || arch == "qwen3moe";
    c.family = ArchFamily::Llama;
    auto key = [&](const char *k) { return arch + "." + k; };
    c.numLayers = f.getInt(key("block_count"));
    c.hiddenSize = f.getInt(key("embedding_length"));
    c.intermediateSize = f.getInt(key("feed_forward_length"));
    c.numHeads = f.getInt(key("attention.head_count"));
    c.numKVHeads =
        f.findInt(key("attention.head_count_kv")).value_or(c.numHeads);
    c.maxPositions = f.findInt(key("context_length")).value_or(2048);
    c.normEps =
        shortestDecimal(f.getFloat(key("attention.layer_norm_rms_epsilon")));
    c.ropeTheta =
        shortestDecimal(f.findFloat(key("rope.freq_base")).value_or(10000.0));
    c.headDim = f.findInt(key("attention.key_length"))
                    .value_or(c.numHeads > 0 ? c.hiddenSize / c.numHeads : 0);
    c.rotaryDim = f.findInt(key("rope.dimension_count")).value_or(c.headDim);
    if (auto v = f.findInt(key("vocab_size")))
      c.vocabSize = *v;
    c.moe = moeFromGGUF(f, arch, c);
    if (arch == "llama" && c.moe.enabled())
      c.architecture = "MixtralForCausalLM";
    if (arch == "gpt-oss")
      gptOssFromGGUF(f, c);
    c.ropeScaling = ropeScalingFromGGUF(f, arch);
  } else {
    throw Error(
        f.fileName() + ": unsupported GGUF architecture '" + arch +
        "' (supported: gemma2, gemma3, gpt-oss, gpt2, llama, phi3, qwen2, "
        "qwen3, qwen3moe)");
  }
  if (f.find("rope_freqs.weight"))
    c.ropeScaling = freqFactors(f, c.rotaryDim);
  if (c.vocabSize == 0)
    if (const auto *embd = f.find("token_embd.weight"))
      c.vocabSize = embd->shape.empty() ? 0 : embd->shape[0];
  c.tiedEmbeddings = f.find("output.weight") == nullptr;
  if (c.slidingWindow.empty())
    c.slidingWindow.assign(
        static_cast<size_t>(std::max<int64_t>(c.numLayers, 0)), 0);
  if (auto bos = f.findInt("tokenizer.ggml.bos_token_id"))
    c.bosTokenId = *bos;
  if (auto eos = f.findInt("tokenizer.ggml.eos_token_id"))
    c.eosTokenIds.push_back(*eos);
  validate(c, f.fileName());
  return c;
}

} // namespace llmc::import
