//===- compiled_grammar.cpp - Precomputed masks per stack top -------------===//
#include "compiled.h"
#include "run_chain.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>

namespace llmc::grammar {

// Built for baseline x86-64, __builtin_popcountll is a library call per
// word; every x86-64 CPU since 2008 has the instruction.
#if defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("popcnt", "default")))
#endif
int32_t
TokenMask::count() const {
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

namespace {

/// Whether the byte set at Bytes position `pos` is wide enough to be left
/// out of a key's canonical form (masks then filtered by first byte).
bool wideSet(const Program &program, uint32_t pos) {
  return program.sets[program.pos[pos].arg].count() >= 64;
}

} // namespace

std::vector<std::vector<NodeId>>
siblingGroups(const Pda &pda, const std::vector<NodeId> &nodes) {
  // A wide first set stays alone: its key is shared with other grammars
  // (an other key's first character, a string's ASCII characters).
  std::vector<std::pair<NodeId, NodeId>> byParent; // (parent, node)
  std::vector<std::vector<NodeId>> groups;
  byParent.reserve(nodes.size());
  for (NodeId n : nodes)
    if (wideSet(pda.program(), pda.nodeAt(n).pos))
      groups.push_back({n});
    else
      byParent.emplace_back(pda.nodeAt(n).parent, n);
  std::sort(byParent.begin(), byParent.end());
  for (size_t i = 0; i < byParent.size(); ++i) {
    if (i == 0 || byParent[i].first != byParent[i - 1].first)
      groups.emplace_back();
    groups.back().push_back(byParent[i].second);
  }
  return groups;
}

Key keyOf(const Pda &pda, const std::vector<NodeId> &group, NodeId &outer) {
  Key key{static_cast<uint32_t>(group.size())};
  for (NodeId n : group)
    key.push_back(pda.nodeAt(n).pos);
  std::sort(key.begin() + 1, key.end());
  NodeId n = pda.nodeAt(group[0]).parent;
  for (size_t frames = 1;; ++frames) {
    if (n == Pda::kRoot) {
      key.push_back(kEndsAtRoot);
      outer = Pda::kRoot;
      return key;
    }
    if (frames == static_cast<size_t>(CompiledGrammar::kKeyDepth)) {
      outer = n;
      return key;
    }
    key.push_back(pda.nodeAt(n).pos);
    n = pda.nodeAt(n).parent;
  }
}

namespace {

/// `bits` (holding `count` tokens) into `m`, dense or as a list.
void storeAccepted(KeyMasks &m, TokenMask bits, size_t count) {
  if (count * 32 > static_cast<size_t>(bits.size())) {
    m.acceptedBits = std::move(bits.words());
    return;
  }
  for (size_t w = 0; w < bits.words().size(); ++w)
    for (uint64_t b = bits.words()[w]; b; b &= b - 1)
      m.acceptedList.push_back(static_cast<int32_t>(w * 64) +
                               __builtin_ctzll(b));
}

/// Ids numbered in the order met, reset in time proportional to the ids
/// used.
struct Numbering {
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> of; // id -> number, or kNone
  std::vector<uint32_t> used;
  void reset(size_t ids) {
    for (uint32_t id : used)
      of[id] = kNone;
    used.clear();
    if (of.size() < ids)
      of.resize(ids, kNone);
  }
  /// The number of `id`, numbering it next when new.
  std::pair<uint32_t, bool> number(uint32_t id) {
    if (of[id] != kNone)
      return {of[id], false};
    used.push_back(id);
    return {of[id] = static_cast<uint32_t>(used.size() - 1), true};
  }
};

} // namespace

bool wideFirstByte(const Program &program, const Key &key) {
  return key[0] == 1 && wideSet(program, key[1]);
}

bool canonicalKey(const Program &program, const Key &key, uint32_t horizon,
                  std::string &out) {
  // Beyond these the key is one grammar's own (a whole object's members):
  // walking it per grammar costs less than writing it out.
  constexpr size_t kMaxRules = 256, kMaxBytes = 4096;
  out.clear();
  // Rules by the fewest bytes before them, numbered in the order met: what
  // lies past `horizon` bytes no token reaches, and is left out (a string
  // of at most 200 characters reads the same as one of 300).
  // Scratch kept per thread: a key's canonical form is made at the first
  // use of every key, mid-mask.
  static thread_local Numbering index, setIndex; // rules, byte sets
  static thread_local std::vector<std::vector<uint32_t>> pending; // by distance
  index.reset(program.ruleStarts.size());
  setIndex.reset(program.sets.size());
  for (auto &b : pending)
    b.clear();
  if (pending.size() < size_t(horizon) + 1)
    pending.resize(size_t(horizon) + 1);
  std::vector<uint32_t> distance; // by number
  std::vector<char> done;         // by number
  auto put32 = [&](uint32_t v) { out.append(reinterpret_cast<char *>(&v), 4); };
  // A wide first byte set is left out: keys that differ only there (an
  // other key's first character, never a listed name's) share one walk,
  // its tokens then filtered by their first byte (firstByteIn()).
  bool first = wideFirstByte(program, key);
  auto sequence = [&](uint32_t p, uint64_t at) {
    for (;; ++p) {
      const Program::Pos &pos = program.pos[p];
      if (pos.kind == Program::End || out.size() > kMaxBytes) {
        out += 'E';
        return;
      }
      if (at > horizon) {
        out += 'X';
        return;
      }
      if (pos.kind == Program::Bytes && first) {
        first = false;
        out += 'W';
        ++at;
        continue;
      }
      if (pos.kind == Program::Bytes) {
        // A set's bits at its first use, its number after.
        auto [number, fresh] = setIndex.number(pos.arg);
        out += fresh ? 'b' : 's';
        if (fresh)
          out.append(reinterpret_cast<const char *>(&program.sets[pos.arg]),
                     sizeof(ByteSet)); // compared within this process only
        else
          put32(number);
        ++at;
        continue;
      }
      // Distances are at most the horizon (checked above): a bucket queue.
      auto [number, fresh] = index.number(pos.arg);
      const uint32_t d = static_cast<uint32_t>(at);
      if (fresh) {
        distance.push_back(d);
        done.push_back(0);
        pending[d].push_back(number);
      } else if (d < distance[number] && !done[number]) {
        distance[number] = d; // its entry further on is skipped
        pending[d].push_back(number);
      }
      out += 'r';
      put32(number);
      at += program.minBytes[pos.arg];
    }
  };
  // The top group: each sibling's sequence; the frames below start after
  // the shortest of them.
  uint64_t at = UINT32_MAX;
  for (size_t i = 1; i <= key[0]; ++i) {
    out += 'T';
    sequence(key[i], 0);
    at = std::min<uint64_t>(at, program.minBytesFrom(key[i]));
  }
  for (size_t i = 1 + key[0]; i < key.size(); ++i) {
    const uint32_t p = key[i];
    if (p == kEndsAtRoot) {
      out += 'R';
      continue;
    }
    out += 'F';
    sequence(p, at);
    at = std::min<uint64_t>(at + program.minBytesFrom(p), UINT32_MAX);
  }
  for (uint32_t d = 0; d <= horizon; ++d)
    for (size_t j = 0; j < pending[d].size(); ++j) { // grows meanwhile
      const uint32_t number = pending[d][j];
      if (done[number] || distance[number] != d)
        continue;
      if (index.used.size() > kMaxRules || out.size() > kMaxBytes)
        return false;
      done[number] = 1;
      out += 'A';
      put32(number);
      for (uint32_t start : program.ruleStarts[index.used[number]])
        sequence(start, d);
    }
  return out.size() <= kMaxBytes;
}

std::shared_ptr<const KeyMasks>
CompiledGrammar::Impl::compute(const Key &key, bool anyFirstByte) const {
  Pda pda(program);
  const size_t frames = frameCount(key);
  NodeId n = key.back() == kEndsAtRoot ? Pda::kRoot : Pda::kOut;
  for (size_t j = frames; j-- > 1;)
    n = pda.node(framePos(key, j), n);
  // With anyFirstByte (one top), every first byte goes where the key's
  // first set leads.
  const StateId afterFirst =
      anyFirstByte ? pda.stateOf(pda.node(key[1] + 1, n)) : Pda::kDead;
  std::vector<NodeId> tops;
  for (size_t i = 1; i <= key[0]; ++i)
    tops.push_back(pda.node(key[i], n));
  const auto &trie = vocab.trie();
  const auto &trieTokens = vocab.trieTokens();
  std::vector<StateId> at(vocab.maxTokenBytes() + 1);
  at[0] = pda.stateOfTerminals(std::move(tops));
  TokenMask bits(vocab.size());
  size_t count = 0;
  auto accept = [&](uint32_t from, uint32_t to) {
    for (uint32_t k = from; k < to; ++k)
      bits.set(trieTokens[k]);
    count += to - from;
  };
  std::vector<std::pair<int32_t, uint32_t>> uncertain;
  const auto &below = vocab.bytesBelow();
  // Whether every string of `bytes` of at most `height` bytes keeps `s`
  // alive: then every token under a trie node in `s` is accepted (whether
  // it may also leave the key's frames no longer matters). Cheap where few
  // states follow: a string's content loops in one, a counted repetition
  // (x{0,32}) steps along a chain; gives up past kMaxStates.
  std::vector<StateId> frontier, following, seen;
  auto staysAlive = [&](StateId s, const TokenVocabulary::ByteBits &bytes,
                        uint32_t height) {
    constexpr size_t kMaxStates = 16;
    frontier.assign(1, s);
    seen.assign(1, s);
    for (uint32_t level = 0; level < height && !frontier.empty(); ++level) {
      following.clear();
      for (StateId f : frontier) {
        // A byte the state does not take dies: no transition to compute.
        const auto &takes = pda.state(f).bytes;
        for (unsigned w = 0; w < 4; ++w)
          if (bytes[w] & ~takes[w])
            return false;
        for (unsigned w = 0; w < 4; ++w)
          for (uint64_t b = bytes[w]; b; b &= b - 1) {
            const StateId t =
                pda.next(f, static_cast<uint8_t>(w * 64 + __builtin_ctzll(b)));
            if (t == Pda::kDead)
              return false;
            if (std::find(seen.begin(), seen.end(), t) != seen.end())
              continue;
            if (seen.size() == kMaxStates)
              return false;
            seen.push_back(t);
            following.push_back(t);
          }
      }
      frontier.swap(following);
    }
    return true;
  };
  // Inside a string (a URI, a pattern): each token under the node by its
  // run of the class along the chain, then byte by byte from where the run
  // leaves it.
  std::array<RunChain, TokenVocabulary::kRunClasses> chains = {
      RunChain(pda, TokenVocabulary::Plain),
      RunChain(pda, TokenVocabulary::Alnum)};
  std::vector<uint32_t> exits; // a token's offsets in exited states
  auto byRuns = [&](const TokenVocabulary::TrieNode &t, const RunChain &chain) {
    const auto &states = chain.states();
    const auto &runFrom = vocab.trieTokenRunFrom(chain.runClass());
    // A token that dies is uncertain wherever it was in an exited state:
    // on the chain, its first `passed` states.
    auto rejected = [&](int32_t id, size_t passed) {
      if (chain.anyExited())
        for (size_t j = 0; j < passed; ++j)
          if (pda.flags(chain.after(j)) & Pda::kExited)
            uncertain.emplace_back(id, t.depth + static_cast<uint32_t>(j));
      for (uint32_t e : exits)
        uncertain.emplace_back(id, e);
    };
    for (uint32_t k = t.tokenBegin; k < trie[t.subtreeEnd - 1].tokenEnd; ++k) {
      const int32_t id = trieTokens[k];
      const char *b = vocab.trieTokenData(k);
      const uint32_t len = vocab.trieTokenSize(k);
      uint32_t q = t.depth, run = len;
      if (runFrom[k] > q)
        for (run = q; TokenVocabulary::inRun(chain.runClass(),
                                             static_cast<uint8_t>(b[run]));)
          ++run;
      size_t steps = run - q;
      exits.clear();
      if (chain.end() != RunChain::Loops && steps >= states.size()) {
        if (chain.end() == RunChain::Dies) {
          rejected(id, states.size());
          continue;
        }
        steps = states.size() - 1;
      }
      StateId at = chain.after(steps);
      for (q += static_cast<uint32_t>(steps);; ++q) {
        if (q == len) {
          bits.set(id);
          ++count;
          break;
        }
        if (pda.flags(at) & Pda::kExited)
          exits.push_back(q);
        at = pda.next(at, static_cast<uint8_t>(b[q]));
        if (at == Pda::kDead) {
          rejected(id, steps);
          break;
        }
      }
    }
  };
  // Checked on large subtrees only: a check that fails (a long token
  // where the repetition runs out) costs more than walking a small one.
  constexpr uint32_t kCheckNodes = 256, kChainNodes = 16;
  for (size_t i = 0; i < trie.size();) {
    const TokenVocabulary::TrieNode &t = trie[i];
    const StateId s = anyFirstByte && t.depth == 1
                          ? afterFirst
                          : pda.next(at[t.depth - 1], t.byte);
    if (s == Pda::kDead) {
      i = t.subtreeEnd;
      continue;
    }
    at[t.depth] = s;
    if (t.subtreeEnd - i >= kChainNodes) {
      const size_t maxSteps = vocab.maxTokenBytes() - t.depth;
      RunChain *chain = nullptr;
      for (RunChain &c : chains)
        if (!chain && c.follow(s, maxSteps))
          chain = &c;
      if (chain) {
        byRuns(t, *chain);
        i = t.subtreeEnd;
        continue;
      }
    }
    if (t.subtreeEnd - i >= kCheckNodes && staysAlive(s, below[i], t.height)) {
      accept(t.tokenBegin, trie[t.subtreeEnd - 1].tokenEnd);
      i = t.subtreeEnd;
      continue;
    }
    accept(t.tokenBegin, t.tokenEnd);
    const uint8_t flags = pda.flags(s);
    if ((flags & Pda::kExited) && t.subtreeEnd > i + 1)
      for (uint32_t k = t.tokenEnd; k < trie[t.subtreeEnd - 1].tokenEnd; ++k)
        uncertain.emplace_back(trieTokens[k], t.depth);
    i = (flags & Pda::kGoesOn) ? i + 1 : t.subtreeEnd;
  }
  auto m = std::make_shared<KeyMasks>();
  std::erase_if(uncertain, [&](const auto &u) { return bits.test(u.first); });
  m->uncertain = std::move(uncertain);
  storeAccepted(*m, std::move(bits), count);
  return m;
}

std::shared_ptr<const KeyMasks>
CompiledGrammar::Impl::shared(const Key &key, const std::string &canonical,
                              bool &computed) const {
  TokenVocabulary::SharedKeyMasks &cache = vocab.sharedKeyMasks();
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.masks.find(canonical);
    if (it != cache.masks.end())
      return it->second;
  }
  // Computed outside the locks: another thread may do the same key at
  // once; the first to insert wins and both answers are equal.
  std::shared_ptr<const KeyMasks> m =
      compute(key, /*anyFirstByte=*/wideFirstByte(program, key));
  computed = true;
  const size_t bytes =
      canonical.size() + m->acceptedBits.size() * sizeof(uint64_t) +
      m->acceptedList.size() * sizeof(int32_t) + m->uncertain.size() * 8;
  std::lock_guard<std::mutex> lock(cache.mutex);
  if (cache.bytes + bytes > TokenVocabulary::SharedKeyMasks::kMaxBytes) {
    // Full: start again (grammars keep the masks they took).
    cache.masks.clear();
    cache.bytes = 0;
  }
  if (cache.masks.emplace(canonical, m).second)
    cache.bytes += bytes;
  return m;
}

std::shared_ptr<const KeyMasks>
CompiledGrammar::Impl::firstByteIn(const KeyMasks &all,
                                   const ByteSet &first) const {
  auto m = std::make_shared<KeyMasks>();
  auto keep = [&](int32_t id) {
    return first.test(static_cast<uint8_t>(vocab.bytes(id)[0]));
  };
  const auto &trie = vocab.trie();
  const auto &trieTokens = vocab.trieTokens();
  if (!all.acceptedBits.empty()) {
    // Tokens by first byte are runs of the trie's order: only those runs,
    // the ones kept or (a wide set: usually fewer) the ones dropped.
    size_t kept = 0, dropped = 0;
    for (size_t i = 0; i < trie.size(); i = trie[i].subtreeEnd)
      (first.test(trie[i].byte) ? kept : dropped) +=
          trie[trie[i].subtreeEnd - 1].tokenEnd - trie[i].tokenBegin;
    const bool keepTested = kept <= dropped;
    TokenMask bits(vocab.size());
    if (!keepTested)
      bits.words() = all.acceptedBits;
    for (size_t i = 0; i < trie.size(); i = trie[i].subtreeEnd) {
      if (first.test(trie[i].byte) != keepTested)
        continue;
      for (uint32_t k = trie[i].tokenBegin;
           k < trie[trie[i].subtreeEnd - 1].tokenEnd; ++k) {
        const int32_t id = trieTokens[k];
        if (!keepTested)
          bits.reset(id);
        else if ((all.acceptedBits[static_cast<size_t>(id) >> 6] >> (id & 63)) &
                 1)
          bits.set(id);
      }
    }
    const size_t count = static_cast<size_t>(bits.count());
    storeAccepted(*m, std::move(bits), count);
  }
  for (int32_t id : all.acceptedList)
    if (keep(id))
      m->acceptedList.push_back(id);
  for (const auto &u : all.uncertain)
    if (keep(u.first))
      m->uncertain.push_back(u);
  return m;
}

std::shared_ptr<const KeyMasks>
CompiledGrammar::Impl::extend(const KeyMasks &top, const Key &key,
                              size_t depth) const {
  Pda pda(program);
  const size_t frames = frameCount(key);
  NodeId n = key.back() == kEndsAtRoot ? Pda::kRoot : Pda::kOut;
  for (size_t j = frames; j-- > depth;)
    n = pda.node(framePos(key, j), n);
  const StateId from = pda.stateOf(n);
  auto m = std::make_shared<KeyMasks>();
  TokenMask bits(vocab.size());
  if (!top.acceptedBits.empty())
    bits.words() = top.acceptedBits;
  for (int32_t id : top.acceptedList)
    bits.set(id);
  // A token that left the top frames goes on in the frames below them.
  for (const auto &[id, offset] : top.uncertain) {
    const std::string &b = vocab.bytes(id);
    StateId s = from;
    for (size_t i = offset; i < b.size() && s != Pda::kDead; ++i) {
      if (pda.state(s).exited)
        m->uncertain.emplace_back(id, static_cast<uint32_t>(i));
      s = pda.next(s, static_cast<uint8_t>(b[i]));
    }
    if (s != Pda::kDead)
      bits.set(id);
  }
  std::erase_if(m->uncertain,
                [&](const auto &u) { return bits.test(u.first); });
  const size_t count = static_cast<size_t>(bits.count());
  storeAccepted(*m, std::move(bits), count);
  return m;
}

const KeyMasks &CompiledGrammar::Impl::masksFor(const Key &key) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = keys.find(key);
    if (it != keys.end())
      return *it->second;
  }
  // Another grammar over this vocabulary may have met the same key, or
  // its top frames (a string's content inside a schema's own object): then
  // only the tokens leaving those frames are walked here.
  std::shared_ptr<const KeyMasks> m;
  bool computed = false;
  std::string canonical;
  const size_t frames = frameCount(key);
  // The top frames up to the first below the top that goes on with a byte,
  // after rules that may be empty (a string's closing quote, a key's colon):
  // what most keys share. Not one that goes on with a rule (a
  // length-bounded string's remaining characters): most tokens would leave
  // the key there.
  size_t depth = 2;
  auto goesOnWithByte = [&](uint32_t pos) {
    while (program.pos[pos].kind == Program::Rule &&
           program.minBytes[program.pos[pos].arg] == 0)
      ++pos;
    return program.pos[pos].kind == Program::Bytes;
  };
  while (depth < frames && !goesOnWithByte(framePos(key, depth - 1)))
    ++depth;
  const Key top =
      depth >= frames
          ? key
          : Key(key.begin(),
                key.begin() + static_cast<std::ptrdiff_t>(key[0] + depth));
  const uint32_t horizon = static_cast<uint32_t>(vocab.maxTokenBytes());
  if (top.size() < key.size()) {
    // The top's masks are this grammar's too, shared by the keys below it
    // (an object's other keys at each of its positions) where no other
    // grammar has them.
    const KeyMasks &t = masksFor(top);
    if (t.uncertain.size() <= kMaxExtended) {
      m = extend(t, key, depth);
      computed = true; // the tokens leaving the top walked here
    }
  } else if (canonicalKey(program, top, horizon, canonical)) {
    m = shared(top, canonical, computed);
    if (wideFirstByte(program, key))
      m = firstByteIn(*m, program.sets[program.pos[key[1]].arg]);
  }
  if (!m) {
    m = compute(key, /*anyFirstByte=*/false);
    computed = true;
  }
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, fresh] = keys.try_emplace(key, std::move(m));
  if (fresh) {
    ++(computed ? stats.keys : stats.sharedKeys);
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
    for (const std::vector<NodeId> &group :
         siblingGroups(pda, pda.state(s).nodes)) {
      NodeId outer;
      impl_->masksFor(keyOf(pda, group, outer));
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
