//===- convert.h - HF checkpoint -> GGUF conversion steps ------*- C++ -*-===//
#pragma once

#include "llmc/weights/gguf_writer.h"
#include "llmc/weights/safetensors.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace llmc::make_gguf {

/// Architecture keys and tensors of a checkpoint in `dir`, as
/// convert_hf_to_gguf.py writes them. 2-D weights (and stacked experts) are
/// stored as `type` (falling back to F16 when a row is not a whole number
/// of quantization blocks); 1-D tensors and routers stay F32. `perExpert`
/// writes an MoE's experts one tensor each (llama.cpp's older layout)
/// rather than stacked.
void convertModel(const std::string &dir, const nlohmann::json &config,
                  weights::DType type, bool perExpert, bool fusedGateUp,
                  weights::GGUFWriter &out);

/// tokenizer.ggml.* keys from tokenizer.json (BPE) or tokenizer.model
/// (SentencePiece), plus tokenizer.chat_template if the config has one.
void convertTokenizer(const std::string &dir, const nlohmann::json &config,
                      weights::GGUFWriter &out);

/// gpt-oss's keys beyond Llama's (experts, window), and its experts:
/// gate_up_proj split into ffn_gate_exps / ffn_up_exps, MXFP4 blocks moved
/// into ggml's layout as they are (convert_gpt_oss.cpp).
void gptOssMetadata(const nlohmann::json &config, weights::GGUFWriter &out);
/// `fusedGateUp`: gate and up as one ffn_gate_up_exps (gate rows, then up
/// rows, per expert), as newer llama.cpp also reads them.
void convertGptOssExperts(const weights::Checkpoint &ck,
                          const nlohmann::json &config, weights::DType type,
                          bool fusedGateUp, weights::GGUFWriter &out);

/// config.json's integer `key`, or `fallback` when it is absent or null;
/// throws naming the key otherwise.
int64_t intKey(const nlohmann::json &config, const char *key,
               std::optional<int64_t> fallback = std::nullopt);

/// Reads and parses DIR/NAME; throws llmc::Error naming the file.
nlohmann::json readJson(const std::string &dir, const std::string &name);

} // namespace llmc::make_gguf
