//===- convert.h - HF checkpoint -> GGUF conversion steps ------*- C++ -*-===//
#pragma once

#include "llmc/weights/gguf_writer.h"

#include <nlohmann/json.hpp>

#include <string>

namespace llmc::make_gguf {

/// Architecture keys and tensors of a LlamaForCausalLM / Qwen2ForCausalLM
/// checkpoint in `dir`. 2-D weights are stored as `type` (falling back to F16
/// when a row is not a whole number of quantization blocks, as
/// convert_hf_to_gguf.py does); 1-D tensors stay F32.
void convertModel(const std::string &dir, const nlohmann::json &config,
                  weights::DType type, weights::GGUFWriter &out);

/// tokenizer.ggml.* keys from tokenizer.json (BPE) or tokenizer.model
/// (SentencePiece), plus tokenizer.chat_template if the config has one.
void convertTokenizer(const std::string &dir, const nlohmann::json &config,
                      weights::GGUFWriter &out);

/// Reads and parses DIR/NAME; throws llmc::Error naming the file.
nlohmann::json readJson(const std::string &dir, const std::string &name);

} // namespace llmc::make_gguf
