//===- run_chain.cpp - Runs of a byte class as a chain of states ----------===//
#include "run_chain.h"

#include <algorithm>

namespace llmc::grammar {

RunChain::RunChain(Pda &pda, TokenVocabulary::RunClass runClass)
    : pda_(pda), class_(runClass) {
  for (unsigned b = 0; b < 256; ++b)
    if (TokenVocabulary::inRun(runClass, static_cast<uint8_t>(b)))
      bytes_[b >> 6] |= uint64_t(1) << (b & 63);
}

StateId RunChain::classNext(StateId s) {
  if (next_.size() <= s)
    next_.resize(pda_.stateCount(), kUnknown);
  if (next_[s] != kUnknown)
    return next_[s];
  // Two bytes go to the same state when every top set holds both or
  // neither.
  const Program &program = pda_.program();
  StateId result = kUnknown;
  for (NodeId n : pda_.state(s).nodes) {
    const auto &words = program.setWords[program.pos[pda_.nodeAt(n).pos].arg];
    unsigned some = 0, all = 0;
    for (unsigned w = 0; w < 4; ++w) {
      const uint64_t in = words[w] & bytes_[w];
      some |= in != 0;
      all += in == bytes_[w];
    }
    if (some && all != 4) {
      result = kUnalike;
      break;
    }
  }
  if (result == kUnknown) // alike: where 'a' (in both classes) goes
    result = pda_.next(s, 'a');
  return next_[s] = result;
}

bool RunChain::follow(StateId s, size_t maxSteps) {
  const StateId first = classNext(s);
  if (first == kUnalike || first == Pda::kDead)
    return false;
  states_.assign(1, s);
  anyExited_ = false;
  for (StateId at = s;;) {
    anyExited_ |= (pda_.flags(at) & Pda::kExited) != 0;
    const StateId to = classNext(at);
    if (states_.size() > maxSteps || to == kUnalike) {
      end_ = Open;
      return states_.size() > 1;
    }
    if (to == Pda::kDead) {
      end_ = Dies;
      return true;
    }
    const auto seen = std::find(states_.begin(), states_.end(), to);
    if (seen != states_.end()) {
      end_ = Loops;
      cycleStart_ = static_cast<size_t>(seen - states_.begin());
      return true;
    }
    states_.push_back(to);
    at = to;
  }
}

StateId RunChain::after(size_t m) const {
  if (m < states_.size())
    return states_[m];
  const size_t cycle = states_.size() - cycleStart_;
  return states_[cycleStart_ + (m - cycleStart_) % cycle];
}

} // namespace llmc::grammar
