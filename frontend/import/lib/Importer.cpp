//===- Importer.cpp - Checkpoint -> llmc IR
//--------------------------------===//

#include "llmc/import/Importer.h"

#include "Architectures.h"
#include "GGUFConfig.h"
#include "llmc/IR/LLMCDialect.h"
#include "llmc/IR/LLMCOps.h"
#include "llmc/support/error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <filesystem>

namespace fs = std::filesystem;
using namespace mlir;

namespace llmc::import {
namespace {

struct ResolvedModel {
  bool gguf = false;
  std::string configPath; // config.json (HF) or the .gguf file
  std::string dir;
};

ResolvedModel resolve(const std::string &path) {
  fs::path p(path);
  if (!fs::exists(p))
    throw Error(path + ": no such file or directory (expected a checkpoint's "
                       "config.json, its folder, or a .gguf file)");
  ResolvedModel r;
  if (fs::is_directory(p)) {
    if (!fs::exists(p / "config.json"))
      throw Error(path + ": no config.json in this folder (expected a Hugging "
                         "Face checkpoint folder)");
    r.configPath = (p / "config.json").string();
    r.dir = p.string();
  } else if (p.extension() == ".gguf") {
    r.gguf = true;
    r.configPath = p.string();
    r.dir = p.parent_path().string();
  } else {
    r.configPath = p.string();
    r.dir = p.has_parent_path() ? p.parent_path().string() : ".";
  }
  return r;
}

/// The tokenizer files beside a checkpoint, recorded for the plan.
DictionaryAttr tokenizerAttr(Builder &b, const ResolvedModel &m) {
  SmallVector<NamedAttribute> entries;
  if (m.gguf) {
    entries.push_back(b.getNamedAttr("kind", b.getStringAttr("gguf")));
    entries.push_back(b.getNamedAttr("path", b.getStringAttr(m.configPath)));
    return b.getDictionaryAttr(entries);
  }
  fs::path dir(m.dir);
  if (fs::exists(dir / "tokenizer.json")) {
    entries.push_back(b.getNamedAttr("kind", b.getStringAttr("hf-json")));
    entries.push_back(b.getNamedAttr(
        "path", b.getStringAttr((dir / "tokenizer.json").string())));
  } else if (fs::exists(dir / "tokenizer.model")) {
    entries.push_back(b.getNamedAttr("kind", b.getStringAttr("sentencepiece")));
    entries.push_back(b.getNamedAttr(
        "path", b.getStringAttr((dir / "tokenizer.model").string())));
  } else {
    entries.push_back(b.getNamedAttr("kind", b.getStringAttr("none")));
  }
  if (fs::exists(dir / "tokenizer_config.json"))
    entries.push_back(b.getNamedAttr(
        "config", b.getStringAttr((dir / "tokenizer_config.json").string())));
  // Newer checkpoints (gpt-oss, ...) ship the template as its own file,
  // which transformers prefers to tokenizer_config.json's chat_template.
  if (fs::exists(dir / "chat_template.jinja"))
    entries.push_back(b.getNamedAttr(
        "chat_template",
        b.getStringAttr((dir / "chat_template.jinja").string())));
  return b.getDictionaryAttr(entries);
}

DictionaryAttr configAttr(Builder &b, const ModelConfig &c) {
  SmallVector<NamedAttribute> e;
  auto i64 = [&](const char *k, int64_t v) {
    e.push_back(b.getNamedAttr(k, b.getI64IntegerAttr(v)));
  };
  e.push_back(b.getNamedAttr("architecture", b.getStringAttr(c.architecture)));
  i64("vocab_size", c.vocabSize);
  i64("hidden_size", c.hiddenSize);
  i64("num_layers", c.numLayers);
  i64("num_heads", c.numHeads);
  i64("num_kv_heads", c.numKVHeads);
  i64("head_dim", c.headDim);
  i64("intermediate_size", c.intermediateSize);
  i64("context_length", c.maxPositions);
  i64("rotary_dim", c.rotaryDim);
  e.push_back(b.getNamedAttr("norm_eps", b.getF64FloatAttr(c.normEps)));
  e.push_back(b.getNamedAttr("rope_theta", b.getF64FloatAttr(c.ropeTheta)));
  e.push_back(b.getNamedAttr("sliding_window",
                             b.getDenseI64ArrayAttr(c.slidingWindow)));
  e.push_back(
      b.getNamedAttr("tied_embeddings", b.getBoolAttr(c.tiedEmbeddings)));
  e.push_back(b.getNamedAttr("hidden_act", b.getStringAttr(c.hiddenAct)));
  auto f64IfSet = [&](const char *k, double v) {
    if (v != 0)
      e.push_back(b.getNamedAttr(k, b.getF64FloatAttr(v)));
  };
  f64IfSet("attention_scale", c.attentionScale);
  f64IfSet("local_rope_theta", c.localRopeTheta);
  f64IfSet("attn_logit_softcap", c.attnLogitSoftcap);
  f64IfSet("final_logit_softcap", c.finalLogitSoftcap);
  if (c.moe.enabled()) {
    i64("num_experts", c.moe.numExperts);
    i64("experts_per_token", c.moe.expertsPerToken);
    i64("expert_intermediate_size", c.moe.expertIntermediate);
    i64("moe_layers", llvm::count(c.moe.sparseLayers, true));
    e.push_back(
        b.getNamedAttr("normalize_topk", b.getBoolAttr(c.moe.normalizeTopK)));
  }
  if (c.bosTokenId)
    i64("bos_token_id", *c.bosTokenId);
  e.push_back(
      b.getNamedAttr("eos_token_ids", b.getDenseI64ArrayAttr(c.eosTokenIds)));
  return b.getDictionaryAttr(e);
}

/// A multimodal checkpoint's language model, wherever transformers put it:
/// "language_model.model.*" (the published Gemma 3 checkpoints) or
/// "model.language_model.*" (transformers 4.52 and later).
void useLanguageModel(WeightSource &weights, const ModelConfig &config,
                      const std::string &dir) {
  if (weights.contains("language_model.model.embed_tokens.weight"))
    weights.useTextModel("language_model.model.",
                         "language_model.lm_head.weight");
  else if (weights.contains("model.language_model.embed_tokens.weight"))
    weights.useTextModel("model.language_model.", "lm_head.weight");
  else
    throw Error(dir + ": " + config.multimodalArchitecture +
                " checkpoint without its language model's "
                "language_model.model.embed_tokens.weight or "
                "model.language_model.embed_tokens.weight");
  // The caller says so; llmc compiles text only.
  llvm::errs() << "llmc: note: " << config.multimodalArchitecture
               << ": compiling its language model only (text in, text out); "
                  "images are not supported\n";
}

} // namespace

OwningOpRef<ModuleOp> importModel(MLIRContext &context,
                                  const std::string &modelPath) {
  context.loadDialect<mlir::llmc::LLMCDialect, func::FuncDialect>();
  ResolvedModel m = resolve(modelPath);

  ModelConfig config;
  std::optional<WeightSource> weights;
  if (m.gguf) {
    auto file = std::make_shared<weights::GGUFFile>(m.configPath);
    config = configFromGGUF(*file);
    weights.emplace(WeightSource::gguf(std::move(file)));
    // Read into the config (the rope scaling's factors), not a graph weight.
    if (config.ropeScaling && config.ropeScaling->type == "freq_factors")
      weights->require("rope_freqs.weight", {config.rotaryDim / 2});
    if (config.ropeScaling && config.ropeScaling->type == "longrope")
      for (const char *t :
           {"rope_factors_short.weight", "rope_factors_long.weight"})
        weights->require(t, {config.rotaryDim / 2});
  } else {
    config = readHFConfig(m.configPath);
    weights.emplace(WeightSource::safetensors(m.dir));
    if (!config.multimodalArchitecture.empty())
      useLanguageModel(*weights, config, m.dir);
  }

  OpBuilder b(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  module->getOperation()->setAttr("llmc.config", configAttr(b, config));
  module->getOperation()->setAttr(
      "llmc.source",
      b.getDictionaryAttr(
          {b.getNamedAttr("format",
                          b.getStringAttr(m.gguf ? "gguf" : "safetensors")),
           b.getNamedAttr("path", b.getStringAttr(weights->location()))}));
  module->getOperation()->setAttr("llmc.tokenizer", tokenizerAttr(b, m));

  auto ids = RankedTensorType::get({ShapedType::kDynamic}, b.getI32Type());
  auto logits = RankedTensorType::get({ShapedType::kDynamic, config.vocabSize},
                                      b.getF32Type());
  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<func::FuncOp>(b.getUnknownLoc(), "forward",
                                     b.getFunctionType({ids, ids}, {logits}));
  func.setArgAttr(0, "llmc.name", b.getStringAttr("tokens"));
  func.setArgAttr(1, "llmc.name", b.getStringAttr("positions"));
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);

  GraphBuilder g(b, *weights, config);
  Value out;
  const TensorNaming naming =
      m.gguf ? TensorNaming::GGUF : TensorNaming::HuggingFace;
  BuildFn build = builderFor(config.family);
  if (!build)
    throw Error(modelPath + ": no graph builder for " + config.architecture +
                " (a bug in llmc's importer; please report it)");
  out = build(g, config, naming, entry->getArgument(0), entry->getArgument(1));
  b.create<func::ReturnOp>(b.getUnknownLoc(), out);

  weights->checkAllUsed(config.architecture, [](const std::string &name) {
    // A tied checkpoint may still carry an lm_head copy; HF ignores it.
    return isIgnorableBuffer(name) || name == "lm_head.weight";
  });
  if (failed(mlir::verify(*module)))
    throw Error(modelPath + ": the imported IR failed to verify (a bug in "
                            "llmc's importer; please report it)");
  return module;
}

} // namespace llmc::import
