//===- matcher.h - Which tokens a grammar allows next -----------*- C++ -*-===//
//
// A CompiledGrammar is a grammar bound to a vocabulary, with the work that
// makes masks cheap done once and shared by every request that uses it. A
// Matcher is one sequence's position in it: it masks a row of logits,
// advances by the sampled token and rolls back for speculative decoding.
//
// How a mask is made (XGrammar's split of context-independent and
// context-dependent tokens, on our stack machine, runtime/grammar/pda.h):
// a stack's top few frames (its "key": the positions of at most kKeyDepth
// nodes; stacks differing only in their top position share one) decide
// most tokens alone. For each key the vocabulary's trie is
// walked once, ahead of time: tokens that stay inside those frames are
// accepted or rejected for every stack with that key; tokens that pop out
// of them with bytes left over are kept, with the offset where they did,
// as "uncertain". At run time a state's mask is the union, over its
// stacks, of the key's accepted tokens and those uncertain ones the rest
// of the stack accepts, and is cached per state: the usual next-token
// masks cost an OR of bitsets.
//
// Threads: a CompiledGrammar may be shared across threads (its key cache
// locks). A Matcher and its copies share one stack machine: use them on
// one thread (a request's, its beams' and its samples' thread).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/grammar/grammar.h"
#include "llmc/grammar/vocabulary.h"

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace llmc::grammar {

/// A set of token ids as bits, 64 per word.
class TokenMask {
public:
  explicit TokenMask(int32_t size = 0)
      : size_(size), words_((static_cast<size_t>(size) + 63) / 64, 0) {}
  int32_t size() const { return size_; }
  bool test(int32_t id) const {
    return (words_[size_t(id) >> 6] >> (id & 63)) & 1;
  }
  void set(int32_t id) { words_[size_t(id) >> 6] |= uint64_t(1) << (id & 63); }
  void reset(int32_t id) {
    words_[size_t(id) >> 6] &= ~(uint64_t(1) << (id & 63));
  }
  void clear() { std::fill(words_.begin(), words_.end(), 0); }
  int32_t count() const;
  std::vector<uint64_t> &words() { return words_; }
  const std::vector<uint64_t> &words() const { return words_; }
  /// Sets -inf in `logits` (size() entries) wherever the bit is clear.
  void applyTo(std::span<float> logits) const;

private:
  int32_t size_;
  std::vector<uint64_t> words_;
};

struct CompileStats {
  double seconds = 0;          // grammar -> ready to mask, warm-up included
  int64_t keys = 0;            // stack tops precomputed
  int64_t sharedKeys = 0;      // found computed by another grammar
  int64_t uncertainTokens = 0; // summed over keys
};

class CompiledGrammar {
public:
  /// A stack's top frames that decide a token alone (see above).
  static constexpr int kKeyDepth = 4;

  /// Validates `grammar`; walks the grammar's states from its start for
  /// up to `warmStates` states and precomputes every key met. None by
  /// default: keys are computed on first use, most found in the
  /// vocabulary's shared masks (2048 states cost 265 ms median on
  /// MaskBench's schemas with Llama 3's vocabulary; none, 0.5 ms).
  CompiledGrammar(Grammar grammar,
                  std::shared_ptr<const TokenVocabulary> vocabulary,
                  int64_t warmStates = 0);
  ~CompiledGrammar();

  const Grammar &grammar() const { return grammar_; }
  const TokenVocabulary &vocabulary() const { return *vocab_; }
  CompileStats stats() const;

  struct Impl;
  Impl &impl() const { return *impl_; }

private:
  Grammar grammar_;
  std::shared_ptr<const TokenVocabulary> vocab_;
  std::unique_ptr<Impl> impl_;
};

class Matcher {
public:
  /// At the grammar's start. `eosIds` end the text: allowed exactly where
  /// the grammar may end (ids outside the vocabulary are ignored).
  Matcher(std::shared_ptr<const CompiledGrammar> grammar,
          std::vector<int32_t> eosIds);
  ~Matcher();
  Matcher(const Matcher &);
  Matcher &operator=(const Matcher &);

  /// The tokens allowed next into `mask` (vocabulary size). Once ended(),
  /// none.
  void fillMask(TokenMask &mask);
  /// Whether `token` is allowed next, without a mask.
  bool allows(int32_t token);
  /// Advances by `token`; false (and nothing changes) when the grammar
  /// does not allow it. An EOS id ends the matcher.
  bool accept(int32_t token);
  /// Undoes the last n accepted tokens (n <= accepted()).
  void rollback(size_t n);
  size_t accepted() const { return history_.size(); }

  /// The text so far is a complete sentence of the grammar.
  bool canEnd() const;
  /// Nothing but the end may follow (the sequence should stop).
  bool mustEnd() const;
  /// An EOS was accepted.
  bool ended() const { return ended_; }

  const CompiledGrammar &grammar() const { return *grammar_; }

  struct Core;

private:
  std::shared_ptr<const CompiledGrammar> grammar_;
  std::shared_ptr<Core> core_;
  std::vector<int32_t> eos_;
  uint32_t state_;
  std::vector<uint32_t> history_; // the state before each accepted token
  bool ended_ = false;
};

} // namespace llmc::grammar
