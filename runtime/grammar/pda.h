//===- pda.h - The grammar as a pushdown automaton over bytes ---*- C++ -*-===//
//
// Private to runtime/grammar. A Program flattens a Grammar into positions
// (rule, alternative, element index); a Pda runs it.
//
// A stack is a chain of interned nodes (position, parent): the position is
// the next element to match, the parent the node to return to when the
// position's sequence ends. A node at the end of a sequence is its parent
// (a reference in last place pushes nothing), so right recursion such as
// `tail ::= x tail | ""` runs in constant stack. Two parents are special:
// kRoot (the root rule ended: the text may stop here) and kOut (the part
// of the stack a mask precomputation looks at ended; what follows is
// someone else's).
//
// A state is the set of stacks the text read so far may be in, each with a
// byte set on top, plus whether a stack reached kRoot (accepting) or kOut
// (exited). States are interned and their byte transitions memoised, so
// text that revisits a state costs one table lookup per byte.
//
// Not thread-safe; nodes and states only grow.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/grammar/grammar.h"

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace llmc::grammar {

class Program {
public:
  explicit Program(const Grammar &g);

  enum Kind : uint8_t { Bytes, Rule, End };
  struct Pos {
    Kind kind;
    uint32_t arg; // set (Bytes) or rule (Rule)
    uint32_t rule;
  };
  std::vector<Pos> pos;
  std::vector<std::vector<uint32_t>> ruleStarts; // first position of each alt
  std::vector<ByteSet> sets;
  /// The sets as 4 words (bit b of word b / 64).
  std::vector<std::array<uint64_t, 4>> setWords;
  uint32_t root;
  /// The fewest bytes each rule derives (kUnbounded: none).
  static constexpr uint32_t kUnbounded = UINT32_MAX;
  std::vector<uint32_t> minBytes;
  /// The fewest bytes from position p to the end of its sequence.
  uint32_t minBytesFrom(uint32_t p) const;
};

using NodeId = uint32_t;
using StateId = uint32_t;

/// Node ids by (position, parent): open addressing, nothing ever removed.
/// A mask's trie walk looks a node up for every new transition; a node
/// table of std::unordered_map cost it an allocation per node.
class NodeIndex {
public:
  /// The id of `key`, or `id` when absent (then stored).
  uint32_t findOrAdd(uint64_t key, uint32_t id);

private:
  static constexpr uint64_t kEmpty = UINT64_MAX;
  std::vector<uint64_t> keys_ = std::vector<uint64_t>(64, kEmpty);
  std::vector<uint32_t> ids_ = std::vector<uint32_t>(64);
  size_t size_ = 0;
};

class Pda {
public:
  static constexpr NodeId kRoot = 0, kOut = 1;
  static constexpr StateId kDead = 0;

  explicit Pda(const Program &program);

  struct Node {
    uint32_t pos;
    NodeId parent;
  };
  struct State {
    std::vector<NodeId> nodes; // sorted; every one has a byte set on top
    bool accepting = false;
    bool exited = false;
    /// The bytes some stack takes next (bit b of word b / 64): any other
    /// byte is dead without computing the transition.
    std::array<uint64_t, 4> bytes{};
    bool takes(uint8_t byte) const {
      return (bytes[byte >> 6] >> (byte & 63)) & 1;
    }
  };

  /// The node for `pos` under `parent` (the parent itself at an End).
  NodeId node(uint32_t pos, NodeId parent);
  const Node &nodeAt(NodeId n) const { return nodes_[n]; }
  /// Where text may go from the start of the root rule.
  StateId start();
  /// The state of the single stack `n` (expanded to byte sets on top).
  StateId stateOf(NodeId n);
  /// The state whose stacks are exactly these nodes, each already with a
  /// byte set on top (the precomputation's starting points).
  StateId stateOfTerminals(std::vector<NodeId> nodes);
  StateId next(StateId s, uint8_t byte) {
    const size_t at = size_t(s) * 256 + byte;
    if (trans_[at] < 0) {
      const StateId t =
          states_[s].takes(byte) ? advance(s, byte) : kDead; // may grow trans_
      trans_[at] = static_cast<int32_t>(t);
    }
    return static_cast<StateId>(trans_[at]);
  }
  const State &state(StateId s) const { return states_[s]; }
  /// A state's exited and "some stack goes on" (nodes not empty) bits, in
  /// one byte: what a trie walk reads at every node.
  static constexpr uint8_t kExited = 1, kGoesOn = 2;
  uint8_t flags(StateId s) const { return flags_[s]; }
  size_t stateCount() const { return states_.size(); }
  size_t nodeCount() const { return nodes_.size(); }
  const Program &program() const { return p_; }

private:
  StateId advance(StateId s, uint8_t byte);
  /// Adds the byte-set-topped stacks `n` expands to into scratch_.
  void expand(NodeId n);
  StateId intern();

  const Program &p_;
  std::vector<Node> nodes_;
  NodeIndex nodeIndex_;
  std::vector<State> states_;
  std::unordered_multimap<uint64_t, StateId> stateIndex_;
  std::vector<int32_t> trans_; // 256 per state, -1 = not computed yet
  std::vector<uint8_t> flags_; // by state
  // expand()'s work: the state being built and the nodes it visited.
  State scratch_;
  std::vector<uint32_t> visitedAt_;
  uint32_t visitStamp_ = 0;
  std::vector<NodeId> work_;
};

} // namespace llmc::grammar
