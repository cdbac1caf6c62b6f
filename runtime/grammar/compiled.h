//===- compiled.h - What CompiledGrammar keeps (private) --------*- C++ -*-===//
#pragma once

#include "llmc/grammar/matcher.h"

#include "pda.h"

#include <map>
#include <mutex>

namespace llmc::grammar {

/// A key's verdict over the vocabulary (matcher.h).
struct KeyMasks {
  std::vector<uint64_t> acceptedBits; // dense form, or empty
  std::vector<int32_t> acceptedList;  // sparse form
  /// Tokens that leave the key's frames after `offset` bytes (offset <
  /// their length); a token may appear with several offsets.
  std::vector<std::pair<int32_t, uint32_t>> uncertain;
};

/// A stack top: positions from the top down; kEndsAtRoot last when the
/// stack ends within them (nothing can follow the last frame).
using Key = std::vector<uint32_t>;
inline constexpr uint32_t kEndsAtRoot = UINT32_MAX;

/// The key of node `n` of `pda` and the node below it (kRoot when the
/// stack ends within the key).
Key keyOf(const Pda &pda, NodeId n, NodeId &outer);

struct CompiledGrammar::Impl {
  Impl(const Grammar &g, const TokenVocabulary &v) : program(g), vocab(v) {}
  /// The key's masks, computed on first use; the pointer stays valid.
  const KeyMasks &masksFor(const Key &key);

  Program program;
  const TokenVocabulary &vocab;
  std::mutex mutex;
  std::map<Key, std::unique_ptr<KeyMasks>> keys;
  CompileStats stats;

private:
  std::unique_ptr<KeyMasks> compute(const Key &key) const;
};

} // namespace llmc::grammar
