#include "convert.h"

#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"
#include "llmc/weights/rope_permute.h"
#include "llmc/weights/safetensors.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace llmc::make_gguf {

namespace fs = std::filesystem;
using nlohmann::json;
using weights::DType;

namespace {

struct Arch {
  std::string name; // general.architecture and key prefix
  bool permuteQK;   // llama's Q/K row order for ggml's RoPE
  bool gpt2 = false;
  bool gemma2 = false; // norms stored as 1 + w, llama.cpp's gemma2/3 names
  /// Mixtral ("block_sparse_moe.", w1/w3/w2) or Qwen3-MoE ("mlp.",
  /// gate/up/down_proj) experts; "" for a dense model.
  std::string moePrefix;
  bool gptOss = false; // its own experts, sinks and post-attention norm
};

Arch archOf(const json &config) {
  auto it = config.find("architectures");
  std::string a = it != config.end() && it->is_array() && !it->empty() &&
                          (*it)[0].is_string()
                      ? (*it)[0].get<std::string>()
                      : "";
  if (a == "LlamaForCausalLM")
    return {"llama", true, false, false, ""};
  if (a == "Qwen2ForCausalLM")
    return {"qwen2", false, false, false, ""};
  if (a == "Qwen3ForCausalLM")
    return {"qwen3", false, false, false, ""};
  // convert_hf_to_gguf.py writes Mixtral as llama with stacked experts.
  if (a == "MixtralForCausalLM")
    return {"llama", true, false, false, "block_sparse_moe."};
  if (a == "Qwen3MoeForCausalLM")
    return {"qwen3moe", false, false, false, "mlp."};
  if (a == "GPT2LMHeadModel")
    return {"gpt2", false, true, false, ""};
  if (a == "Gemma2ForCausalLM")
    return {"gemma2", false, false, true, ""};
  if (a == "Gemma3ForCausalLM")
    return {"gemma3", false, false, true, ""};
  if (a == "Phi3ForCausalLM")
    return {"phi3", false, false, false, ""};
  if (a == "GptOssForCausalLM")
    return {"gpt-oss", false, false, false, "mlp.", true};
  throw Error("config.json: architecture '" + a +
              "' is not supported by llmc-make-gguf (Gemma2ForCausalLM, "
              "Gemma3ForCausalLM, GPT2LMHeadModel, GptOssForCausalLM, "
              "Phi3ForCausalLM, LlamaForCausalLM, MixtralForCausalLM, "
              "Qwen2ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM)");
}

double floatKey(const json &config, const char *key, double dflt) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null())
    return dflt;
  if (!it->is_number())
    throw Error(std::string("config.json: '") + key + "' must be a number");
  return it->get<double>();
}

/// PREFIX N . REST -> blk.N.<perLayer[REST]> ("" for a tensor llama.cpp
/// drops); throws naming `hf` for anything else. (std::regex trips GCC
/// warnings under sanitizers.)
std::string layerName(const std::string &n, const std::string &prefix,
                      const std::map<std::string, std::string> &perLayer,
                      const std::string &hf) {
  if (n.rfind(prefix, 0) == 0) {
    size_t dot = n.find('.', prefix.size());
    std::string layer = n.substr(prefix.size(), dot - prefix.size());
    bool digits = !layer.empty() && dot != std::string::npos &&
                  layer.find_first_not_of("0123456789") == std::string::npos;
    auto it = digits ? perLayer.find(n.substr(dot + 1)) : perLayer.end();
    if (it != perLayer.end())
      return it->second.empty() ? "" : "blk." + layer + "." + it->second;
  }
  throw Error("tensor '" + hf + "' has no GGUF name (unknown tensor)");
}

// HF name -> GGUF name; "" for tensors llama.cpp drops. Gemma 2 has two
// more norms per layer, and its post-attention norm is not the pre-MLP one;
// gpt-oss names its pre-MLP norm post_attention_norm.
std::string ggufName(const std::string &hf, bool gemma2, bool gptOss) {
  static const std::map<std::string, std::string> perLayer = {
      {"input_layernorm.weight", "attn_norm.weight"},
      {"self_attn.q_proj.weight", "attn_q.weight"},
      {"self_attn.q_proj.bias", "attn_q.bias"},
      {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.k_proj.bias", "attn_k.bias"},
      {"self_attn.v_proj.weight", "attn_v.weight"},
      {"self_attn.v_proj.bias", "attn_v.bias"},
      {"self_attn.o_proj.weight", "attn_output.weight"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"},
      {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},
      {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
      {"self_attn.rotary_emb.inv_freq", ""},
      {"self_attn.qkv_proj.weight", "attn_qkv.weight"}, // Phi-3's fused
      {"mlp.gate_up_proj.weight", "ffn_up.weight"},     // ones
      {"block_sparse_moe.gate.weight", "ffn_gate_inp.weight"},
      {"mlp.gate.weight", "ffn_gate_inp.weight"},
      {"self_attn.o_proj.bias", "attn_output.bias"},
  };
  static const std::map<std::string, std::string> gptOssPerLayer = [] {
    auto m = perLayer;
    m["post_attention_layernorm.weight"] = "post_attention_norm.weight";
    m["self_attn.sinks"] = "attn_sinks.weight";
    m["mlp.router.weight"] = "ffn_gate_inp.weight";
    m["mlp.router.bias"] = "ffn_gate_inp.bias";
    return m;
  }();
  static const std::map<std::string, std::string> gemma2PerLayer = [] {
    auto m = perLayer;
    m["post_attention_layernorm.weight"] = "post_attention_norm.weight";
    m["pre_feedforward_layernorm.weight"] = "ffn_norm.weight";
    m["post_feedforward_layernorm.weight"] = "post_ffw_norm.weight";
    return m;
  }();
  if (hf == "model.embed_tokens.weight")
    return "token_embd.weight";
  if (hf == "model.norm.weight")
    return "output_norm.weight";
  if (hf == "lm_head.weight")
    return gemma2 ? "" : "output.weight"; // Gemma 2's head is tied
  return layerName(hf, "model.layers.",
                   gemma2   ? gemma2PerLayer
                   : gptOss ? gptOssPerLayer
                            : perLayer,
                   hf);
}

/// llama.cpp's names for GPT-2 (gguf-py's tensor_mapping.py); "" for the
/// attention-mask buffers it drops.
std::string gpt2GgufName(const std::string &hf) {
  static const std::map<std::string, std::string> perLayer = {
      {"ln_1.weight", "attn_norm.weight"},
      {"ln_1.bias", "attn_norm.bias"},
      {"attn.c_attn.weight", "attn_qkv.weight"},
      {"attn.c_attn.bias", "attn_qkv.bias"},
      {"attn.c_proj.weight", "attn_output.weight"},
      {"attn.c_proj.bias", "attn_output.bias"},
      {"ln_2.weight", "ffn_norm.weight"},
      {"ln_2.bias", "ffn_norm.bias"},
      {"mlp.c_fc.weight", "ffn_up.weight"},
      {"mlp.c_fc.bias", "ffn_up.bias"},
      {"mlp.c_proj.weight", "ffn_down.weight"},
      {"mlp.c_proj.bias", "ffn_down.bias"},
      {"attn.bias", ""},
      {"attn.masked_bias", ""},
  };
  std::string n = hf.rfind("transformer.", 0) == 0 ? hf.substr(12) : hf;
  if (n == "wte.weight")
    return "token_embd.weight";
  if (n == "wpe.weight")
    return "position_embd.weight";
  if (n == "ln_f.weight")
    return "output_norm.weight";
  if (n == "ln_f.bias")
    return "output_norm.bias";
  if (n == "lm_head.weight")
    return "output.weight";
  return layerName(n, "h.", perLayer, hf);
}

/// GPT-2's Conv1D weights, [in, out]; llama.cpp stores them [out, in].
bool isConv1D(const std::string &hf) {
  for (const char *s : {".c_attn.weight", ".c_proj.weight", ".c_fc.weight"})
    if (hf.size() > std::strlen(s) &&
        hf.compare(hf.size() - std::strlen(s), std::string::npos, s) == 0)
      return true;
  return false;
}

/// The keys convert_hf_to_gguf.py's GPT2Model writes.
void gpt2Metadata(const json &config, weights::GGUFWriter &out) {
  int64_t embd = intKey(config, "n_embd");
  auto inner = config.find("n_inner");
  out.addU32("gpt2.block_count",
             static_cast<uint32_t>(intKey(config, "n_layer")));
  out.addU32("gpt2.context_length",
             static_cast<uint32_t>(intKey(config, "n_positions")));
  out.addU32("gpt2.embedding_length", static_cast<uint32_t>(embd));
  out.addU32("gpt2.feed_forward_length",
             static_cast<uint32_t>(inner != config.end() && !inner->is_null()
                                       ? intKey(config, "n_inner")
                                       : 4 * embd));
  out.addU32("gpt2.attention.head_count",
             static_cast<uint32_t>(intKey(config, "n_head")));
  out.addF32("gpt2.attention.layer_norm_epsilon",
             static_cast<float>(floatKey(config, "layer_norm_epsilon", 1e-5)));
}

int fileType(DType t) {
  switch (t) {
  case DType::F16:
    return 1;
  case DType::Q4_0:
    return 2;
  case DType::Q8_0:
    return 7;
  case DType::BF16:
    return 32;
  default:
    return 0;
  }
}

int64_t headDimOf(const json &config) {
  return config.contains("head_dim") && !config["head_dim"].is_null()
             ? intKey(config, "head_dim")
             : intKey(config, "hidden_size") /
                   intKey(config, "num_attention_heads");
}

/// rope_scaling as convert_hf_to_gguf.py writes it: linear and yarn as
/// rope.scaling.* keys; llama3 as no key at all but per-pair factors
/// (llamaRopeFreqs).
void ropeScalingMetadata(const json &config, const std::string &p,
                         weights::GGUFWriter &out) {
  auto rs = config.find("rope_scaling");
  if (rs == config.end() || !rs->is_object())
    return;
  std::string type = rs->value("rope_type", rs->value("type", ""));
  if (type == "linear" || type == "yarn") {
    out.addString(p + ".rope.scaling.type", type);
    out.addF32(p + ".rope.scaling.factor",
               static_cast<float>(floatKey(*rs, "factor", 1.0)));
    if (rs->contains("original_max_position_embeddings"))
      out.addU32(p + ".rope.scaling.original_context_length",
                 static_cast<uint32_t>(
                     intKey(*rs, "original_max_position_embeddings")));
    // llama.cpp always rounds YaRN's correction range and has no key for
    // transformers' `truncate: false` (gpt-oss); llmc's own key carries it
    // (llama.cpp ignores it and keeps rounding).
    if (type == "yarn" && rs->contains("truncate") &&
        (*rs)["truncate"] == json(false))
      out.addBool(p + ".rope.scaling.yarn_truncate", false);
  } else if (type != "llama3" && type != "default" && !type.empty()) {
    throw Error("config.json: rope_scaling type '" + type +
                "' is not supported by llmc-make-gguf (linear, yarn, llama3)");
  }
}

/// convert_hf_to_gguf.py's LlamaModel.generate_extra_tensors: llama3 rope
/// scaling as one divisor per rotary pair, computed in float32 as torch does.
std::vector<float> llamaRopeFreqs(const json &config, int64_t headDim) {
  auto rs = config.find("rope_scaling");
  if (rs == config.end() || !rs->is_object() ||
      rs->value("rope_type", rs->value("type", "")) != "llama3")
    return {};
  const float base =
      static_cast<float>(floatKey(config, "rope_theta", 10000.0));
  const float factor = static_cast<float>(floatKey(*rs, "factor", 8.0));
  const float low = static_cast<float>(floatKey(*rs, "low_freq_factor", 1.0));
  const float high = static_cast<float>(floatKey(*rs, "high_freq_factor", 4.0));
  const float old = static_cast<float>(
      floatKey(*rs, "original_max_position_embeddings", 8192));
  const float lowWavelen = old / low, highWavelen = old / high;
  std::vector<float> factors;
  for (int64_t i = 0; i < headDim; i += 2) {
    float freq = 1.0f / std::pow(base, static_cast<float>(i) /
                                           static_cast<float>(headDim));
    float wavelen = 2.0f * static_cast<float>(M_PI) / freq;
    if (wavelen < highWavelen) {
      factors.push_back(1.0f);
    } else if (wavelen > lowWavelen) {
      factors.push_back(factor);
    } else {
      float smooth = (old / wavelen - low) / (high - low);
      factors.push_back(1.0f / ((1 - smooth) / factor + smooth));
    }
  }
  return factors;
}

/// The keys convert_hf_to_gguf.py's Gemma2Model and Gemma3Model write (and
/// Gemma 2's rope.freq_base, which that converter leaves to llama.cpp's
/// default of 10000). llama.cpp has no key for query_pre_attn_scalar: it
/// derives the scale (gemmaFromGGUF), so a checkpoint with another one
/// cannot be written; nor, for Gemma 3, another rope_local_base_freq than
/// 10000, another pattern than every sixth layer global, or a soft-cap.
void gemmaMetadata(const json &config, const std::string &p,
                   weights::GGUFWriter &out) {
  const bool gemma3 = p == "gemma3";
  const int64_t layers = intKey(config, "num_hidden_layers");
  const int64_t hidden = intKey(config, "hidden_size");
  const int64_t nHead = intKey(config, "num_attention_heads");
  const int64_t headDim = intKey(config, "head_dim");
  const double scalar = floatKey(config, "query_pre_attn_scalar", 256);
  const int64_t derived =
      layers == (gemma3 ? 62 : 46) ? hidden / nHead : headDim;
  if (scalar != static_cast<double>(derived))
    throw Error("config.json: query_pre_attn_scalar " +
                config.value("query_pre_attn_scalar", json(256)).dump() +
                " is not what llama.cpp derives (" + std::to_string(derived) +
                ": head_dim, or hidden / heads for the 27B model); a GGUF "
                "cannot carry it");
  if (gemma3) {
    if (floatKey(config, "rope_local_base_freq", 10000.0) != 10000.0)
      throw Error("config.json: rope_local_base_freq is not 10000, which "
                  "llama.cpp's gemma3 assumes; a GGUF cannot carry it");
    if (config.value("sliding_window_pattern", 6) != 6 ||
        config.contains("layer_types"))
      throw Error("config.json: llama.cpp's gemma3 makes every sixth layer "
                  "global (sliding_window_pattern 6, no layer_types); a GGUF "
                  "cannot carry another pattern");
    for (const char *key :
         {"attn_logit_softcapping", "final_logit_softcapping"})
      if (config.contains(key) && !config[key].is_null())
        throw Error(std::string("config.json: '") + key +
                    "' is set, but llama.cpp's gemma3 soft-caps nothing; a "
                    "GGUF cannot carry it");
  } else {
    for (const char *key : {"attn_logit_softcapping", "final_logit_softcapping",
                            "sliding_window"})
      if (!config.contains(key) || !config[key].is_number())
        throw Error(std::string("config.json: '") + key +
                    "' must be a number (llama.cpp's gemma2 takes it as "
                    "given)");
  }
  out.addU32(p + ".context_length",
             static_cast<uint32_t>(intKey(config, "max_position_embeddings")));
  out.addU32(p + ".embedding_length", static_cast<uint32_t>(hidden));
  out.addU32(p + ".block_count", static_cast<uint32_t>(layers));
  out.addU32(p + ".feed_forward_length",
             static_cast<uint32_t>(intKey(config, "intermediate_size")));
  out.addU32(p + ".attention.head_count", static_cast<uint32_t>(nHead));
  out.addU32(p + ".attention.head_count_kv",
             static_cast<uint32_t>(config.contains("num_key_value_heads")
                                       ? intKey(config, "num_key_value_heads")
                                       : nHead));
  out.addF32(p + ".attention.layer_norm_rms_epsilon",
             static_cast<float>(floatKey(config, "rms_norm_eps", 1e-6)));
  out.addU32(p + ".attention.key_length", static_cast<uint32_t>(headDim));
  out.addU32(p + ".attention.value_length", static_cast<uint32_t>(headDim));
  if (!gemma3) {
    out.addF32(
        p + ".attn_logit_softcapping",
        static_cast<float>(floatKey(config, "attn_logit_softcapping", 0)));
    out.addF32(
        p + ".final_logit_softcapping",
        static_cast<float>(floatKey(config, "final_logit_softcapping", 0)));
  }
  out.addU32(p + ".attention.sliding_window",
             static_cast<uint32_t>(intKey(config, "sliding_window")));
  out.addF32(p + ".rope.freq_base",
             static_cast<float>(
                 floatKey(config, "rope_theta", gemma3 ? 1e6 : 10000.0)));
  if (gemma3) {
    auto rs = config.find("rope_scaling");
    if (rs != config.end() && rs->is_object() &&
        rs->value("rope_type", rs->value("type", "")) != "linear")
      throw Error("config.json: Gemma 3's rope_scaling must be linear (as "
                  "llama.cpp's converter requires)");
    ropeScalingMetadata(config, p, out);
  }
}

/// The keys convert_hf_to_gguf.py's Phi3MiniModel writes: the rotary width
/// (partial_rotary_factor) as rope.dimension_count, the window (0 for none,
/// as Phi-4), and LongRoPE's switch and attention factor (its factors are
/// tensors: phi3RopeFactors).
void phi3Metadata(const json &config, weights::GGUFWriter &out) {
  const int64_t hidden = intKey(config, "hidden_size");
  const int64_t nHead = intKey(config, "num_attention_heads");
  const int64_t maxPos = intKey(config, "max_position_embeddings");
  const int64_t rot =
      static_cast<int64_t>(static_cast<double>(hidden / nHead) *
                           floatKey(config, "partial_rotary_factor", 1.0));
  out.addU32("phi3.context_length", static_cast<uint32_t>(maxPos));
  out.addU32("phi3.embedding_length", static_cast<uint32_t>(hidden));
  out.addU32("phi3.feed_forward_length",
             static_cast<uint32_t>(intKey(config, "intermediate_size")));
  out.addU32("phi3.block_count",
             static_cast<uint32_t>(intKey(config, "num_hidden_layers")));
  out.addU32("phi3.attention.head_count", static_cast<uint32_t>(nHead));
  out.addU32("phi3.attention.head_count_kv",
             static_cast<uint32_t>(config.contains("num_key_value_heads")
                                       ? intKey(config, "num_key_value_heads")
                                       : nHead));
  out.addF32("phi3.attention.layer_norm_rms_epsilon",
             static_cast<float>(floatKey(config, "rms_norm_eps", 1e-5)));
  out.addU32("phi3.rope.dimension_count", static_cast<uint32_t>(rot));
  out.addF32("phi3.rope.freq_base",
             static_cast<float>(floatKey(config, "rope_theta", 10000.0)));
  auto window = config.find("sliding_window");
  out.addU32("phi3.attention.sliding_window",
             window != config.end() && window->is_number_integer()
                 ? static_cast<uint32_t>(window->get<int64_t>())
                 : 0);
  auto rs = config.find("rope_scaling");
  if (rs == config.end() || !rs->is_object())
    return;
  const std::string type = rs->value("rope_type", rs->value("type", ""));
  if (type != "longrope" && type != "su")
    throw Error("config.json: Phi-3's rope_scaling '" + type +
                "' is not supported by llmc-make-gguf (longrope)");
  const int64_t original =
      config.contains("original_max_position_embeddings")
          ? intKey(config, "original_max_position_embeddings")
          : maxPos;
  out.addU32("phi3.rope.scaling.original_context_length",
             static_cast<uint32_t>(original));
  const double scale = double(maxPos) / double(original);
  out.addF32(
      "phi3.rope.scaling.attn_factor",
      static_cast<float>(
          rs->contains("attention_factor")
              ? floatKey(*rs, "attention_factor", 1.0)
          : scale <= 1.0
              ? 1.0
              : std::sqrt(1.0 + std::log(scale) / std::log(double(original)))));
}

/// LongRoPE's per-pair factors as the converter stores them.
void phi3RopeFactors(const json &config, weights::GGUFWriter &out) {
  auto rs = config.find("rope_scaling");
  if (rs == config.end() || !rs->is_object())
    return;
  for (const auto &[hf, gg] : {std::pair<const char *, const char *>{
                                   "long_factor", "rope_factors_long.weight"},
                               {"short_factor", "rope_factors_short.weight"}}) {
    std::vector<float> v;
    for (const auto &x : rs->at(hf))
      v.push_back(x.get<float>());
    out.addTensor(gg, {static_cast<int64_t>(v.size())}, v.data(), DType::F32);
  }
}

void llamaMetadata(const json &config, const std::string &p,
                   weights::GGUFWriter &out) {
  int64_t hidden = intKey(config, "hidden_size");
  int64_t nHead = intKey(config, "num_attention_heads");
  int64_t nKv = config.contains("num_key_value_heads")
                    ? intKey(config, "num_key_value_heads")
                    : nHead;
  int64_t headDim = headDimOf(config);
  out.addU32(p + ".block_count",
             static_cast<uint32_t>(intKey(config, "num_hidden_layers")));
  out.addU32(p + ".context_length",
             static_cast<uint32_t>(intKey(config, "max_position_embeddings")));
  out.addU32(p + ".embedding_length", static_cast<uint32_t>(hidden));
  out.addU32(p + ".feed_forward_length",
             static_cast<uint32_t>(intKey(config, "intermediate_size")));
  out.addU32(p + ".attention.head_count", static_cast<uint32_t>(nHead));
  out.addU32(p + ".attention.head_count_kv", static_cast<uint32_t>(nKv));
  out.addF32(p + ".rope.freq_base",
             static_cast<float>(floatKey(config, "rope_theta", 10000.0)));
  out.addF32(p + ".attention.layer_norm_rms_epsilon",
             static_cast<float>(floatKey(config, "rms_norm_eps", 1e-6)));
  out.addU32(p + ".rope.dimension_count", static_cast<uint32_t>(headDim));
  // As convert_hf_to_gguf.py: an explicit head_dim (Qwen3's differs from
  // hidden / heads) is written as the key and value lengths.
  if (config.contains("head_dim") && !config["head_dim"].is_null()) {
    out.addU32(p + ".attention.key_length", static_cast<uint32_t>(headDim));
    out.addU32(p + ".attention.value_length", static_cast<uint32_t>(headDim));
  }
  out.addU32(p + ".vocab_size",
             static_cast<uint32_t>(intKey(config, "vocab_size")));
  ropeScalingMetadata(config, p, out);
}

/// `type`, or F16 where a row is not a whole number of its blocks (as
/// convert_hf_to_gguf.py falls back), with a note on stderr. 1-D tensors
/// and routers (ffn_gate_inp) stay F32, as that converter keeps them.
DType storageFor(const std::string &gg, const std::vector<int64_t> &shape,
                 DType type) {
  if (shape.size() == 1 || gg.find("ffn_gate_inp") != std::string::npos ||
      (gg.size() > 5 && gg.compare(gg.size() - 5, 5, ".bias") == 0))
    return DType::F32;
  int64_t block = weights::dtypeBlockSize(type);
  if (block > 1 && shape.back() % block != 0) {
    std::cerr << "llmc-make-gguf: " << gg << ": rows of " << shape.back()
              << " are not whole " << weights::dtypeName(type)
              << " blocks; storing F16\n";
    return DType::F16;
  }
  return type;
}

/// An expert's tensor "model.layers.L.<prefix>experts.E.<proj>.weight".
bool isExpertTensor(const std::string &hf, const Arch &arch) {
  return !arch.moePrefix.empty() &&
         hf.find("." + arch.moePrefix + "experts.") != std::string::npos;
}

/// The keys convert_hf_to_gguf.py adds for experts: expert_count and
/// expert_used_count; Qwen3-MoE's expert width is
/// expert_feed_forward_length (feed_forward_length stays the dense one).
/// llama.cpp renormalises the chosen experts and makes every layer sparse,
/// so a checkpoint that does otherwise cannot be written.
void moeMetadata(const json &config, const Arch &arch,
                 weights::GGUFWriter &out) {
  const bool mixtral = arch.name == "llama";
  const int64_t experts =
      intKey(config, mixtral ? "num_local_experts" : "num_experts");
  out.addU32(arch.name + ".expert_count", static_cast<uint32_t>(experts));
  out.addU32(arch.name + ".expert_used_count",
             static_cast<uint32_t>(intKey(config, "num_experts_per_tok")));
  if (mixtral)
    return;
  out.addU32(arch.name + ".expert_feed_forward_length",
             static_cast<uint32_t>(intKey(config, "moe_intermediate_size")));
  if (!config.value("norm_topk_prob", false))
    throw Error("config.json: norm_topk_prob is false, but llama.cpp's "
                "qwen3moe always renormalises the chosen experts' weights; "
                "a GGUF cannot carry it");
  auto dense = config.find("mlp_only_layers");
  if ((dense != config.end() && dense->is_array() && !dense->empty()) ||
      config.value("decoder_sparse_step", 1) != 1)
    throw Error("config.json: mlp_only_layers / decoder_sparse_step make some "
                "layers dense, but llama.cpp's qwen3moe makes every layer "
                "sparse; a GGUF cannot carry it");
}

/// Per layer, the experts' gate, up and down projections stacked
/// [experts, rows, cols] as llama.cpp's ffn_{gate,up,down}_exps, or with
/// `perExpert` as its older one tensor per expert, ffn_{gate,up,down}.E.
void convertExperts(const weights::Checkpoint &ck, const json &config,
                    const Arch &arch, DType type, bool perExpert,
                    weights::GGUFWriter &out) {
  const bool mixtral = arch.name == "llama";
  const int64_t experts =
      intKey(config, mixtral ? "num_local_experts" : "num_experts");
  const int64_t layers = intKey(config, "num_hidden_layers");
  const std::pair<const char *, const char *> projs[] = {
      {mixtral ? "w1" : "gate_proj", "ffn_gate"},
      {mixtral ? "w3" : "up_proj", "ffn_up"},
      {mixtral ? "w2" : "down_proj", "ffn_down"}};
  for (int64_t l = 0; l < layers; ++l)
    for (const auto &[hf, gg] : projs) {
      std::vector<float> stacked;
      std::vector<int64_t> shape;
      const std::string blk = "blk." + std::to_string(l) + ".";
      for (int64_t e = 0; e < experts; ++e) {
        const std::string name = "model.layers." + std::to_string(l) + "." +
                                 arch.moePrefix + "experts." +
                                 std::to_string(e) + "." + hf + ".weight";
        const weights::TensorRef *t = ck.find(name);
        if (!t)
          throw Error("missing tensor '" + name + "'");
        std::vector<float> data(static_cast<size_t>(t->numElements()));
        weights::toFloat32(*t, data.data());
        if (perExpert) {
          const std::string one =
              blk + gg + "." + std::to_string(e) + ".weight";
          out.addTensor(one, t->shape, data.data(),
                        storageFor(one, t->shape, type));
          continue;
        }
        shape = {experts, t->shape[0], t->shape[1]};
        stacked.insert(stacked.end(), data.begin(), data.end());
      }
      const std::string beyond = "model.layers." + std::to_string(l) + "." +
                                 arch.moePrefix + "experts." +
                                 std::to_string(experts) + "." + hf + ".weight";
      if (ck.find(beyond))
        throw Error("tensor '" + beyond +
                    "': the checkpoint holds more than "
                    "the " +
                    std::to_string(experts) + " experts config.json names");
      if (!perExpert)
        out.addTensor(blk + gg + "_exps.weight", shape, stacked.data(),
                      storageFor(blk + gg + "_exps.weight", shape, type));
    }
}

} // namespace

int64_t intKey(const json &config, const char *key,
               std::optional<int64_t> fallback) {
  auto it = config.find(key);
  if (fallback && (it == config.end() || it->is_null()))
    return *fallback;
  if (it == config.end() || !it->is_number_integer())
    throw Error(std::string("config.json: '") + key + "' must be an integer");
  return it->get<int64_t>();
}

json readJson(const std::string &dir, const std::string &name) {
  std::string path = (fs::path(dir) / name).string();
  try {
    return json::parse(readFile(path));
  } catch (const json::exception &e) {
    throw Error(path + ": " + e.what());
  }
}

void convertModel(const std::string &dir, const json &config, DType type,
                  bool perExpert, bool fusedGateUp, weights::GGUFWriter &out) {
  Arch arch = archOf(config);
  const std::string &p = arch.name;
  std::string name = fs::path(dir).filename().string();
  if (name.empty())
    name = fs::path(dir).parent_path().filename().string();
  out.addString("general.architecture", p);
  out.addString("general.name", name);
  if (arch.gpt2)
    gpt2Metadata(config, out);
  else if (arch.gemma2)
    gemmaMetadata(config, p, out);
  else if (p == "phi3")
    phi3Metadata(config, out);
  else
    llamaMetadata(config, p, out);
  if (fusedGateUp && !arch.gptOss)
    throw Error("--fused-gate-up: only gpt-oss's experts are written fused");
  if (arch.gptOss) {
    if (perExpert)
      throw Error("--per-expert: llama.cpp's gpt-oss stacks its experts");
    gptOssMetadata(config, out);
  } else if (!arch.moePrefix.empty())
    moeMetadata(config, arch, out);
  else if (perExpert)
    throw Error("--per-expert: config.json's model has no experts");
  out.addU32("general.file_type", static_cast<uint32_t>(fileType(type)));
  if (type == DType::Q8_0 || type == DType::Q4_0)
    out.addU32("general.quantization_version", 2);
  const int64_t nHead = arch.gpt2 ? 0 : intKey(config, "num_attention_heads");
  const int64_t nKv = arch.gpt2 || !config.contains("num_key_value_heads")
                          ? nHead
                          : intKey(config, "num_key_value_heads");

  auto ck = weights::Checkpoint::open(dir);
  for (const std::string &hfName : ck.names()) {
    if (isExpertTensor(hfName, arch))
      continue; // stacked below
    std::string gg = arch.gpt2 ? gpt2GgufName(hfName)
                               : ggufName(hfName, arch.gemma2, arch.gptOss);
    if (gg.empty())
      continue;
    const weights::TensorRef &t = *ck.find(hfName);
    std::vector<float> data(static_cast<size_t>(t.numElements()));
    weights::toFloat32(t, data.data());
    std::vector<int64_t> shape = t.shape;
    // As Gemma2Model.modify_tensors: llama.cpp's RMSNorm multiplies by w.
    if (arch.gemma2 && hfName.size() > 11 &&
        hfName.compare(hfName.size() - 11, 11, "norm.weight") == 0)
      for (float &v : data)
        v += 1.0f;
    if (arch.gpt2 && isConv1D(hfName)) {
      std::vector<float> tr(data.size());
      for (int64_t i = 0; i < shape[0]; ++i)
        for (int64_t j = 0; j < shape[1]; ++j)
          tr[size_t(j * shape[0] + i)] = data[size_t(i * shape[1] + j)];
      data.swap(tr);
      std::swap(shape[0], shape[1]);
    }
    bool isQ = hfName.find("q_proj") != std::string::npos;
    bool isK = hfName.find("k_proj") != std::string::npos;
    if (arch.permuteQK && (isQ || isK)) {
      int64_t rows = shape[0];
      int64_t cols = shape.size() > 1 ? shape[1] : 1;
      std::vector<float> permuted(data.size());
      weights::permuteGGUFRope(data.data(), permuted.data(), rows, cols,
                               isQ ? nHead : nKv);
      data.swap(permuted);
    }
    out.addTensor(gg, shape, data.data(), storageFor(gg, shape, type));
  }
  if (arch.gptOss)
    convertGptOssExperts(ck, config, type, fusedGateUp, out);
  else if (!arch.moePrefix.empty())
    convertExperts(ck, config, arch, type, perExpert, out);
  if (p == "phi3")
    phi3RopeFactors(config, out);
  else if (!arch.gpt2 && !arch.gemma2) {
    std::vector<float> freqs = llamaRopeFreqs(config, headDimOf(config));
    if (!freqs.empty())
      out.addTensor("rope_freqs.weight", {static_cast<int64_t>(freqs.size())},
                    freqs.data(), DType::F32);
  }
}
} // namespace llmc::make_gguf
