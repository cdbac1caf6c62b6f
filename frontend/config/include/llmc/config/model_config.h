//===- model_config.h - One validated description of a model --*- C++ -*-===//
//
// Every architecture's hyper-parameters, read from a Hugging Face config.json
// or GGUF metadata, land in one ModelConfig. The importer builds IR from it
// and the plan stores it, so the runtime never parses a checkpoint config.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llmc {

/// The architecture families llmc builds graphs for.
enum class ArchFamily { Llama, GPT2, Gemma2 };

/// Hugging Face `rope_scaling`; the defaults are HF's.
struct RopeScaling {
  std::string type; // linear | dynamic | llama3 | yarn | freq_factors |
                    // longrope
  double factor = 1.0;
  double lowFreqFactor = 1.0;  // llama3
  double highFreqFactor = 4.0; // llama3
  int64_t originalMaxPositions = 0;
  double betaFast = 32.0, betaSlow = 1.0; // yarn
  /// yarn: whether the correction range is rounded out to whole dimensions
  /// (floor, ceil), as transformers does unless `truncate` is false
  /// (gpt-oss); llama.cpp always rounds.
  bool truncate = true;
  std::optional<double> attentionFactor; // yarn mscale override
  /// freq_factors: what a GGUF's rope_freqs.weight holds (llama.cpp's form
  /// of llama3 scaling); rotary pair i turns at inv_freq[i] / factors[i].
  std::vector<double> freqFactors;
  /// longrope (Phi-3): rotary pair i turns at inv_freq[i] / factor[i], with
  /// the short factors while a sequence holds at most originalMaxPositions
  /// tokens and the long ones beyond; cos and sin times attentionFactor
  /// (default sqrt(1 + ln(factor) / ln(original))) either way.
  std::vector<double> shortFactors, longFactors;
};

/// A mixture-of-experts MLP (Mixtral, Qwen3-MoE): a router picks
/// `expertsPerToken` of `numExperts` SwiGLU experts of width
/// `expertIntermediate` per token. softmax over all experts in f32, the top
/// k kept (ties to the lower index), renormalised to sum 1 when
/// `normalizeTopK`.
struct MoeConfig {
  int64_t numExperts = 0, expertsPerToken = 0, expertIntermediate = 0;
  bool normalizeTopK = true;
  /// gpt-oss: the router has a bias, routing takes the k largest logits and
  /// softmaxes over them, the experts have biases, and their activation is
  /// (clamp(up, ±limit) + 1) · g · sigmoid(alpha · g), g = min(gate, limit),
  /// over gate/up rows that alternate (interleaved).
  bool gptOss = false;
  double swigluLimit = 7.0, swigluAlpha = 1.702;
  /// Per layer: whether its MLP is the MoE block (Qwen3-MoE's dense layers:
  /// mlp_only_layers and decoder_sparse_step).
  std::vector<bool> sparseLayers;

  bool enabled() const { return numExperts > 0; }
  bool sparse(int64_t layer) const {
    return enabled() && sparseLayers.at(static_cast<size_t>(layer));
  }
};

struct ModelConfig {
  std::string architecture; // as in config.json, e.g. "LlamaForCausalLM"
  ArchFamily family = ArchFamily::Llama;
  int64_t vocabSize = 0, hiddenSize = 0, numLayers = 0, numHeads = 0,
          numKVHeads = 0, headDim = 0, intermediateSize = 0;
  int64_t maxPositions = 0; // the context length
  double normEps = 1e-5;
  double ropeTheta = 10000.0;
  int64_t rotaryDim = 0;
  std::optional<RopeScaling> ropeScaling;
  /// Per layer: 0 = full attention, W = a key at j is visible from i iff
  /// i - W < j <= i.
  std::vector<int64_t> slidingWindow;
  bool tiedEmbeddings = false;
  bool qkvBias = false, outputBias = false, mlpBias = false;
  /// Qwen3, Gemma 3: an RMSNorm over head_dim on every query and key head,
  /// after the projection and before RoPE (q_norm, k_norm).
  bool qkNorm = false;
  /// Gemma 3: sliding-window layers rotate with this base and no
  /// rope_scaling (rope_local_base_freq); 0 = every layer rotates alike.
  double localRopeTheta = 0;
  /// Attention scores are q.k * attentionScale; 0 means head_dim^-0.5
  /// (Gemma 2: query_pre_attn_scalar^-0.5).
  double attentionScale = 0;
  /// Gemma 2's soft-capping c * tanh(x / c) of attention scores and of the
  /// final logits; 0 = none.
  double attnLogitSoftcap = 0, finalLogitSoftcap = 0;
  MoeConfig moe;
  /// Phi-3: one qkv_proj (q, k, v rows) and one gate_up_proj (gate, up).
  bool fusedProjections = false;
  /// gpt-oss: one learned logit per query head joins each softmax's
  /// denominator (self_attn.sinks).
  bool attentionSinks = false;
  std::string hiddenAct = "silu"; // silu | gelu_new | gelu |
                                  // gelu_pytorch_tanh
  std::optional<int64_t> bosTokenId;
  std::vector<int64_t> eosTokenIds;
  std::string torchDtype; // informational
  /// A multimodal checkpoint's language model: the class whose text part
  /// is built (e.g. "Gemma3ForConditionalGeneration"), "" otherwise.
  std::string multimodalArchitecture;
};

/// The architectures `fromHFConfig` accepts, sorted.
const std::vector<std::string> &supportedArchitectures();

/// What every GPT-2 has beyond its sizes (HF config.json or GGUF): full
/// multi-head attention, learned positions, biases everywhere. Call once
/// hiddenSize and numHeads are set.
void setGPT2Structure(ModelConfig &c);

/// A sliding window on even layers (the window alternates, starting with
/// layer 0), full attention on odd ones: Gemma 2's and gpt-oss's pattern.
void setEvenLayerWindows(ModelConfig &c, int64_t window);

/// Gemma 3's layers: layer i slides iff (i + 1) % pattern != 0.
void setGemma3Windows(ModelConfig &c, int64_t window, int64_t pattern);

/// Reads config.json (and generation_config.json beside it, for extra EOS
/// ids). Errors name the file and the key. A multimodal checkpoint whose
/// text model llmc runs (Gemma3ForConditionalGeneration) reads its
/// text_config; `textWeightsPrefix` then says where its weights sit.
ModelConfig readHFConfig(const std::string &configPath);

/// Checks invariants every builder relies on (heads divide, positive sizes);
/// `source` names where the config came from in the message.
void validate(const ModelConfig &config, const std::string &source);

} // namespace llmc
