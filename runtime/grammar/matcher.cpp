//===- matcher.cpp - One sequence's place in a grammar --------------------===//
#include "compiled.h"

#include "llmc/support/error.h"

#include <algorithm>
#include <unordered_map>

namespace llmc::grammar {

/// The stack machine a matcher and its copies share, with what it learnt:
/// each state's key masks, the states below keys, and recent masks.
struct Matcher::Core {
  explicit Core(CompiledGrammar::Impl &g) : impl(g), pda(g.program) {}

  struct GroupInfo {
    const KeyMasks *masks;
    NodeId outer;
  };
  /// The key masks of each group of the state's stacks.
  const std::vector<GroupInfo> &groupsOf(StateId s) {
    if (groups.size() <= s)
      groups.resize(pda.stateCount());
    std::vector<GroupInfo> &g = groups[s];
    if (g.empty())
      for (const std::vector<NodeId> &group :
           siblingGroups(pda, pda.state(s).nodes)) {
        NodeId outer;
        const KeyMasks &k = impl.masksFor(keyOf(pda, group, outer));
        g.push_back({&k, outer});
      }
    return g;
  }
  StateId below(NodeId outer) {
    auto it = outerStates.find(outer);
    if (it != outerStates.end())
      return it->second;
    const StateId s = pda.stateOf(outer);
    outerStates.emplace(outer, s);
    return s;
  }
  /// The state after `bytes` from `s` (kDead as soon as it dies).
  StateId walk(StateId s, std::string_view bytes) {
    for (char c : bytes) {
      s = pda.next(s, static_cast<uint8_t>(c));
      if (s == Pda::kDead)
        break;
    }
    return s;
  }
  const TokenMask &mask(StateId s);

  CompiledGrammar::Impl &impl;
  Pda pda;
  std::vector<std::vector<GroupInfo>> groups; // by state
  std::unordered_map<NodeId, StateId> outerStates;
  /// Masks of recent states (without EOS: that is per matcher), dropped
  /// all at once past kCachedMasks.
  static constexpr size_t kCachedMasks = 64;
  std::unordered_map<StateId, TokenMask> masks;
};

const TokenMask &Matcher::Core::mask(StateId s) {
  auto it = masks.find(s);
  if (it != masks.end())
    return it->second;
  if (masks.size() >= kCachedMasks)
    masks.clear();
  const TokenVocabulary &vocab = impl.vocab;
  TokenMask m(vocab.size());
  std::vector<uint64_t> &w = m.words();
  // groups may grow below (new states): copy this state's.
  const std::vector<GroupInfo> groups = groupsOf(s);
  for (const GroupInfo &g : groups) {
    const KeyMasks &k = *g.masks;
    if (!k.acceptedBits.empty())
      for (size_t i = 0; i < w.size(); ++i)
        w[i] |= k.acceptedBits[i];
    for (int32_t id : k.acceptedList)
      m.set(id);
  }
  for (const GroupInfo &g : groups) {
    if (g.masks->uncertain.empty())
      continue;
    const StateId rest = below(g.outer);
    for (const auto &[id, offset] : g.masks->uncertain)
      if (!m.test(id) &&
          walk(rest, std::string_view(vocab.bytes(id)).substr(offset)) !=
              Pda::kDead)
        m.set(id);
  }
  return masks.emplace(s, std::move(m)).first->second;
}

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> grammar,
                 std::vector<int32_t> eosIds)
    : grammar_(std::move(grammar)) {
  for (int32_t e : eosIds)
    if (e >= 0 && e < grammar_->vocabulary().size())
      eos_.push_back(e);
  core_ = std::make_shared<Core>(grammar_->impl());
  state_ = core_->pda.start();
}

Matcher::~Matcher() = default;
Matcher::Matcher(const Matcher &) = default;
Matcher &Matcher::operator=(const Matcher &) = default;

bool Matcher::canEnd() const { return core_->pda.state(state_).accepting; }

bool Matcher::mustEnd() const {
  return ended_ || core_->pda.state(state_).nodes.empty();
}

void Matcher::fillMask(TokenMask &mask) {
  if (ended_) {
    mask.clear();
    return;
  }
  mask = core_->mask(state_);
  for (int32_t e : eos_)
    if (canEnd())
      mask.set(e);
    else
      mask.reset(e);
}

bool Matcher::allows(int32_t token) {
  if (ended_ || token < 0 || token >= grammar_->vocabulary().size())
    return false;
  if (std::find(eos_.begin(), eos_.end(), token) != eos_.end())
    return canEnd();
  const std::string &b = grammar_->vocabulary().bytes(token);
  return !b.empty() && core_->walk(state_, b) != Pda::kDead;
}

bool Matcher::accept(int32_t token) {
  if (!allows(token))
    return false;
  history_.push_back(state_);
  if (std::find(eos_.begin(), eos_.end(), token) != eos_.end())
    ended_ = true;
  else
    state_ = core_->walk(state_, grammar_->vocabulary().bytes(token));
  return true;
}

void Matcher::rollback(size_t n) {
  if (n > history_.size())
    throw Error("internal error: a grammar rolled back past its start");
  if (n == 0)
    return;
  ended_ = false;
  state_ = history_[history_.size() - n];
  history_.resize(history_.size() - n);
}

} // namespace llmc::grammar
