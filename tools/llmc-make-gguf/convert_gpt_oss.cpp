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

/// Rows [parity, parity + 2, ...) of each expert of an MXFP4 tensor
/// [E, R, K], as ggml blocks (stride 2) or all rows (stride 1).
std::vector<uint8_t> ggmlRows(const weights::TensorRef &t, int64_t stride,
                              int64_t parity) {
  const int64_t E = t.shape[0], R = t.shape[1], blocksPerRow = t.shape[2] / 32;
  std::vector<uint8_t> out;
  out.reserve(size_t(E * (R / stride) * blocksPerRow * 17));
  for (int64_t e = 0; e < E; ++e)
    for (int64_t r = parity; r < R; r += stride)
      for (int64_t b = 0; b < blocksPerRow; ++b) {
        uint8_t codes[16], scale, block[17];
        weights::mxfp4Block(t, (e * R + r) * blocksPerRow + b, codes, scale);
        weights::toGgmlMxfp4Block(codes, scale, block);
        out.insert(out.end(), block, block + 17);
      }
  return out;
}

/// Columns [parity, parity + 2, ...) of each row of f32 [rows, cols].
std::vector<float> everyOther(const std::vector<float> &v, int64_t rows,
                              int64_t cols, int64_t parity) {
  std::vector<float> out;
  out.reserve(size_t(rows * cols / 2));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = parity; c < cols; c += 2)
      out.push_back(v[size_t(r * cols + c)]);
  return out;
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
                          DType type, weights::GGUFWriter &out) {
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
      for (int64_t parity : {0, 1}) {
        std::vector<uint8_t> rows = ggmlRows(gu, 2, parity);
        out.addTensorBytes(blk + (parity ? "ffn_up_exps" : "ffn_gate_exps") +
                               ".weight",
                           {E, ff, h}, DType::MXFP4, rows.data(), rows.size());
      }
      std::vector<uint8_t> d = ggmlRows(down, 1, 0);
      out.addTensorBytes(blk + "ffn_down_exps.weight", {E, h, ff}, DType::MXFP4,
                         d.data(), d.size());
    } else {
      // Hugging Face's unquantized form: each expert [in, out].
      std::vector<float> t = transposeExperts(floats(gu), E, h, 2 * ff);
      for (int64_t parity : {0, 1}) {
        std::vector<float> rows;
        for (int64_t e = 0; e < E; ++e)
          for (int64_t r = parity; r < 2 * ff; r += 2)
            rows.insert(rows.end(), t.begin() + (e * 2 * ff + r) * h,
                        t.begin() + (e * 2 * ff + r + 1) * h);
        out.addTensor(blk + (parity ? "ffn_up_exps" : "ffn_gate_exps") +
                          ".weight",
                      {E, ff, h}, rows.data(), type);
      }
      std::vector<float> d = transposeExperts(floats(down), E, ff, h);
      out.addTensor(blk + "ffn_down_exps.weight", {E, h, ff}, d.data(), type);
    }
    const std::vector<float> guBias =
        floats(need(hf + "experts.gate_up_proj_bias"));
    for (int64_t parity : {0, 1}) {
      std::vector<float> b = everyOther(guBias, E, 2 * ff, parity);
      out.addTensor(blk + (parity ? "ffn_up_exps" : "ffn_gate_exps") + ".bias",
                    {E, ff}, b.data(), DType::F32);
    }
    std::vector<float> db = floats(need(hf + "experts.down_proj_bias"));
    out.addTensor(blk + "ffn_down_exps.bias", {E, h}, db.data(), DType::F32);
  }
}

} // namespace llmc::make_gguf
