//===- compiled_grammar.cpp - Precomputed masks per stack top -------------===//
#include "compiled.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>

namespace llmc::grammar {

int32_t TokenMask::count() const {
  int32_t n = 0;
  for (uint64_t w : words_)
    n += __builtin_popcountll(w);
  return n;
}

void TokenMask::applyTo(std::span<float> logits) const {
  const size_t n = std::min(logits.size(), static_cast<size_t>(size_));
  for (size_t i = 0; i < n; ++i)
    if (!((words_[i >> 6] >> (i & 63)) & 1))
      logits[i] = -INFINITY;
  for (size_t i = n; i < logits.size(); ++i)
    logits[i] = -INFINITY;
}

Key keyOf(const Pda &pda, NodeId n, NodeId &outer) {
  Key key;
  while (true) {
    key.push_back(pda.nodeAt(n).pos);
    n = pda.nodeAt(n).parent;
    if (n == Pda::kRoot) {
      key.push_back(kEndsAtRoot);
      outer = Pda::kRoot;
      return key;
    }
    if (key.size() == static_cast<size_t>(CompiledGrammar::kKeyDepth)) {
      outer = n;
      return key;
    }
  }
}

std::unique_ptr<KeyMasks> CompiledGrammar::Impl::compute(const Key &key) const {
  Pda pda(program);
  const bool atRoot = key.back() == kEndsAtRoot;
  const size_t frames = key.size() - (atRoot ? 1 : 0);
  NodeId n = atRoot ? Pda::kRoot : Pda::kOut;
  for (size_t j = frames; j-- > 0;)
    n = pda.node(key[j], n);
  const auto &trie = vocab.trie();
  const auto &trieTokens = vocab.trieTokens();
  std::vector<StateId> at(vocab.maxTokenBytes() + 1);
  at[0] = pda.stateOfTerminals({n});
  std::vector<int32_t> accepted;
  std::vector<std::pair<int32_t, uint32_t>> uncertain;
  for (size_t i = 0; i < trie.size();) {
    const TokenVocabulary::TrieNode &t = trie[i];
    const StateId s = pda.next(at[t.depth - 1], t.byte);
    if (s == Pda::kDead) {
      i = t.subtreeEnd;
      continue;
    }
    at[t.depth] = s;
    for (uint32_t k = t.tokenBegin; k < t.tokenEnd; ++k)
      accepted.push_back(trieTokens[k]);
    const Pda::State &st = pda.state(s);
    if (st.exited && t.subtreeEnd > i + 1)
      for (uint32_t k = t.tokenEnd; k < trie[t.subtreeEnd - 1].tokenEnd; ++k)
        uncertain.emplace_back(trieTokens[k], t.depth);
    i = st.nodes.empty() ? t.subtreeEnd : i + 1;
  }
  auto m = std::make_unique<KeyMasks>();
  const int32_t V = vocab.size();
  TokenMask bits(V);
  for (int32_t id : accepted)
    bits.set(id);
  std::erase_if(uncertain, [&](const auto &u) { return bits.test(u.first); });
  m->uncertain = std::move(uncertain);
  if (static_cast<int64_t>(accepted.size()) * 32 > V)
    m->acceptedBits = std::move(bits.words());
  else
    m->acceptedList = std::move(accepted);
  return m;
}

const KeyMasks &CompiledGrammar::Impl::masksFor(const Key &key) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = keys.find(key);
    if (it != keys.end())
      return *it->second;
  }
  // Computed outside the lock: another thread may do the same key at once;
  // the first to insert wins and both answers are equal.
  std::unique_ptr<KeyMasks> m = compute(key);
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, fresh] = keys.try_emplace(key, std::move(m));
  if (fresh) {
    ++stats.keys;
    stats.uncertainTokens += static_cast<int64_t>(it->second->uncertain.size());
  }
  return *it->second;
}

CompiledGrammar::CompiledGrammar(Grammar grammar,
                                 std::shared_ptr<const TokenVocabulary> vocab,
                                 int64_t warmStates)
    : grammar_(std::move(grammar)), vocab_(std::move(vocab)) {
  const auto t0 = std::chrono::steady_clock::now();
  grammar_.validate("");
  impl_ = std::make_unique<Impl>(grammar_, *vocab_);
  // Breadth first over the states text can reach, byte by byte: the keys
  // of their stacks are the ones requests meet first.
  Pda pda(impl_->program);
  std::deque<StateId> queue{pda.start()};
  std::vector<char> seen(1, 1); // kDead
  auto mark = [&](StateId s) {
    if (seen.size() <= s)
      seen.resize(s + 1, 0);
    if (seen[s])
      return false;
    seen[s] = 1;
    return true;
  };
  mark(queue.front());
  int64_t visited = 0;
  while (!queue.empty() && visited < warmStates) {
    const StateId s = queue.front();
    queue.pop_front();
    ++visited;
    const std::vector<NodeId> nodes = pda.state(s).nodes;
    for (NodeId n : nodes) {
      NodeId outer;
      impl_->masksFor(keyOf(pda, n, outer));
    }
    for (unsigned b = 0; b < 256; ++b) {
      const StateId t = pda.next(s, static_cast<uint8_t>(b));
      if (t != Pda::kDead && mark(t))
        queue.push_back(t);
    }
  }
  impl_->stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
}

CompiledGrammar::~CompiledGrammar() = default;

CompileStats CompiledGrammar::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->stats;
}

} // namespace llmc::grammar
