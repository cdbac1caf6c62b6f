#include "llmc/config/model_config.h"
#include "llmc/config/json_file.h"
#include "llmc/support/error.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace llmc {
namespace {

std::string join(const std::vector<std::string> &items) {
  std::string out;
  for (const auto &s : items)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

/// eos_token_id may be an int or a list of ints.
void addEosIds(const JsonObject &obj, std::vector<int64_t> &ids) {
  if (obj.isNull("eos_token_id"))
    return;
  const auto &v = obj.raw().at("eos_token_id");
  auto add = [&](int64_t id) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end())
      ids.push_back(id);
  };
  if (v.is_number_integer()) {
    add(v.get<int64_t>());
  } else if (v.is_array()) {
    for (const auto &e : v) {
      if (!e.is_number_integer())
        throw Error(obj.file() +
                    ": key 'eos_token_id' must be an integer or a list of "
                    "integers");
      add(e.get<int64_t>());
    }
  } else {
    throw Error(obj.file() +
                ": key 'eos_token_id' must be an integer or a "
                "list of integers, got " +
                std::string(v.type_name()));
  }
}

/// LongRoPE as transformers computes it (_compute_longrope_parameters):
/// the switch at original_max_position_embeddings (top level, or in
/// rope_scaling), factor = max_position_embeddings / that.
RopeScaling readLongRope(const JsonObject &cfg, const JsonObject &rs,
                         RopeScaling s) {
  auto factors = [&](const char *key) {
    if (rs.isNull(key) || !rs.raw().at(key).is_array())
      throw Error(cfg.file() + ": rope_scaling '" + key +
                  "' must be a list of numbers (LongRoPE)");
    std::vector<double> v;
    for (const auto &x : rs.raw().at(key)) {
      if (!x.is_number() || !(x.get<double>() > 0))
        throw Error(cfg.file() + ": rope_scaling '" + key +
                    "' must hold positive numbers");
      v.push_back(x.get<double>());
    }
    return v;
  };
  s.shortFactors = factors("short_factor");
  s.longFactors = factors("long_factor");
  const int64_t maxPositions = cfg.integer("max_position_embeddings");
  s.originalMaxPositions =
      cfg.integer("original_max_position_embeddings",
                  rs.integer("original_max_position_embeddings", maxPositions));
  if (s.originalMaxPositions <= 0 || maxPositions <= 0)
    throw Error(cfg.file() + ": original_max_position_embeddings and "
                             "max_position_embeddings must be positive");
  s.factor =
      rs.number("factor", static_cast<double>(maxPositions) /
                              static_cast<double>(s.originalMaxPositions));
  if (!rs.isNull("attention_factor"))
    s.attentionFactor = rs.number("attention_factor");
  else
    s.attentionFactor = s.factor <= 1.0
                            ? 1.0
                            : std::sqrt(1.0 + std::log(s.factor) /
                                                  std::log(static_cast<double>(
                                                      s.originalMaxPositions)));
  return s;
}

std::optional<RopeScaling> readRopeScaling(const JsonObject &cfg) {
  if (cfg.isNull("rope_scaling"))
    return std::nullopt;
  const auto &raw = cfg.raw().at("rope_scaling");
  JsonObject rs(raw, cfg.file() + " (rope_scaling)");
  RopeScaling s;
  s.type = rs.has("rope_type") ? rs.string("rope_type") : rs.string("type");
  if (s.type == "default")
    return std::nullopt;
  if (s.type == "su") // Phi-3's name before transformers settled on one
    s.type = "longrope";
  if (s.type != "linear" && s.type != "dynamic" && s.type != "llama3" &&
      s.type != "yarn" && s.type != "longrope")
    throw Error(cfg.file() + ": unsupported rope_scaling type '" + s.type +
                "' (supported: linear, dynamic, llama3, yarn, longrope)");
  if (s.type == "longrope")
    return readLongRope(cfg, rs, s);
  s.factor = rs.number("factor");
  if (!(s.factor > 0))
    throw Error(cfg.file() + ": rope_scaling factor must be positive");
  s.lowFreqFactor = rs.number("low_freq_factor", 1.0);
  s.highFreqFactor = rs.number("high_freq_factor", 4.0);
  s.originalMaxPositions =
      rs.integer("original_max_position_embeddings",
                 cfg.integer("max_position_embeddings", 0));
  s.betaFast = rs.number("beta_fast", 32.0);
  s.betaSlow = rs.number("beta_slow", 1.0);
  s.truncate = rs.boolean("truncate", true);
  if (!rs.isNull("attention_factor"))
    s.attentionFactor = rs.number("attention_factor");
  return s;
}

/// The keys every transformers decoder config names alike. The defaults
/// that differ by family are arguments: head_dim (none: hidden / heads) and
/// the context length.
void readDecoderSizes(const JsonObject &cfg, ModelConfig &c,
                      std::optional<int64_t> headDim, int64_t maxPositions) {
  c.vocabSize = cfg.integer("vocab_size");
  c.hiddenSize = cfg.integer("hidden_size");
  c.numLayers = cfg.integer("num_hidden_layers");
  c.numHeads = cfg.integer("num_attention_heads");
  c.numKVHeads = cfg.integer("num_key_value_heads", c.numHeads);
  c.headDim = cfg.integer(
      "head_dim",
      headDim.value_or(c.numHeads > 0 ? c.hiddenSize / c.numHeads : 0));
  c.intermediateSize = cfg.integer("intermediate_size");
  c.maxPositions = cfg.integer("max_position_embeddings", maxPositions);
  c.normEps = cfg.number("rms_norm_eps", 1e-6);
  c.ropeTheta = cfg.number("rope_theta", 10000.0);
  c.rotaryDim = c.headDim;
  c.ropeScaling = readRopeScaling(cfg);
}

ModelConfig readLlamaLike(const JsonObject &cfg, const std::string &arch) {
  ModelConfig c;
  c.architecture = arch;
  c.family = ArchFamily::Llama;
  readDecoderSizes(cfg, c, std::nullopt, 2048);
  c.tiedEmbeddings = cfg.boolean("tie_word_embeddings", false);
  c.hiddenAct = cfg.string("hidden_act", "silu");
  if (c.hiddenAct != "silu")
    throw Error(cfg.file() + ": unsupported hidden_act '" + c.hiddenAct +
                "' for " + arch + " (supported: silu)");
  c.slidingWindow.assign(static_cast<size_t>(std::max<int64_t>(c.numLayers, 0)),
                         0);
  const bool qwen3 =
      arch == "Qwen3ForCausalLM" || arch == "Qwen3MoeForCausalLM";
  if (arch == "Qwen2ForCausalLM" || qwen3) {
    c.qkvBias =
        arch == "Qwen2ForCausalLM" || cfg.boolean("attention_bias", false);
    c.qkNorm = qwen3;
    // HF Qwen2 applies the window only when use_sliding_window is set, and
    // then only to layers at or past max_window_layers.
    if (cfg.boolean("use_sliding_window", false) &&
        !cfg.isNull("sliding_window")) {
      int64_t w = cfg.integer("sliding_window");
      int64_t from = cfg.integer("max_window_layers", 0);
      for (int64_t i = from; i < c.numLayers; ++i)
        c.slidingWindow[static_cast<size_t>(i)] = w;
    }
  } else {
    c.qkvBias = cfg.boolean("attention_bias", false);
    c.outputBias = c.qkvBias;
    c.mlpBias = cfg.boolean("mlp_bias", false);
    if ((arch == "MistralForCausalLM" || arch == "MixtralForCausalLM") &&
        !cfg.isNull("sliding_window"))
      std::fill(c.slidingWindow.begin(), c.slidingWindow.end(),
                cfg.integer("sliding_window"));
  }
  return c;
}

/// MoE variants whose routing or experts llmc does not build yet, refused
/// by the config key that asks for them rather than run without it.
void refuseUnsupportedMoe(const JsonObject &cfg, const std::string &arch) {
  auto refuse = [&](const std::string &key, const std::string &what) {
    throw Error(cfg.file() + ": " + key + " (" + what + ", " + arch +
                ") is not supported yet; llmc runs MoE models whose experts "
                "are all routed (MixtralForCausalLM, Qwen3MoeForCausalLM)");
  };
  for (const char *key :
       {"shared_expert_intermediate_size", "n_shared_experts"})
    if (!cfg.isNull(key) && cfg.raw().at(key).is_number() &&
        cfg.raw().at(key).get<double>() > 0)
      refuse(key, "a shared expert beside the routed ones");
  for (const char *key : {"n_group", "topk_group"})
    if (!cfg.isNull(key) && cfg.raw().at(key).is_number() &&
        cfg.raw().at(key).get<double>() > 1)
      refuse(key, "grouped routing, as DeepSeek's");
  if (!cfg.isNull("topk_method") &&
      cfg.string("topk_method", "greedy") != "greedy")
    refuse("topk_method", "'" + cfg.string("topk_method") + "' routing");
  if (!cfg.isNull("scoring_func") &&
      cfg.string("scoring_func", "softmax") != "softmax")
    refuse("scoring_func",
           "'" + cfg.string("scoring_func") + "' router scores");
}

/// The experts of Mixtral (num_local_experts, every layer sparse, always
/// renormalised) and Qwen3-MoE (num_experts, moe_intermediate_size,
/// norm_topk_prob, dense layers from mlp_only_layers and
/// decoder_sparse_step).
MoeConfig readMoe(const JsonObject &cfg, const std::string &arch,
                  int64_t layers) {
  refuseUnsupportedMoe(cfg, arch);
  MoeConfig m;
  const bool mixtral = arch == "MixtralForCausalLM";
  const char *countKey = mixtral ? "num_local_experts" : "num_experts";
  m.numExperts = cfg.integer(countKey);
  m.expertsPerToken = cfg.integer("num_experts_per_tok");
  if (m.numExperts <= 0)
    throw Error(cfg.file() + ": " + countKey + " must be positive, got " +
                std::to_string(m.numExperts));
  if (m.expertsPerToken <= 0 || m.expertsPerToken > m.numExperts)
    throw Error(cfg.file() + ": num_experts_per_tok must be in 1.." +
                std::to_string(m.numExperts) + " (" + countKey + "), got " +
                std::to_string(m.expertsPerToken));
  m.expertIntermediate =
      cfg.integer(mixtral ? "intermediate_size" : "moe_intermediate_size");
  if (m.expertIntermediate <= 0)
    throw Error(cfg.file() + ": " +
                (mixtral ? "intermediate_size" : "moe_intermediate_size") +
                " must be positive, got " +
                std::to_string(m.expertIntermediate));
  // HF's Qwen3MoeConfig defaults norm_topk_prob to false.
  m.normalizeTopK = mixtral || cfg.boolean("norm_topk_prob", false);
  m.sparseLayers.assign(static_cast<size_t>(std::max<int64_t>(layers, 0)),
                        true);
  if (mixtral)
    return m;
  const int64_t step = cfg.integer("decoder_sparse_step", 1);
  if (step <= 0)
    throw Error(cfg.file() + ": decoder_sparse_step must be positive, got " +
                std::to_string(step));
  for (int64_t i = 0; i < layers; ++i)
    m.sparseLayers[static_cast<size_t>(i)] = (i + 1) % step == 0;
  if (!cfg.isNull("mlp_only_layers")) {
    const auto &dense = cfg.raw().at("mlp_only_layers");
    if (!dense.is_array())
      throw Error(cfg.file() + ": mlp_only_layers must be a list of layer "
                               "indices");
    for (const auto &v : dense) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
          v.get<int64_t>() >= layers)
        throw Error(cfg.file() + ": mlp_only_layers holds " + v.dump() +
                    ", not a layer index in 0.." + std::to_string(layers - 1));
      m.sparseLayers[v.get<size_t>()] = false;
    }
  }
  return m;
}

/// A soft-cap key of Gemma 2: HF's default when absent, null = none.
double softcapKey(const JsonObject &cfg, const std::string &key,
                  double hfDefault) {
  if (!cfg.has(key))
    return hfDefault;
  if (cfg.isNull(key))
    return 0;
  double v = cfg.number(key);
  if (!(v > 0))
    throw Error(cfg.file() + ": " + key +
                " must be positive or null (no soft-capping), got " +
                std::to_string(v));
  return v;
}

/// layer_types, where newer transformers write the window pattern out:
/// "sliding_attention" layers get `window`, "full_attention" ones none.
void readLayerTypes(const JsonObject &cfg, ModelConfig &c, int64_t window) {
  if (!cfg.has("layer_types") || cfg.isNull("layer_types"))
    return;
  const auto &types = cfg.raw().at("layer_types");
  if (!types.is_array() || int64_t(types.size()) != c.numLayers)
    throw Error(cfg.file() + ": layer_types must list one type per layer (" +
                std::to_string(c.numLayers) + ")");
  for (size_t i = 0; i < types.size(); ++i) {
    std::string t = types[i].is_string() ? types[i].get<std::string>() : "";
    if (t != "sliding_attention" && t != "full_attention")
      throw Error(cfg.file() + ": layer_types[" + std::to_string(i) +
                  "] must be \"sliding_attention\" or \"full_attention\"");
    c.slidingWindow[i] = t == "sliding_attention" ? window : 0;
  }
}

/// transformers' Phi3Config (Phi-3-mini/medium, Phi-3.5-mini, Phi-4-mini):
/// Llama's layer with fused qkv_proj and gate_up_proj, partial rotary
/// dimensions and LongRoPE, a window on every layer when sliding_window is
/// set.
ModelConfig readPhi3(const JsonObject &cfg, const std::string &arch) {
  ModelConfig c;
  c.architecture = arch;
  c.family = ArchFamily::Llama;
  readDecoderSizes(cfg, c, std::nullopt, 4096);
  c.normEps = cfg.number("rms_norm_eps", 1e-5);
  c.fusedProjections = true;
  c.tiedEmbeddings = cfg.boolean("tie_word_embeddings", false);
  c.hiddenAct = cfg.string("hidden_act", "silu");
  if (c.hiddenAct != "silu")
    throw Error(cfg.file() + ": unsupported hidden_act '" + c.hiddenAct +
                "' for " + arch + " (supported: silu)");
  c.qkvBias = c.outputBias = cfg.boolean("attention_bias", false);
  const double partial = cfg.number("partial_rotary_factor", 1.0);
  if (!(partial > 0 && partial <= 1))
    throw Error(cfg.file() + ": partial_rotary_factor must be in (0, 1]");
  c.rotaryDim = static_cast<int64_t>(static_cast<double>(c.headDim) * partial);
  if (c.ropeScaling && c.ropeScaling->type == "longrope")
    for (const auto *f :
         {&c.ropeScaling->shortFactors, &c.ropeScaling->longFactors})
      if (static_cast<int64_t>(f->size()) != c.rotaryDim / 2)
        throw Error(cfg.file() +
                    ": rope_scaling's short_factor and "
                    "long_factor must hold " +
                    std::to_string(c.rotaryDim / 2) +
                    " values (one per rotary pair), got " +
                    std::to_string(f->size()));
  c.slidingWindow.assign(
      static_cast<size_t>(std::max<int64_t>(c.numLayers, 0)),
      cfg.isNull("sliding_window") ? 0 : cfg.integer("sliding_window"));
  return c;
}

/// What Gemma 2 and 3 share, with their own defaults: tied unless told
/// otherwise, tanh GELU, scores scaled by query_pre_attn_scalar^-0.5.
void readGemmaCommon(const JsonObject &cfg, ModelConfig &c,
                     const std::string &arch) {
  c.architecture = arch;
  c.family = ArchFamily::Gemma2;
  // Absent means tied, as in google/gemma-2-2b's config.json.
  c.tiedEmbeddings = cfg.boolean("tie_word_embeddings", true);
  c.qkvBias = c.outputBias = cfg.boolean("attention_bias", false);
  // Gemma2Config names it hidden_activation; hidden_act is the legacy key.
  c.hiddenAct = cfg.string("hidden_activation",
                           cfg.string("hidden_act", "gelu_pytorch_tanh"));
  if (c.hiddenAct != "gelu_pytorch_tanh")
    throw Error(cfg.file() + ": unsupported hidden_activation '" + c.hiddenAct +
                "' for " + arch + " (supported: gelu_pytorch_tanh)");
  double scalar = cfg.number("query_pre_attn_scalar", 256);
  if (!(scalar > 0))
    throw Error(cfg.file() + ": query_pre_attn_scalar must be positive");
  c.attentionScale = 1.0 / std::sqrt(scalar);
}

/// transformers' Gemma2Config: the defaults are its own (google/gemma-2-2b
/// writes most of them out).
ModelConfig readGemma2(const JsonObject &cfg, const std::string &arch) {
  ModelConfig c;
  readDecoderSizes(cfg, c, 256, 8192);
  readGemmaCommon(cfg, c, arch);
  c.attnLogitSoftcap = softcapKey(cfg, "attn_logit_softcapping", 50.0);
  c.finalLogitSoftcap = softcapKey(cfg, "final_logit_softcapping", 30.0);
  int64_t window =
      cfg.isNull("sliding_window") ? 0 : cfg.integer("sliding_window", 4096);
  setEvenLayerWindows(c, window);
  readLayerTypes(cfg, c, window);
  return c;
}

/// transformers' Gemma3TextConfig. A Gemma3ForConditionalGeneration's
/// text_config often names only what differs from these defaults (the 4B's
/// names its width, depth, window and rope_scaling), so every size has one.
ModelConfig readGemma3(const JsonObject &cfg, const std::string &arch) {
  ModelConfig c;
  c.vocabSize = cfg.integer("vocab_size", 262208);
  c.hiddenSize = cfg.integer("hidden_size", 2304);
  c.numLayers = cfg.integer("num_hidden_layers", 26);
  c.numHeads = cfg.integer("num_attention_heads", 8);
  c.numKVHeads = cfg.integer("num_key_value_heads", 4);
  c.headDim = cfg.integer("head_dim", 256);
  c.intermediateSize = cfg.integer("intermediate_size", 9216);
  c.maxPositions = cfg.integer("max_position_embeddings", 131072);
  c.normEps = cfg.number("rms_norm_eps", 1e-6);
  c.ropeTheta = cfg.number("rope_theta", 1e6);
  c.rotaryDim = c.headDim;
  c.ropeScaling = readRopeScaling(cfg);
  readGemmaCommon(cfg, c, arch);
  c.qkNorm = true;
  c.localRopeTheta = cfg.number("rope_local_base_freq", 10000.0);
  if (!(c.localRopeTheta > 0))
    throw Error(cfg.file() + ": rope_local_base_freq must be positive");
  // Gemma 3 has no score soft-cap; null (its default) means none for both.
  c.attnLogitSoftcap = softcapKey(cfg, "attn_logit_softcapping", 0);
  c.finalLogitSoftcap = softcapKey(cfg, "final_logit_softcapping", 0);
  int64_t window =
      cfg.isNull("sliding_window") ? 0 : cfg.integer("sliding_window", 4096);
  int64_t pattern = cfg.integer("sliding_window_pattern", 6);
  if (pattern <= 0)
    throw Error(cfg.file() + ": sliding_window_pattern must be positive, got " +
                std::to_string(pattern));
  setGemma3Windows(c, window, pattern);
  readLayerTypes(cfg, c, window);
  return c;
}

/// transformers' GptOssConfig (openai/gpt-oss-20b and -120b): Llama's
/// layer with biased q/k/v/o, attention sinks, alternating sliding and full
/// layers, YaRN, and an MoE whose router and experts have biases (see
/// MoeConfig::gptOss). Experts may be MXFP4 (quantization_config).
ModelConfig readGptOss(const JsonObject &cfg, const std::string &arch) {
  ModelConfig c;
  c.architecture = arch;
  c.family = ArchFamily::Llama;
  readDecoderSizes(cfg, c, 64, 131072);
  c.normEps = cfg.number("rms_norm_eps", 1e-5);
  c.tiedEmbeddings = cfg.boolean("tie_word_embeddings", false);
  c.qkvBias = c.outputBias = cfg.boolean("attention_bias", true);
  c.attentionSinks = true;
  if (!cfg.isNull("quantization_config")) {
    JsonObject q(cfg.raw().at("quantization_config"),
                 cfg.file() + " (quantization_config)");
    const std::string method = q.string("quant_method", "");
    if (method != "mxfp4")
      throw Error(cfg.file() + ": quantization_config quant_method '" + method +
                  "' is not supported for " + arch + " (supported: mxfp4)");
  }
  // HF's default pattern: sliding, full, sliding, ...
  const int64_t window =
      cfg.isNull("sliding_window") ? 0 : cfg.integer("sliding_window", 128);
  setEvenLayerWindows(c, window);
  readLayerTypes(cfg, c, window);
  MoeConfig &m = c.moe;
  m.numExperts = cfg.integer("num_local_experts", 128);
  m.expertsPerToken =
      cfg.integer("num_experts_per_tok", cfg.integer("experts_per_token", 4));
  m.expertIntermediate = c.intermediateSize;
  m.normalizeTopK = false;
  m.gptOss = true;
  m.swigluLimit = cfg.number("swiglu_limit", 7.0);
  if (!(m.swigluLimit > 0))
    throw Error(cfg.file() + ": swiglu_limit must be positive");
  if (m.numExperts <= 0)
    throw Error(cfg.file() + ": num_local_experts must be positive, got " +
                std::to_string(m.numExperts));
  m.sparseLayers.assign(static_cast<size_t>(std::max<int64_t>(c.numLayers, 0)),
                        true);
  return c;
}

ModelConfig readGPT2(const JsonObject &cfg, const std::string &arch) {
  ModelConfig c;
  c.architecture = arch;
  c.vocabSize = cfg.integer("vocab_size");
  c.hiddenSize = cfg.integer("n_embd");
  c.numLayers = cfg.integer("n_layer");
  c.numHeads = cfg.integer("n_head");
  setGPT2Structure(c);
  c.intermediateSize = cfg.integer("n_inner", 4 * c.hiddenSize);
  c.maxPositions = cfg.integer("n_positions", 1024);
  c.normEps = cfg.number("layer_norm_epsilon", 1e-5);
  // GPT-2 configs written by transformers omit tie_word_embeddings: tied.
  c.tiedEmbeddings = cfg.boolean("tie_word_embeddings", true);
  c.hiddenAct = cfg.string("activation_function", "gelu_new");
  if (c.hiddenAct != "gelu_new" && c.hiddenAct != "gelu")
    throw Error(cfg.file() + ": unsupported activation_function '" +
                c.hiddenAct + "' (supported: gelu_new, gelu)");
  c.slidingWindow.assign(static_cast<size_t>(std::max<int64_t>(c.numLayers, 0)),
                         0);
  return c;
}

} // namespace

void setGPT2Structure(ModelConfig &c) {
  c.family = ArchFamily::GPT2;
  c.numKVHeads = c.numHeads;
  c.headDim = c.numHeads > 0 ? c.hiddenSize / c.numHeads : 0;
  c.rotaryDim = 0;
  c.qkvBias = c.outputBias = c.mlpBias = true;
}

void setGemma3Windows(ModelConfig &c, int64_t window, int64_t pattern) {
  c.slidingWindow.assign(static_cast<size_t>(std::max<int64_t>(c.numLayers, 0)),
                         0);
  for (size_t i = 0; i < c.slidingWindow.size(); ++i)
    if ((i + 1) % static_cast<size_t>(pattern) != 0)
      c.slidingWindow[i] = window;
}

void setEvenLayerWindows(ModelConfig &c, int64_t window) {
  c.slidingWindow.assign(static_cast<size_t>(std::max<int64_t>(c.numLayers, 0)),
                         0);
  for (size_t i = 0; i < c.slidingWindow.size(); i += 2)
    c.slidingWindow[i] = window;
}

const std::vector<std::string> &supportedArchitectures() {
  static const std::vector<std::string> archs = {
      "GPT2LMHeadModel",
      "Gemma2ForCausalLM",
      "Gemma3ForCausalLM",
      "Gemma3ForConditionalGeneration (its language model)",
      "GptOssForCausalLM",
      "LlamaForCausalLM",
      "MistralForCausalLM",
      "MixtralForCausalLM",
      "Phi3ForCausalLM",
      "Qwen2ForCausalLM",
      "Qwen3ForCausalLM",
      "Qwen3MoeForCausalLM"};
  return archs;
}

void validate(const ModelConfig &c, const std::string &source) {
  auto positive = [&](int64_t v, const char *what) {
    if (v <= 0)
      throw Error(source + ": " + what + " must be positive, got " +
                  std::to_string(v));
  };
  positive(c.vocabSize, "vocab size");
  positive(c.hiddenSize, "hidden size");
  positive(c.numLayers, "number of layers");
  positive(c.numHeads, "number of attention heads");
  positive(c.numKVHeads, "number of kv heads");
  positive(c.headDim, "head_dim");
  positive(c.intermediateSize, "intermediate size");
  positive(c.maxPositions, "context length");
  if (c.numHeads % c.numKVHeads)
    throw Error(source + ": attention heads (" + std::to_string(c.numHeads) +
                ") must be a multiple of kv heads (" +
                std::to_string(c.numKVHeads) + ")");
  if (c.family == ArchFamily::GPT2 && c.hiddenSize % c.numHeads)
    throw Error(source + ": n_embd (" + std::to_string(c.hiddenSize) +
                ") must be a multiple of n_head (" +
                std::to_string(c.numHeads) + ")");
  if (c.family != ArchFamily::GPT2 &&
      (c.rotaryDim <= 0 || c.rotaryDim % 2 || c.rotaryDim > c.headDim))
    throw Error(source + ": rotary dimension (" + std::to_string(c.rotaryDim) +
                ") must be even and at most head_dim (" +
                std::to_string(c.headDim) + ")");
  if (!(c.normEps > 0))
    throw Error(source + ": norm epsilon must be positive");
  for (int64_t w : c.slidingWindow)
    if (w < 0)
      throw Error(source + ": sliding_window must be >= 0");
  if (c.moe.enabled()) {
    const MoeConfig &m = c.moe;
    positive(m.expertIntermediate, "expert intermediate size");
    if (m.expertsPerToken <= 0 || m.expertsPerToken > m.numExperts)
      throw Error(source + ": experts per token (" +
                  std::to_string(m.expertsPerToken) + ") must be in 1.." +
                  std::to_string(m.numExperts) + " (the expert count)");
    if (int64_t(m.sparseLayers.size()) != c.numLayers)
      throw Error(source + ": the MoE layer list must name every layer");
  }
}

ModelConfig readHFConfig(const std::string &configPath) {
  nlohmann::json json = readJsonFile(configPath);
  JsonObject cfg(json, configPath);
  const auto &archs = cfg.raw().contains("architectures")
                          ? cfg.raw().at("architectures")
                          : nlohmann::json();
  if (!archs.is_array() || archs.empty() || !archs[0].is_string())
    throw Error(configPath +
                ": key 'architectures' must be a non-empty list of strings "
                "naming the model class (supported: " +
                join(supportedArchitectures()) + ")");
  std::string arch = archs[0].get<std::string>();
  ModelConfig c;
  if (arch == "LlamaForCausalLM" || arch == "MistralForCausalLM" ||
      arch == "Qwen2ForCausalLM" || arch == "Qwen3ForCausalLM")
    c = readLlamaLike(cfg, arch);
  else if (arch == "MixtralForCausalLM" || arch == "Qwen3MoeForCausalLM") {
    c = readLlamaLike(cfg, arch);
    c.moe = readMoe(cfg, arch, c.numLayers);
  } else if (arch == "Qwen2MoeForCausalLM")
    refuseUnsupportedMoe(cfg, arch);
  else if (arch == "DeepseekV2ForCausalLM" || arch == "DeepseekV3ForCausalLM") {
    refuseUnsupportedMoe(cfg, arch);
    throw Error(configPath + ": " + arch +
                " (multi-head latent attention) is not supported yet");
  } else if (arch == "GPT2LMHeadModel")
    c = readGPT2(cfg, arch);
  else if (arch == "Gemma2ForCausalLM")
    c = readGemma2(cfg, arch);
  else if (arch == "Gemma3ForCausalLM")
    c = readGemma3(cfg, arch);
  else if (arch == "Phi3ForCausalLM")
    c = readPhi3(cfg, arch);
  else if (arch == "GptOssForCausalLM")
    c = readGptOss(cfg, arch);
  else if (arch == "Gemma3ForConditionalGeneration") {
    if (!cfg.has("text_config") || !cfg.raw().at("text_config").is_object())
      throw Error(configPath + ": " + arch +
                  " needs a 'text_config' object (its language model)");
    JsonObject text(cfg.raw().at("text_config"), configPath + " (text_config)");
    c = readGemma3(text, "Gemma3ForCausalLM");
    c.multimodalArchitecture = arch;
  }
  if (c.architecture.empty())
    throw Error(configPath + ": unsupported architecture '" + arch +
                "' (supported: " + join(supportedArchitectures()) + ")");
  if (!cfg.isNull("bos_token_id"))
    c.bosTokenId = cfg.integer("bos_token_id");
  addEosIds(cfg, c.eosTokenIds);
  c.torchDtype = cfg.string("torch_dtype", "");

  auto genPath = std::filesystem::path(configPath).parent_path() /
                 "generation_config.json";
  if (std::filesystem::exists(genPath)) {
    nlohmann::json gen = readJsonFile(genPath.string());
    JsonObject g(gen, genPath.string());
    addEosIds(g, c.eosTokenIds);
    if (!c.bosTokenId && !g.isNull("bos_token_id"))
      c.bosTokenId = g.integer("bos_token_id");
  }
  validate(c, configPath);
  return c;
}

} // namespace llmc
