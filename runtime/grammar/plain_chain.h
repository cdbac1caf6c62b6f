//===- plain_chain.h - A string's content as a chain of states --*- C++ -*-===//
//
// Private to runtime/grammar. Inside a JSON string every plain byte
// (TokenVocabulary::isPlain) goes to the same state, so a run of them is a
// chain: one state when the length is free, maxLength states when it is
// bounded. A mask walk in such a state decides a token by the length of
// its plain run and walks only what follows it, instead of visiting every
// trie node below (a bounded string's first mask walked the whole trie).
//
// Not thread-safe: one per Pda, which it extends.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pda.h"

namespace llmc::grammar {

class PlainChain {
public:
  explicit PlainChain(Pda &pda);

  /// Follows plain bytes from `s`, at most `maxSteps`: false when `s` does
  /// not take them all alike.
  bool follow(StateId s, size_t maxSteps);

  /// How the chain ends: its last state's plain bytes die (Dies), it comes
  /// back to a state of the chain (Loops), or its last state takes them
  /// unalike (Open: walk on from there).
  enum End { Dies, Loops, Open };
  End end() const { return end_; }
  /// The chain's states from the start.
  const std::vector<StateId> &states() const { return states_; }
  /// Whether one of them has left the key's frames (a token through it
  /// that dies is uncertain there).
  bool anyExited() const { return anyExited_; }
  /// The state after `m` plain bytes; `m` < states().size() unless Loops.
  StateId after(size_t m) const;

private:
  /// Where every plain byte goes from `s` (kDead: nowhere), or kUnalike.
  StateId plainNext(StateId s);
  static constexpr StateId kUnalike = UINT32_MAX, kUnknown = UINT32_MAX - 1;

  Pda &pda_;
  std::array<uint64_t, 4> plain_{};
  std::vector<StateId> next_; // by state: plainNext's answer or kUnknown
  std::vector<StateId> states_;
  size_t cycleStart_ = 0;
  bool anyExited_ = false;
  End end_ = Open;
};

} // namespace llmc::grammar
