//===- compiled.h - What CompiledGrammar keeps (private) --------*- C++ -*-===//
#pragma once

#include "llmc/grammar/matcher.h"

#include "pda.h"

#include <map>
#include <mutex>
#include <unordered_map>

namespace llmc::grammar {

/// A key's verdict over the vocabulary (matcher.h).
struct KeyMasks {
  std::vector<uint64_t> acceptedBits; // dense form, or empty
  std::vector<int32_t> acceptedList;  // sparse form
  /// Tokens that leave the key's frames after `offset` bytes (offset <
  /// their length); a token may appear with several offsets.
  std::vector<std::pair<int32_t, uint32_t>> uncertain;
};

/// The top frames of a group of stacks that differ only in their top
/// positions (siblings: the alternatives one reference expanded to, such
/// as a string's character classes or an object's key names): [n, the n
/// top positions ascending, the positions of up to kKeyDepth - 1 frames
/// below them from the top down], kEndsAtRoot last when the stacks end
/// within them (nothing can follow the last frame). Siblings share one
/// key, so one trie walk instead of one per alternative.
using Key = std::vector<uint32_t>;
inline constexpr uint32_t kEndsAtRoot = UINT32_MAX;
/// The top group counts as one frame.
inline size_t frameCount(const Key &key) {
  return key.size() - key[0] - (key.back() == kEndsAtRoot ? 1 : 0);
}
/// The position of frame `j` >= 1 (below the top group).
inline uint32_t framePos(const Key &key, size_t j) { return key[key[0] + j]; }

/// What a key's masks depend on, whatever the grammar: the rest of each
/// frame's sequence and every rule reachable from them within `horizon`
/// bytes (the longest token), rules numbered in the order met, byte sets
/// written out. False when that is too large to be worth sharing (the key
/// is then computed per grammar).
bool canonicalKey(const Program &program, const Key &key, uint32_t horizon,
                  std::string &out);
/// Whether the key's first byte set is wide enough to be left out of its
/// canonical form (masks then filtered by first byte).
bool wideFirstByte(const Program &program, const Key &key);

struct TokenVocabulary::SharedKeyMasks {
  /// Past this many bytes of masks the cache is emptied and refilled.
  static constexpr size_t kMaxBytes = size_t(64) << 20;
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const KeyMasks>> masks;
  size_t bytes = 0;
};

/// The stacks of `nodes` (a state's) grouped by the node below their top:
/// each group shares one key.
std::vector<std::vector<NodeId>>
siblingGroups(const Pda &pda, const std::vector<NodeId> &nodes);
/// The key of `group` (nodes of `pda` with one parent) and the node below
/// it (kRoot when the stacks end within the key).
Key keyOf(const Pda &pda, const std::vector<NodeId> &group, NodeId &outer);

struct CompiledGrammar::Impl {
  Impl(const Grammar &g, const TokenVocabulary &v) : program(g), vocab(v) {}
  /// The key's masks, computed on first use; the pointer stays valid.
  const KeyMasks &masksFor(const Key &key);

  Program program;
  const TokenVocabulary &vocab;
  std::mutex mutex;
  std::map<Key, std::shared_ptr<const KeyMasks>> keys;
  CompileStats stats;

private:
  /// Tokens leaving a key's top frames beyond which extend() is not worth
  /// it (a frame most tokens leave: computed whole instead). Walking each
  /// such token's rest costs less than a second walk of the whole trie
  /// well past 8192 of them.
  static constexpr size_t kMaxExtended = 32768;
  /// The key's masks walking the vocabulary's trie; anyFirstByte: as if
  /// the key's first byte set held every byte.
  std::shared_ptr<const KeyMasks> compute(const Key &key,
                                          bool anyFirstByte) const;
  /// The tokens of `all` whose first byte is in `first`.
  std::shared_ptr<const KeyMasks> firstByteIn(const KeyMasks &all,
                                              const ByteSet &first) const;
  /// From the vocabulary's shared masks, computing them when absent.
  std::shared_ptr<const KeyMasks>
  shared(const Key &key, const std::string &canonical, bool &computed) const;
  /// The masks of `key` from those of its top `depth` frames.
  std::shared_ptr<const KeyMasks> extend(const KeyMasks &top, const Key &key,
                                         size_t depth) const;
};

} // namespace llmc::grammar
