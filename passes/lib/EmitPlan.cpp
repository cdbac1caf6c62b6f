//===- EmitPlan.cpp - Lowered module + checkpoint -> plan file
//-------------===//

#include "llmc/Passes/EmitPlan.h"

#include "llmc/config/json_file.h"
#include "llmc/runtime/plan.h"
#include "llmc/support/error.h"
#include "llmc/support/half.h"
#include "llmc/support/mapped_file.h"
#include "llmc/weights/gguf.h"
#include "llmc/weights/rope_permute.h"
#include "llmc/weights/safetensors.h"
#include "llmc/weights/tensor.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

namespace mlir::llmc {
namespace {

using ::llmc::Error;

/// The checkpoint a module was imported from.
class Source {
public:
  explicit Source(DictionaryAttr attr) {
    std::string format = attr.getAs<StringAttr>("format").str();
    std::string path = attr.getAs<StringAttr>("path").str();
    if (format == "gguf")
      gguf_ = std::make_shared<::llmc::weights::GGUFFile>(path);
    else
      checkpoint_.emplace(::llmc::weights::Checkpoint::open(path));
  }
  const ::llmc::weights::TensorRef &tensor(const std::string &name) const {
    const ::llmc::weights::TensorRef *t =
        gguf_ ? gguf_->find(name) : checkpoint_->find(name);
    if (!t)
      throw Error("checkpoint tensor '" + name + "' disappeared since import");
    return *t;
  }
  const ::llmc::weights::GGUFFile *gguf() const { return gguf_.get(); }

private:
  std::optional<::llmc::weights::Checkpoint> checkpoint_;
  std::shared_ptr<::llmc::weights::GGUFFile> gguf_;
};

/// The f32 values of a spec's logical [rows, cols] tensor, sources stacked.
std::vector<float> logicalFloats(const Source &src, const WeightSpec &w) {
  std::vector<float> out;
  for (const std::string &name : w.sources) {
    const auto &t = src.tensor(name);
    std::vector<float> v(static_cast<size_t>(t.numElements()));
    ::llmc::weights::toFloat32(t, v.data());
    if (w.transposed) {
      int64_t r = t.shape[0], c = t.shape[1];
      std::vector<float> tr(v.size());
      for (int64_t i = 0; i < r; ++i)
        for (int64_t j = 0; j < c; ++j)
          tr[j * r + i] = v[i * c + j];
      v.swap(tr);
    }
    if (w.ropeUnpermuteHeads > 0) {
      int64_t rows = t.shape[0], cols = t.shape.size() > 1 ? t.shape[1] : 1;
      std::vector<float> un(v.size());
      ::llmc::weights::unpermuteGGUFRope(v.data(), un.data(), rows, cols,
                                         w.ropeUnpermuteHeads);
      v.swap(un);
    }
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

/// Symmetric quantization of row-major [n, k] in groups of `group` columns:
/// q = round(w / scale), scale from weights::symmetricScale (exact for the
/// blocks of Q4_0, Q5_0 and Q8_0 GGUFs). Returns the largest |w - q·scale|.
float quantize(const std::vector<float> &w, int64_t n, int64_t k, int64_t group,
               bool int4, uint8_t *dst, bool scalesOnly) {
  const float qmax = int4 ? 7.0f : 127.0f;
  const int64_t groups = k / group;
  auto *scales = reinterpret_cast<float *>(dst);
  float maxError = 0;
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t g = 0; g < groups; ++g) {
      const float *x = &w[static_cast<size_t>(r * k + g * group)];
      const float scale = ::llmc::weights::symmetricScale(x, group, int4);
      if (scalesOnly) {
        scales[r * groups + g] = scale;
        continue;
      }
      for (int64_t i = 0; i < group; ++i) {
        float q = std::nearbyint(x[i] / scale);
        q = std::clamp(q, int4 ? -8.0f : -127.0f, qmax);
        maxError = std::max(maxError, std::fabs(x[i] - q * scale));
        auto qi = static_cast<int8_t>(q);
        int64_t col = g * group + i;
        if (!int4) {
          dst[r * k + col] = static_cast<uint8_t>(qi);
        } else {
          uint8_t &byte = dst[(r * k + col) / 2];
          uint8_t nib = static_cast<uint8_t>(qi) & 0x0f;
          byte = col % 2 ? static_cast<uint8_t>((byte & 0x0f) | (nib << 4))
                         : static_cast<uint8_t>((byte & 0xf0) | nib);
        }
      }
    }
  }
  return maxError;
}

float maxAbs(const std::vector<float> &v) {
  float m = 0;
  for (float x : v)
    m = std::max(m, std::fabs(x));
  return m;
}

void fill(const Source &src, const WeightSpec &w, uint8_t *dst, size_t nbytes,
          const EmitOptions &o) {
  if (!w.data.empty()) {
    std::memcpy(dst, w.data.data(), nbytes);
    return;
  }
  std::vector<float> v = logicalFloats(src, w);
  int64_t n = w.shape[0];
  // The logical width: a scales spec's own shape is [n, k / group].
  int64_t k = static_cast<int64_t>(v.size()) / n;
  if (!w.quant.empty()) {
    if (!w.quantScales)
      std::memset(dst, 0, nbytes);
    float error =
        quantize(v, n, k, w.groupSize, w.quant == "int4", dst, w.quantScales);
    if (!w.ggmlType.empty() && !w.quantScales && o.converted)
      o.converted(Conversion{w.name, w.ggmlType, w.quant, error, maxAbs(v)});
    return;
  }
  switch (w.dtype) {
  case LLMC_F32:
    std::memcpy(dst, v.data(), nbytes);
    break;
  case LLMC_BF16:
    for (size_t i = 0; i < v.size(); ++i) {
      uint16_t h = ::llmc::floatToBf16(v[i]);
      std::memcpy(dst + 2 * i, &h, 2);
    }
    break;
  case LLMC_F16:
    for (size_t i = 0; i < v.size(); ++i) {
      uint16_t h = ::llmc::floatToF16(v[i]);
      std::memcpy(dst + 2 * i, &h, 2);
    }
    break;
  default:
    throw Error("weight '" + w.name + "': unexpected dtype");
  }
}

int64_t i64(DictionaryAttr d, StringRef key) {
  auto a = d.getAs<IntegerAttr>(key);
  return a ? a.getInt() : 0;
}

/// "ggml (Q4_K->int4, Q6_K->int8)": which block format became which.
std::string ggmlQuantization(const LoweredModule &lowered) {
  std::map<std::string, std::string> formats;
  for (const WeightSpec &w : lowered.weights)
    if (!w.ggmlType.empty())
      formats[w.ggmlType] = !w.quant.empty()       ? w.quant
                            : w.dtype == LLMC_F16  ? "f16"
                            : w.dtype == LLMC_BF16 ? "bf16"
                                                   : "f32";
  std::string out = "ggml (";
  for (const auto &[type, format] : formats)
    out += (out.back() == '(' ? "" : ", ") + type + "->" + format;
  return out + ")";
}

::llmc::PlanConfig planConfig(ModuleOp module, const LoweredModule &lowered,
                              const EmitOptions &o) {
  auto c = module->getAttrOfType<DictionaryAttr>("llmc.config");
  if (!c)
    throw Error("the module has no llmc.config (was it made by llmc import?)");
  ::llmc::PlanConfig p;
  p.architecture = c.getAs<StringAttr>("architecture").str();
  p.vocabSize = i64(c, "vocab_size");
  p.hiddenSize = i64(c, "hidden_size");
  p.numLayers = i64(c, "num_layers");
  p.numHeads = i64(c, "num_heads");
  p.numKVHeads = i64(c, "num_kv_heads");
  p.headDim = i64(c, "head_dim");
  p.intermediateSize = i64(c, "intermediate_size");
  p.contextLength = i64(c, "context_length");
  if (c.get("bos_token_id"))
    p.bosTokenId = i64(c, "bos_token_id");
  if (auto eos = c.getAs<DenseI64ArrayAttr>("eos_token_ids"))
    p.eosTokenIds.assign(eos.asArrayRef().begin(), eos.asArrayRef().end());
  p.target = o.target;
  p.computeDtype = o.dtype;
  p.quantization = o.quant == "ggml" ? ggmlQuantization(lowered) : o.quant;
  p.kvDtype = o.dtype == "bf16"  ? LLMC_BF16
              : o.dtype == "f16" ? LLMC_F16
                                 : LLMC_F32;
  p.compilerVersion = LLMC_VERSION_STRING;
  return p;
}

/// The chat template of tokenizer_config.json: a string, or a list of
/// {name, template} where "default" wins.
std::string chatTemplateOf(const std::string &configJson,
                           const std::string &origin) {
  if (configJson.empty())
    return "";
  nlohmann::json j = ::llmc::parseJson(configJson, origin);
  if (!j.is_object() || !j.contains("chat_template"))
    return "";
  const auto &t = j["chat_template"];
  if (t.is_string())
    return t.get<std::string>();
  if (t.is_array())
    for (const auto &e : t)
      if (e.is_object() && e.value("name", "") == "default")
        return e.value("template", "");
  return "";
}

::llmc::PlanTokenizer planTokenizer(ModuleOp module, const Source &src) {
  ::llmc::PlanTokenizer t;
  auto attr = module->getAttrOfType<DictionaryAttr>("llmc.tokenizer");
  if (!attr)
    return t;
  t.kind = attr.getAs<StringAttr>("kind").str();
  if (auto cfg = attr.getAs<StringAttr>("config")) {
    t.configJson = ::llmc::readFile(cfg.str());
    t.chatTemplate = chatTemplateOf(t.configJson, cfg.str());
  }
  if (t.kind == "hf-json" || t.kind == "sentencepiece") {
    t.fileBytes = ::llmc::readFile(attr.getAs<StringAttr>("path").str());
  } else if (t.kind == "gguf" && src.gguf()) {
    const auto &g = *src.gguf();
    if (!g.has("tokenizer.ggml.model")) {
      t.kind = "none";
      return t;
    }
    nlohmann::json v;
    v["model"] = g.getString("tokenizer.ggml.model");
    v["tokens"] = g.getStringArray("tokenizer.ggml.tokens");
    if (g.has("tokenizer.ggml.scores"))
      v["scores"] = g.getFloatArray("tokenizer.ggml.scores");
    if (g.has("tokenizer.ggml.token_type"))
      v["token_types"] = g.getIntArray("tokenizer.ggml.token_type");
    if (g.has("tokenizer.ggml.merges"))
      v["merges"] = g.getStringArray("tokenizer.ggml.merges");
    for (const char *k : {"bos", "eos", "unk"})
      if (auto id = g.findInt(std::string("tokenizer.ggml.") + k + "_token_id"))
        v[k] = *id;
    v["add_bos"] = g.findBool("tokenizer.ggml.add_bos_token").value_or(false);
    v["pre"] = g.findString("tokenizer.ggml.pre").value_or("");
    v["add_space_prefix"] =
        g.findBool("tokenizer.ggml.add_space_prefix").value_or(true);
    t.fileBytes = v.dump();
    t.chatTemplate = g.findString("tokenizer.chat_template").value_or("");
  }
  return t;
}

} // namespace

void emitPlan(ModuleOp module, const LoweredModule &lowered,
              const EmitOptions &options, const std::string &path) {
  auto sourceAttr = module->getAttrOfType<DictionaryAttr>("llmc.source");
  if (!sourceAttr)
    throw Error("the module has no llmc.source (was it made by llmc import?)");
  auto src = std::make_shared<Source>(sourceAttr);

  ::llmc::PlanWriter writer;
  writer.setConfig(planConfig(module, lowered, options));
  writer.setTokenizer(planTokenizer(module, *src));
  for (const WeightSpec &w : lowered.weights) {
    int64_t elements = 1;
    for (int64_t d : w.shape)
      elements *= d;
    uint64_t nbytes = ::llmc::dtypeBytes(w.dtype, elements);
    std::vector<int64_t> shape = w.shape;
    writer.addWeight(w.name, w.dtype, shape, nbytes,
                     [src, &w, nbytes, &options](uint8_t *dst) {
                       fill(*src, w, dst, nbytes, options);
                     });
  }
  for (const ::llmc::Graph &g : lowered.graphs)
    writer.addGraph(g);
  writer.write(path, options.progress);
}

} // namespace mlir::llmc
