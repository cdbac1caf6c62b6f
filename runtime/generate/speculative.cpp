//===- speculative.cpp - The acceptance rule and one sequence's speculation
//===//
#include "llmc/runtime/speculative.h"

#include "llmc/support/error.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace llmc {

double SpecStats::acceptanceRate() const {
  return proposed > 0
             ? static_cast<double>(accepted) / static_cast<double>(proposed)
             : 0;
}

double SpecStats::meanAcceptedLength() const {
  return verifySteps > 0 ? static_cast<double>(accepted + verifySteps) /
                               static_cast<double>(verifySteps)
                         : 0;
}

SpecStats &SpecStats::operator+=(const SpecStats &o) {
  verifySteps += o.verifySteps;
  proposed += o.proposed;
  accepted += o.accepted;
  pausedSteps += o.pausedSteps;
  proposeSeconds += o.proposeSeconds;
  verifySeconds += o.verifySeconds;
  return *this;
}

namespace spec {

Method parseMethod(const std::string &name) {
  if (name == "ngram")
    return Method::Ngram;
  if (name == "draft")
    return Method::Draft;
  throw Error("--speculative must be ngram or draft, got '" + name + "'");
}

const char *methodName(Method method) {
  switch (method) {
  case Method::Ngram:
    return "ngram";
  case Method::Draft:
    return "draft";
  case Method::None:
    break;
  }
  return "";
}

void SpeculativeOptions::validate() const {
  if (method == Method::None)
    return;
  if (numTokens < 1 || numTokens > kMaxSpeculativeTokens)
    throw Error("--num-speculative-tokens must be in [1, " +
                std::to_string(kMaxSpeculativeTokens) + "], got " +
                std::to_string(numTokens));
  if (method == Method::Ngram && (ngramMax < 1 || ngramMax > 64))
    throw Error("--ngram-max must be in [1, 64], got " +
                std::to_string(ngramMax));
}

double TokenProbs::at(int32_t id) const {
  auto it = std::lower_bound(ids.begin(), ids.end(), id);
  return it != ids.end() && *it == id
             ? probs[static_cast<size_t>(it - ids.begin())]
             : 0.0;
}

Proposer::~Proposer() = default;
void Proposer::release(uint64_t) {}

namespace {

/// A draw from weights w over ids (not normalised); strict < so a zero
/// weight is never chosen.
int32_t draw(const std::vector<int32_t> &ids, const std::vector<double> &w,
             double total, sample::Rng &rng) {
  const double target = rng.uniform() * total;
  double cum = 0;
  int32_t last = ids.front();
  for (size_t i = 0; i < ids.size(); ++i) {
    if (w[i] <= 0)
      continue;
    cum += w[i];
    last = ids[i];
    if (target < cum)
      return ids[i];
  }
  return last; // rounding only
}

} // namespace

TokenProbs distributionOf(const sample::Candidates &c) {
  TokenProbs p;
  p.ids.reserve(c.size());
  p.probs.reserve(c.size());
  double mx = -INFINITY;
  for (const sample::Candidate &x : c)
    mx = std::max(mx, static_cast<double>(x.logit));
  double total = 0;
  for (const sample::Candidate &x : c) {
    p.ids.push_back(x.id);
    p.probs.push_back(std::exp(static_cast<double>(x.logit) - mx));
    total += p.probs.back();
  }
  for (double &v : p.probs)
    v /= total;
  return p;
}

int32_t drawFrom(const TokenProbs &p, sample::Rng &rng) {
  if (p.ids.empty())
    throw Error("internal error: a draw from an empty distribution");
  return draw(p.ids, p.probs, 1.0, rng);
}

int32_t acceptOrResample(const TokenProbs &p, const TokenProbs *q, int32_t x,
                         sample::Rng &rng, bool &accepted) {
  const double px = p.at(x), qx = q ? q->at(x) : 1.0;
  // A proposer only proposes what its own q allows; were qx 0 the ratio
  // would be infinite: accept what the target allows.
  const double ratio = qx > 0 ? px / qx : (px > 0 ? 1.0 : 0.0);
  accepted = rng.uniform() < std::min(1.0, ratio);
  if (accepted)
    return x;
  std::vector<double> residual(p.ids.size());
  double total = 0;
  for (size_t i = 0; i < p.ids.size(); ++i) {
    const double qy = q ? q->at(p.ids[i]) : (p.ids[i] == x ? 1.0 : 0.0);
    total += residual[i] = std::max(0.0, p.probs[i] - qy);
  }
  if (!(total > 0)) // p == q: the residual is empty, p itself is right
    return draw(p.ids, p.probs, 1.0, rng);
  return draw(p.ids, residual, total, rng);
}

Verdict verify(RequestState &state, std::span<const float> rows,
               std::span<const int32_t> drafts, std::span<const TokenProbs> q) {
  const size_t n = drafts.size() + 1;
  if (rows.empty() || rows.size() % n != 0)
    throw Error("internal error: " + std::to_string(rows.size()) +
                " logits do not make " + std::to_string(n) + " rows");
  if (!q.empty() && q.size() != drafts.size())
    throw Error("internal error: a proposal's distributions do not match its "
                "tokens");
  const size_t V = rows.size() / n;
  sample::Sampler &sampler = state.sampler();
  const bool greedy = sampler.params().greedy();
  // The penalties see the drafts accepted so far as generated tokens.
  std::vector<int32_t> history = state.outputIds();
  // With a grammar each row is masked by the grammar's state after the
  // drafts before it: a copy of the matcher walks the drafts.
  std::optional<grammar::Matcher> probe;
  if (state.matcher())
    probe.emplace(*state.matcher());
  Verdict v;
  for (size_t i = 0; i < n; ++i) {
    std::span<const float> row = rows.subspan(i * V, V);
    if (probe) {
      // The drafts so far end the text: the request stops there.
      if (probe->ended() || probe->mustEnd())
        break;
      row = state.constrain(row, *probe);
      if (row.empty()) // a dead end: the next plain step ends the request
        break;
    }
    const sample::Candidates &c = sampler.process(row, state.prompt(), history);
    const bool last = i == drafts.size();
    int32_t t;
    bool accepted = false;
    if (greedy) {
      t = sample::argmax(c);
      accepted = !last && t == drafts[i];
    } else if (last) {
      t = sample::drawCandidate(c, sampler.rng().uniform());
    } else {
      t = acceptOrResample(distributionOf(c), q.empty() ? nullptr : &q[i],
                           drafts[i], sampler.rng(), accepted);
    }
    v.tokens.push_back(t);
    if (!accepted)
      break;
    ++v.accepted;
    history.push_back(t);
    if (probe && !probe->accept(t))
      throw Error("internal error: an accepted draft is not allowed by the "
                  "grammar");
  }
  return v;
}

bool Throttle::active() {
  if (pause_ > 0) {
    --pause_;
    return false;
  }
  return true;
}

void Throttle::plainStep(double seconds) {
  plainSeconds_ =
      plainSeconds_ > 0 ? 0.8 * plainSeconds_ + 0.2 * seconds : seconds;
}

void Throttle::record(int32_t proposed, int32_t accepted, double seconds) {
  window_.push_back({proposed, accepted, seconds});
  if (window_.size() > static_cast<size_t>(kWindow))
    window_.erase(window_.begin());
  // A full window decides; so do two verifications that accepted nothing,
  // and after a pause one verification of a single draft (a cheap probe):
  // a workload that never accepts pays two verifications once, then a probe
  // per pause.
  int64_t p = 0, a = 0;
  double t = 0;
  for (const Try &w : window_) {
    p += w.proposed;
    a += w.accepted;
    t += w.seconds;
  }
  const size_t judge = probing_ ? 1 : a == 0 ? 2 : size_t(kWindow);
  if (window_.size() < judge)
    return;
  // Tokens per second speculating (each verification yields its accepted
  // drafts and the target's token) against plain decoding's.
  const double tokens =
      static_cast<double>(a) + static_cast<double>(window_.size());
  const bool pays =
      plainSeconds_ > 0 && t > 0
          ? tokens / t >= 1.0 / plainSeconds_
          : static_cast<double>(a) >= kBreakEven * static_cast<double>(p);
  if (!pays) {
    pause_ = nextPause_;
    nextPause_ = std::min(2 * nextPause_, kMaxPause);
    window_.clear();
    probing_ = true;
  } else if (probing_) {
    probing_ = false; // the probe paid: back to full proposals
    window_.clear();
  } else {
    nextPause_ = kFirstPause;
  }
}

SpecSequence::SpecSequence(Proposer &proposer,
                           const SpeculativeOptions &options, uint64_t key)
    : proposer_(proposer), options_(options) {
  proposal_.key = key;
}

SpecSequence::~SpecSequence() { proposer_.release(proposal_.key); }

void SpecSequence::forget() { proposer_.release(proposal_.key); }

Proposal *SpecSequence::want(const RequestState &state,
                             std::span<const int32_t> context, int64_t room) {
  fed_.clear();
  if (!options_.enabled() || state.finished() || context.empty())
    return nullptr;
  // A step yields at most drafts + 1 tokens: more drafts than the request
  // may still generate minus one could never be used.
  const int64_t k = std::min<int64_t>(
      {options_.numTokens, room, state.remainingTokens() - 1});
  if (k <= 0)
    return nullptr;
  if (options_.adaptive && !throttle_.active()) {
    ++stats_.pausedSteps;
    return nullptr;
  }
  proposal_.context = context;
  proposal_.promptLength = state.prompt().size();
  proposal_.maxTokens =
      options_.adaptive && throttle_.probing() ? 1 : static_cast<int32_t>(k);
  proposal_.sampling = &state.options().sampling;
  proposal_.tokens.clear();
  proposal_.q.clear();
  fed_.push_back(context.back());
  return &proposal_;
}

std::span<const int32_t> SpecSequence::fed() {
  if (fed_.size() == 1 + proposal_.tokens.size())
    return fed_;
  const int32_t last = fed_.empty() ? proposal_.context.back() : fed_.front();
  fed_.assign(1, last);
  fed_.insert(fed_.end(), proposal_.tokens.begin(), proposal_.tokens.end());
  return fed_;
}

void SpecSequence::finishStep(double seconds) {
  if (lastProposed_ > 0)
    throttle_.record(lastProposed_, lastAccepted_, seconds);
  else
    throttle_.plainStep(seconds);
  lastProposed_ = lastAccepted_ = 0;
}

void SpecSequence::shrink(size_t n) {
  if (proposal_.tokens.size() > n)
    proposal_.tokens.resize(n);
  if (proposal_.q.size() > n)
    proposal_.q.resize(n);
  fed_.resize(std::min(fed_.size(), n + 1));
}

int64_t SpecSequence::settle(RequestState &state, std::span<const float> rows,
                             double verifySeconds) {
  const std::span<const int32_t> drafts(proposal_.tokens);
  Verdict v = verify(state, rows, drafts, proposal_.q);
  const size_t V = rows.size() / (drafts.size() + 1);
  pushed_.clear();
  for (size_t i = 0; i < v.tokens.size() && !state.finished(); ++i) {
    state.push(v.tokens[i], rows.subspan(i * V, V));
    pushed_.push_back(v.tokens[i]);
  }
  lastProposed_ = static_cast<int32_t>(drafts.size());
  lastAccepted_ = v.accepted;
  if (!drafts.empty()) {
    ++stats_.verifySteps;
    stats_.proposed += static_cast<int64_t>(drafts.size());
    stats_.accepted += v.accepted;
    stats_.verifySeconds += verifySeconds;
  }
  proposal_.tokens.clear();
  proposal_.q.clear();
  fed_.clear();
  return 1 + v.accepted;
}

} // namespace spec
} // namespace llmc
