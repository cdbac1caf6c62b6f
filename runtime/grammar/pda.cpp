//===- pda.cpp - Stacks, states and their byte transitions ----------------===//
#include "pda.h"

#include <algorithm>
#include <bit>

namespace llmc::grammar {

Program::Program(const Grammar &g)
    : ruleStarts(g.rules.size()), sets(g.sets), setWords(g.sets.size()),
      root(g.root) {
  for (size_t i = 0; i < sets.size(); ++i)
    for (unsigned b = 0; b < 256; ++b)
      if (sets[i][b])
        setWords[i][b >> 6] |= uint64_t(1) << (b & 63);
  for (uint32_t r = 0; r < g.rules.size(); ++r)
    for (const Sequence &s : g.rules[r].alternatives) {
      ruleStarts[r].push_back(static_cast<uint32_t>(pos.size()));
      for (const Element &e : s)
        pos.push_back({e.kind == Element::Bytes ? Bytes : Rule, e.index, r});
      pos.push_back({End, 0, r});
    }
  // Shortest derivations, to a fixed point; passes alternate direction
  // (a rule mostly refers to rules made just before or after it).
  minBytes.assign(g.rules.size(), kUnbounded);
  const uint32_t n = static_cast<uint32_t>(g.rules.size());
  for (bool changed = true, forward = true; changed; forward = !forward) {
    changed = false;
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t r = forward ? i : n - 1 - i;
      for (uint32_t start : ruleStarts[r]) {
        const uint32_t m = minBytesFrom(start);
        if (m < minBytes[r]) {
          minBytes[r] = m;
          changed = true;
        }
      }
    }
  }
}

uint32_t Program::minBytesFrom(uint32_t p) const {
  uint64_t n = 0;
  for (; pos[p].kind != End; ++p) {
    const uint32_t e = pos[p].kind == Bytes ? 1 : minBytes[pos[p].arg];
    if (e == kUnbounded)
      return kUnbounded;
    n += e;
  }
  return static_cast<uint32_t>(std::min<uint64_t>(n, kUnbounded - 1));
}

Pda::Pda(const Program &program) : p_(program) {
  // A mask's walk makes a Pda per key and most reach tens to hundreds of
  // states: room for them up front, not a copy of the table per doubling.
  constexpr size_t kStates = 64;
  trans_.reserve(kStates * 256);
  states_.reserve(kStates);
  flags_.reserve(kStates);
  nodes_.reserve(4 * kStates);
  // kRoot and kOut: placeholders, never expanded as positions.
  nodes_.push_back({UINT32_MAX, kRoot});
  nodes_.push_back({UINT32_MAX, kOut});
  states_.emplace_back(); // kDead
  flags_.push_back(0);
  trans_.assign(256, static_cast<int32_t>(kDead));
}

uint32_t NodeIndex::findOrAdd(uint64_t key, uint32_t id) {
  if ((size_ + 1) * 2 > keys_.size()) {
    std::vector<uint64_t> keys(keys_.size() * 2, kEmpty);
    std::vector<uint32_t> ids(keys.size());
    keys.swap(keys_);
    ids.swap(ids_);
    size_ = 0;
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != kEmpty)
        findOrAdd(keys[i], ids[i]);
  }
  const size_t mask = keys_.size() - 1;
  // The product's top bits: its low ones see only the parent.
  const int bits = std::countr_zero(keys_.size());
  for (size_t i = (key * 0x9E3779B97F4A7C15ull) >> (64 - bits);;
       i = (i + 1) & mask) {
    if (keys_[i] == key)
      return ids_[i];
    if (keys_[i] == kEmpty) {
      keys_[i] = key;
      ids_[i] = id;
      ++size_;
      return id;
    }
  }
}

NodeId Pda::node(uint32_t pos, NodeId parent) {
  if (p_.pos[pos].kind == Program::End)
    return parent;
  const NodeId id = static_cast<NodeId>(nodes_.size());
  const NodeId n = nodeIndex_.findOrAdd((uint64_t(pos) << 32) | parent, id);
  if (n == id)
    nodes_.push_back({pos, parent});
  return n;
}

void Pda::expand(NodeId first) {
  work_.clear();
  work_.push_back(first);
  while (!work_.empty()) {
    const NodeId n = work_.back();
    work_.pop_back();
    if (n == kRoot) {
      scratch_.accepting = true;
      continue;
    }
    if (n == kOut) {
      scratch_.exited = true;
      continue;
    }
    if (visitedAt_.size() <= n)
      visitedAt_.resize(nodes_.size() * 2, 0);
    if (visitedAt_[n] == visitStamp_)
      continue;
    visitedAt_[n] = visitStamp_;
    const Node nd = nodes_[n];
    const Program::Pos &pos = p_.pos[nd.pos];
    if (pos.kind == Program::Bytes) {
      scratch_.nodes.push_back(n);
      continue;
    }
    // A reference: every alternative of the rule, returning to what
    // follows the reference.
    const NodeId cont = node(nd.pos + 1, nd.parent);
    for (uint32_t start : p_.ruleStarts[pos.arg])
      work_.push_back(node(start, cont));
  }
}

StateId Pda::intern() {
  std::sort(scratch_.nodes.begin(), scratch_.nodes.end());
  scratch_.nodes.erase(
      std::unique(scratch_.nodes.begin(), scratch_.nodes.end()),
      scratch_.nodes.end());
  if (scratch_.nodes.empty() && !scratch_.accepting && !scratch_.exited)
    return kDead;
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t(scratch_.accepting) << 1) ^
               uint64_t(scratch_.exited);
  for (NodeId n : scratch_.nodes)
    h = (h ^ n) * 0x100000001B3ull;
  auto range = stateIndex_.equal_range(h);
  for (auto it = range.first; it != range.second; ++it) {
    const State &s = states_[it->second];
    if (s.accepting == scratch_.accepting && s.exited == scratch_.exited &&
        s.nodes == scratch_.nodes)
      return it->second;
  }
  const StateId id = static_cast<StateId>(states_.size());
  states_.push_back(scratch_);
  flags_.push_back(
      static_cast<uint8_t>((scratch_.exited ? kExited : 0) |
                           (scratch_.nodes.empty() ? 0 : kGoesOn)));
  std::array<uint64_t, 4> &takes = states_.back().bytes;
  for (NodeId n : scratch_.nodes)
    for (unsigned w = 0; w < 4; ++w)
      takes[w] |= p_.setWords[p_.pos[nodes_[n].pos].arg][w];
  stateIndex_.emplace(h, id);
  trans_.resize(trans_.size() + 256, -1);
  return id;
}

namespace {
struct ScratchReset {
  Pda::State &s;
  explicit ScratchReset(Pda::State &st) : s(st) {
    s.nodes.clear();
    s.accepting = s.exited = false;
  }
};
} // namespace

StateId Pda::start() {
  ScratchReset reset(scratch_);
  ++visitStamp_;
  for (uint32_t st : p_.ruleStarts[p_.root])
    expand(node(st, kRoot));
  return intern();
}

StateId Pda::stateOf(NodeId n) {
  ScratchReset reset(scratch_);
  ++visitStamp_;
  expand(n);
  return intern();
}

StateId Pda::stateOfTerminals(std::vector<NodeId> nodes) {
  ScratchReset reset(scratch_);
  scratch_.nodes = std::move(nodes);
  return intern();
}

StateId Pda::advance(StateId s, uint8_t byte) {
  // expand() adds nodes, never states: the state's nodes stay put.
  const std::vector<NodeId> &from = states_[s].nodes;
  ScratchReset reset(scratch_);
  ++visitStamp_;
  for (NodeId n : from) {
    const Node nd = nodes_[n];
    if ((p_.setWords[p_.pos[nd.pos].arg][byte >> 6] >> (byte & 63)) & 1)
      expand(node(nd.pos + 1, nd.parent));
  }
  return intern();
}

} // namespace llmc::grammar
