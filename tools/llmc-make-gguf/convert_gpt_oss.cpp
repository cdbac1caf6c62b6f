//===- convert_gpt_oss.cpp - gpt-oss as convert_hf_to_gguf.py writes it ---===//
//
// llama.cpp's "gpt-oss" (conversion/gpt_oss.py): gate_up_proj's alternating
// rows split into ffn_gate_exps and ffn_up_exps, the MXFP4 blocks moved into
// ggml's 17-byte layout (the same codes and scale bytes, never requantized),
// biases split alike, the router as ffn_gate_inp with its bias, and the
// sinks as attn_sinks. The unquantized form ([experts, in, out]) is
// transposed and stored as `type`.
//
//===----------------------------------------------------------------------===//
#include "convert.h"

#include "llmc/support/error.h"
#include "llmc/weights/safetensors.h"

namespace llmc::make_gguf {

using nlohmann::json;
using weights::DType;

namespace {

/// Appends rows [parity, parity + 2, ...) (stride 2) or all rows (stride 1)
/// of expert e of an MXFP4 tensor [E, R, K] to `out` as ggml blocks.
void appendGgmlRows(const weights::TensorRef &t, int64_t e, int64_t stride,
                    int64_t parity, std::vector<uint8_t> &out) {
  const int64_t R = t.shape[1], blocksPerRow = t.shape[2] / 32;
  for (int64_t r = parity; r < R; r += stride)
    for (int64_t b = 0; b < blocksPerRow; ++b) {
      uint8_t codes[16], scale, block[17];
      weights::mxfp4Block(t, (e * R + r) * blocksPerRow + b, codes, scale);
      weights::toGgmlMxfp4Block(codes, scale, block);
      out.insert(out.end(), block, block + 17);
    }
}

/// The GGUF tensors gate_up_proj becomes: gate (its even rows) and up (the
/// odd ones) apart, or fused as ffn_gate_up_exps (gate rows, then up rows,
/// per expert), each with the row parities it takes in order.
std::vector<std::pair<std::string, std::vector<int64_t>>>
gateUpTensors(bool fused) {
  if (fused)
    return {{"ffn_gate_up_exps", {0, 1}}};
  return {{"ffn_gate_exps", {0}}, {"ffn_up_exps", {1}}};
}

std::vector<float> floats(const weights::TensorRef &t) {
  std::vector<float> v(size_t(t.numElements()));
  weights::toFloat32(t, v.data());
  return v;
}

/// [E, in, out] (x·W per expert) to [E, out, in] (llama.cpp's).
std::vector<float> transposeExperts(const std::vector<float> &v, int64_t E,
                                    int64_t in, int64_t out) {
  std::vector<float> t(v.size());
  for (int64_t e = 0; e < E; ++e)
    for (int64_t i = 0; i < in; ++i)
      for (int64_t o = 0; o < out; ++o)
        t[size_t((e * out + o) * in + i)] = v[size_t((e * in + i) * out + o)];
  return t;
}

} // namespace

void gptOssMetadata(const json &config, weights::GGUFWriter &out) {
  // llama.cpp's gpt-oss slides on even layers (a pattern of 2).
  if (auto it = config.find("layer_types");
      it != config.end() && it->is_array())
    for (size_t i = 0; i < it->size(); ++i)
      if ((*it)[i] != json(i % 2 == 0 ? "sliding_attention" : "full_attention"))
        throw Error("config.json: layer_types[" + std::to_string(i) +
                    "] breaks the alternation llama.cpp's gpt-oss assumes "
                    "(sliding, full, ...); a GGUF cannot carry it");
  out.addU32("gpt-oss.expert_count",
             static_cast<uint32_t>(intKey(config, "num_local_experts", 128)));
  out.addU32(
      "gpt-oss.expert_used_count",
      static_cast<uint32_t>(intKey(config, "num_experts_per_tok",
                                   intKey(config, "experts_per_token", 4))));
  out.addU32("gpt-oss.expert_feed_forward_length",
             static_cast<uint32_t>(intKey(config, "intermediate_size", 0)));
  out.addU32("gpt-oss.attention.sliding_window",
             static_cast<uint32_t>(intKey(config, "sliding_window", 128)));
  if (config.value("swiglu_limit", 7.0) != 7.0)
    throw Error("config.json: swiglu_limit is not 7, which llama.cpp's "
                "gpt-oss assumes; a GGUF cannot carry it");
}

void convertGptOssExperts(const weights::Checkpoint &ck, const json &config,
                          DType type, bool fusedGateUp,
                          weights::GGUFWriter &out) {
  const int64_t layers = intKey(config, "num_hidden_layers", 0);
  const int64_t E = intKey(config, "num_local_experts", 128);
  const int64_t ff = intKey(config, "intermediate_size", 0);
  const int64_t h = intKey(config, "hidden_size", 0);
  for (int64_t l = 0; l < layers; ++l) {
    const std::string hf = "model.layers." + std::to_string(l) + ".mlp.";
    const std::string blk = "blk." + std::to_string(l) + ".";
    auto need = [&](const std::string &name) -> const weights::TensorRef & {
      const weights::TensorRef *t = ck.find(name);
      if (!t)
        throw Error("missing tensor '" + name + "'");
      return *t;
    };
    const weights::TensorRef &gu = need(hf + "experts.gate_up_proj");
    const weights::TensorRef &down = need(hf + "experts.down_proj");
    if (gu.dtype == DType::MXFP4) {
      if (gu.shape != std::vector<int64_t>{E, 2 * ff, h} ||
          down.shape != std::vector<int64_t>{E, h, ff})
        throw Error("tensor '" + gu.name + "': MXFP4 experts must be [" +
                    std::to_string(E) + ", " + std::to_string(2 * ff) + ", " +
                    std::to_string(h) + "] and down_proj [" +
                    std::to_string(E) + ", " + std::to_string(h) + ", " +
                    std::to_string(ff) + "]");
      for (const auto &[name, parities] : gateUpTensors(fusedGateUp)) {
        std::vector<uint8_t> rows;
        for (int64_t e = 0; e < E; ++e)
          for (int64_t parity : parities)
            appendGgmlRows(gu, e, 2, parity, rows);
        out.addTensorBytes(blk + name + ".weight",
                           {E, int64_t(parities.size()) * ff, h}, DType::MXFP4,
                           rows.data(), rows.size());
      }
      std::vector<uint8_t> d;
      for (int64_t e = 0; e < E; ++e)
        appendGgmlRows(down, e, 1, 0, d);
      out.addTensorBytes(blk + "ffn_down_exps.weight", {E, h, ff}, DType::MXFP4,
                         d.data(), d.size());
    } else {
      // Hugging Face's unquantized form: each expert [in, out].
      std::vector<float> t = transposeExperts(floats(gu), E, h, 2 * ff);
      for (const auto &[name, parities] : gateUpTensors(fusedGateUp)) {
        std::vector<float> rows;
        for (int64_t e = 0; e < E; ++e)
          for (int64_t parity : parities)
            for (int64_t r = parity; r < 2 * ff; r += 2)
              rows.insert(rows.end(), t.begin() + (e * 2 * ff + r) * h,
                          t.begin() + (e * 2 * ff + r + 1) * h);
        out.addTensor(blk + name + ".weight",
                      {E, int64_t(parities.size()) * ff, h}, rows.data(), type);
      }
      std::vector<float> d = transposeExperts(floats(down), E, ff, h);
      out.addTensor(blk + "ffn_down_exps.weight", {E, h, ff}, d.data(), type);
    }
    const std::vector<float> guBias =
        floats(need(hf + "experts.gate_up_proj_bias"));
    for (const auto &[name, parities] : gateUpTensors(fusedGateUp)) {
      std::vector<float> b;
      for (int64_t e = 0; e < E; ++e)
        for (int64_t parity : parities)
          for (int64_t c = parity; c < 2 * ff; c += 2)
            b.push_back(guBias[size_t(e * 2 * ff + c)]);
      out.addTensor(blk + name + ".bias", {E, int64_t(parities.size()) * ff},
                    b.data(), DType::F32);
    }
    std::vector<float> db = floats(need(hf + "experts.down_proj_bias"));
    out.addTensor(blk + "ffn_down_exps.bias", {E, h}, db.data(), DType::F32);
  }
}

} // namespace llmc::make_gguf
