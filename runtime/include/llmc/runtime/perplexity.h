//===- perplexity.h - Perplexity of a token stream under a plan -*- C++ -*-===//
//
// The protocol (the same one tools/demo-model/train.py measures): the tokens
// are cut into windows of `context - 1`; each window is run after a BOS, and
// every token of it is scored from its prefix. Without a BOS the first token
// of each window is context only. PPL = exp(mean negative log-likelihood).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/engine.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

namespace llmc {

struct PerplexityResult {
  double perplexity = 0;
  double meanNll = 0; // nats per scored token
  /// Standard error of meanNll over the scored tokens (treated as
  /// independent, as llama.cpp does); PPL's is PPL times it.
  double nllStdError = 0;
  int64_t scored = 0; // tokens whose likelihood counts
  int64_t windows = 0;
  double seconds = 0;
};

/// `engine` must allow windows of `context` tokens (its context length) and
/// have a 'verify' graph (every plan llmc compile writes has one). Throws
/// llmc::Error on an empty stream or a context below 2.
/// `onWindow(done, total)` is called after each window.
PerplexityResult
perplexity(Engine &engine, std::span<const int32_t> tokens,
           std::optional<int32_t> bos, int64_t context,
           const std::function<void(int64_t, int64_t)> &onWindow = {});

} // namespace llmc
