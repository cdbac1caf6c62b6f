#include "GGUFConfig.h"

#include "llmc/support/error.h"

#include <charconv>
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

} // namespace

ModelConfig configFromGGUF(const weights::GGUFFile &f) {
  std::string arch = f.getString("general.architecture");
  ModelConfig c;
  if (arch == "llama") {
    c.architecture = "LlamaForCausalLM";
  } else if (arch == "qwen2") {
    c.architecture = "Qwen2ForCausalLM";
    c.qkvBias = true;
  } else {
    throw Error(f.fileName() + ": unsupported GGUF architecture '" + arch +
                "' (supported: llama, qwen2)");
  }
  c.family = ArchFamily::Llama;
  auto key = [&](const char *k) { return arch + "." + k; };
  c.numLayers = f.getInt(key("block_count"));
  c.hiddenSize = f.getInt(key("embedding_length"));
  c.intermediateSize = f.getInt(key("feed_forward_length"));
  c.numHeads = f.getInt(key("attention.head_count"));
  c.numKVHeads = f.findInt(key("attention.head_count_kv")).value_or(c.numHeads);
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
  else if (const auto *embd = f.find("token_embd.weight"))
    c.vocabSize = embd->shape.empty() ? 0 : embd->shape[0];
  c.tiedEmbeddings = f.find("output.weight") == nullptr;
  c.slidingWindow.assign(static_cast<size_t>(std::max<int64_t>(c.numLayers, 0)),
                         0);
  if (auto scalingType = f.findString(key("rope.scaling.type"));
      scalingType && *scalingType != "none") {
    RopeScaling s;
    s.type = *scalingType;
    s.factor = f.getFloat(key("rope.scaling.factor"));
    s.originalMaxPositions =
        f.findInt(key("rope.scaling.original_context_length")).value_or(0);
    c.ropeScaling = s;
  }
  if (auto bos = f.findInt("tokenizer.ggml.bos_token_id"))
    c.bosTokenId = *bos;
  if (auto eos = f.findInt("tokenizer.ggml.eos_token_id"))
    c.eosTokenIds.push_back(*eos);
  validate(c, f.fileName());
  return c;
}

} // namespace llmc::import
