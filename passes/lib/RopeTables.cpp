//===- RopeTables.cpp - HF's rotary inv_freq tables
//------------------------===//
//
// transformers' ROPE_INIT_FUNCTIONS, computed once at compile time so the
// ROPE kernel only reads a table: default, linear, llama3, yarn and
// LongRoPE (two tables: the kernel picks one per sequence), and the
// per-pair factors a GGUF stores instead of llama3's parameters.
//
//===----------------------------------------------------------------------===//

#include "llmc/Passes/Lowering.h"

#include <cmath>

namespace mlir::llmc {
namespace {

double attr(DictionaryAttr d, StringRef key, double fallback) {
  if (auto f = d.getAs<FloatAttr>(key))
    return f.getValueAsDouble();
  if (auto i = d.getAs<IntegerAttr>(key))
    return static_cast<double>(i.getInt());
  return fallback;
}

} // namespace

LogicalResult ropeTables(Operation *rope, double theta, int64_t rotaryDim,
                         DictionaryAttr scaling, RopeTables &tables) {
  std::vector<float> &invFreq = tables.invFreq;
  double &attentionScaling = tables.attentionScaling;
  const int64_t half = rotaryDim / 2;
  invFreq.assign(half, 0.0f);
  // As torch: base ** (arange(0, dim, 2).float() / dim), in float32.
  std::vector<float> posFreq(half);
  for (int64_t i = 0; i < half; ++i) {
    float exponent = static_cast<float>(2 * i) / static_cast<float>(rotaryDim);
    posFreq[i] =
        static_cast<float>(std::pow(theta, static_cast<double>(exponent)));
    invFreq[i] = 1.0f / posFreq[i];
  }
  attentionScaling = 1.0;
  if (!scaling)
    return success();
  StringRef type = scaling.getAs<StringAttr>("type").getValue();
  double factor = attr(scaling, "factor", 1.0);
  double original = attr(scaling, "original_max_position_embeddings", 0.0);
  if (type == "freq_factors") {
    // As ggml_rope_ext: theta / freq_factor, in float.
    auto factors = scaling.getAs<DenseF64ArrayAttr>("factors").asArrayRef();
    for (int64_t i = 0; i < half; ++i)
      invFreq[i] = invFreq[i] / static_cast<float>(factors[i]);
    return success();
  }
  if (type == "longrope") {
    // As _compute_longrope_parameters: 1 / (ext_factors * base^(2i/dim)),
    // in float32, ext_factors long past original_max_position_embeddings.
    auto table = [&](StringRef key) {
      auto f = scaling.getAs<DenseF64ArrayAttr>(key).asArrayRef();
      std::vector<float> t(half);
      for (int64_t i = 0; i < half; ++i)
        t[i] = 1.0f / (static_cast<float>(f[i]) * posFreq[i]);
      return t;
    };
    invFreq = table("short_factor");
    tables.longInvFreq = table("long_factor");
    tables.switchLength = static_cast<int64_t>(
        attr(scaling, "original_max_position_embeddings", 0));
    attentionScaling = attr(scaling, "attention_factor", 1.0);
    return success();
  }
  if (type == "linear") {
    for (float &f : invFreq)
      f = static_cast<float>(f / factor);
    return success();
  }
  if (type == "llama3") {
    double low = attr(scaling, "low_freq_factor", 1.0);
    double high = attr(scaling, "high_freq_factor", 4.0);
    double lowWavelen = original / low, highWavelen = original / high;
    for (float &f : invFreq) {
      double wavelen = 2 * M_PI / f;
      double scaled = wavelen > lowWavelen ? f / factor : f;
      if (!(wavelen < highWavelen) && !(wavelen > lowWavelen)) {
        double smooth = (original / wavelen - low) / (high - low);
        scaled = (1 - smooth) * scaled / factor + smooth * scaled;
      }
      f = static_cast<float>(scaled);
    }
    return success();
  }
  if (type == "yarn") {
    // As _compute_yarn_parameters: the ramp and the mix in float32 (torch
    // tensors), the correction range in double (Python floats), rounded
    // out to whole dimensions unless `truncate` is false (gpt-oss).
    double betaFast = attr(scaling, "beta_fast", 32.0);
    double betaSlow = attr(scaling, "beta_slow", 1.0);
    auto truncate = scaling.getAs<BoolAttr>("truncate");
    auto mscale = [](double scale) {
      return scale <= 1 ? 1.0 : 0.1 * std::log(scale) + 1.0;
    };
    attentionScaling = attr(scaling, "attention_factor", mscale(factor));
    auto correctionDim = [&](double rotations) {
      return (rotaryDim * std::log(original / (rotations * 2 * M_PI))) /
             (2 * std::log(theta));
    };
    double lo = correctionDim(betaFast), hi = correctionDim(betaSlow);
    if (!truncate || truncate.getValue()) {
      lo = std::floor(lo);
      hi = std::ceil(hi);
    }
    lo = std::max(lo, 0.0);
    hi = std::min(hi, static_cast<double>(rotaryDim - 1));
    if (lo == hi)
      hi += 0.001;
    const auto fLo = static_cast<float>(lo);
    const auto fRange = static_cast<float>(hi - lo);
    const auto fFactor = static_cast<float>(factor);
    for (int64_t i = 0; i < half; ++i) {
      float ramp =
          std::clamp((static_cast<float>(i) - fLo) / fRange, 0.0f, 1.0f);
      float extrapolation = 1.0f - ramp;
      float interp = 1.0f / (fFactor * posFreq[i]);
      float extrap = 1.0f / posFreq[i];
      invFreq[i] = interp * (1.0f - extrapolation) + extrap * extrapolation;
    }
    return success();
  }
  return rope->emitError("rope scaling '")
         << type << "' depends on the sequence length at run time and is not "
         << "supported by llmc yet (supported: linear, llama3, yarn)";
}

} // namespace mlir::llmc
