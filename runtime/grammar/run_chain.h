//===- run_chain.h - Runs of a byte class as a chain of states --*- C++ -*-===//
//
// Private to runtime/grammar. Inside a JSON string every plain byte
// (TokenVocabulary::RunClass) goes to the same state, so a run of them is a
// chain: one state when the length is free, maxLength states when it is
// bounded; inside a URI or a pattern, letters and digits often do. A mask
// walk in such a state decides a token by the length of its run and walks
// only what follows it, instead of visiting every trie node below (a
// bounded string's first mask walked the whole trie).
//
// Not thread-safe: one per Pda, which it extends.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pda.h"

#include "llmc/grammar/vocabulary.h"

namespace llmc::grammar {

class RunChain {
public:
  RunChain(Pda &pda, TokenVocabulary::RunClass runClass);
  TokenVocabulary::RunClass runClass() const { return class_; }

  /// Follows the class's bytes from `s`, at most `maxSteps`: false when `s`
  /// does not take them all alike.
  bool follow(StateId s, size_t maxSteps);

  /// How the chain ends: its last state's bytes of the class die (Dies), it
  /// comes back to a state of the chain (Loops), or its last state takes them
  /// unalike (Open: walk on from there).
  enum End { Dies, Loops, Open };
  End end() const { return end_; }
  /// The chain's states from the start.
  const std::vector<StateId> &states() const { return states_; }
  /// Whether one of them has left the key's frames (a token through it
  /// that dies is uncertain there).
  bool anyExited() const { return anyExited_; }
  /// The state after `m` bytes of the class; `m` < states().size() unless
  /// Loops.
  StateId after(size_t m) const;

private:
  /// Where every byte of the class goes from `s` (kDead: nowhere), or
  /// kUnalike.
  StateId classNext(StateId s);
  static constexpr StateId kUnalike = UINT32_MAX, kUnknown = UINT32_MAX - 1;

  Pda &pda_;
  TokenVocabulary::RunClass class_;
  std::array<uint64_t, 4> bytes_{};
  std::vector<StateId> next_; // by state: classNext's answer or kUnknown
  std::vector<StateId> states_;
  size_t cycleStart_ = 0;
  bool anyExited_ = false;
  End end_ = Open;
};

} // namespace llmc::grammar
