//===- gguf_vocab.h - Tokenizers from GGUF metadata -------------*- C++ -*-===//
//
// The GGUF reader extracts tokenizer.ggml.* into GGUFVocab; this builds the
// matching Tokenizer the way llama.cpp does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/tokenizer/tokenizer.h"

namespace llmc::tok {

struct GGUFVocab {
  /// "gpt2": byte-level BPE with merges ("a b"); "llama": SentencePiece-style
  /// BPE by scores with <0xXX> byte tokens and a "▁" dummy prefix.
  std::string model;
  std::vector<std::string> tokens;
  std::vector<float> scores;       ///< "llama": one per token
  std::vector<int32_t> tokenTypes; ///< 1 normal, 2 unknown, 3 control,
                                   ///< 4 user-defined, 5 unused, 6 byte
  std::vector<std::string> merges; ///< "gpt2"
  std::optional<int32_t> bos, eos, unk;
  bool addBos = false;
  /// tokenizer.ggml.pre for "gpt2": "" / "default" / "gpt2", "llama-bpe" /
  /// "llama3", "qwen2"; others are rejected.
  std::string pre;
  /// tokenizer.ggml.add_space_prefix for "llama".
  bool addSpacePrefix = true;
};

/// Throws llmc::Error ("GGUF tokenizer: ...") on inconsistent metadata.
std::unique_ptr<Tokenizer> tokenizerFromGGUF(const GGUFVocab &vocab);

} // namespace llmc::tok
