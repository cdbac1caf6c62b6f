//===- beam_search.cpp - HF-style beam search over forked sequences
//--------===//
//
// The rules are those of transformers' BeamSearchScorer (beam.h lists them).
// What is llmc's own is the bookkeeping: a beam is an engine sequence, a beam
// that continues from parent p is p itself (first child) or a fork of p
// (later children), so all beams share the prompt's blocks and whatever
// prefix they have in common; dead beams are released before forks are made,
// which keeps the blocks in use within numBeams sequences' worth.
//
//===----------------------------------------------------------------------===//

#include "llmc/runtime/beam.h"

#include "llmc/support/error.h"
#include "llmc/support/memory.h"

#include <algorithm>
#include <cmath>

namespace llmc {

void BeamOptions::validate() const {
  if (numBeams < 1)
    throw Error("--num-beams must be >= 1, got " + std::to_string(numBeams));
  if (numReturnSequences < 1 || numReturnSequences > numBeams)
    throw Error("--num-return-sequences must be in [1, --num-beams = " +
                std::to_string(numBeams) + "], got " +
                std::to_string(numReturnSequences));
  if (!std::isfinite(lengthPenalty))
    throw Error("--length-penalty must be a finite number");
  if (maxNewTokens < 0)
    throw Error("--max-new-tokens must be >= 0, got " +
                std::to_string(maxNewTokens));
  penalties.validate();
  // Beam search ranks by log-probability; warpers that reshape or truncate
  // a sampling distribution have no defined meaning here (HF only applies
  // them in beam *sampling*, which llmc does not offer).
  if (!penalties.greedy())
    throw Error("beam search is deterministic: drop --temperature (or set "
                "it to 0)");
  if (penalties.topK != 0 || penalties.topP != 1.0f || penalties.minP != 0.0f)
    throw Error("beam search is deterministic: drop --top-k, --top-p and "
                "--min-p");
}

namespace {

/// HF BeamHypotheses: the numBeams best finished hypotheses.
class Hypotheses {
public:
  Hypotheses(const BeamOptions &o, int64_t maxLen) : o_(o), maxLen_(maxLen) {}

  void add(std::vector<int32_t> ids, double sum, int64_t genLen,
           FinishReason reason) {
    double score = sum / std::pow(static_cast<double>(genLen),
                                  static_cast<double>(o_.lengthPenalty));
    if (static_cast<int32_t>(beams_.size()) < o_.numBeams || score > worst_) {
      BeamHypothesis h;
      h.outputIds = std::move(ids);
      h.score = score;
      h.sumLogprobs = sum;
      h.finishReason = reason;
      beams_.push_back(std::move(h));
      if (static_cast<int32_t>(beams_.size()) > o_.numBeams) {
        // Drop the worst; the new worst is the second worst.
        std::vector<size_t> order(beams_.size());
        for (size_t i = 0; i < order.size(); ++i)
          order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
          return beams_[a].score < beams_[b].score;
        });
        worst_ = beams_[order[1]].score;
        beams_.erase(beams_.begin() + static_cast<std::ptrdiff_t>(order[0]));
      } else {
        worst_ = std::min(score, worst_);
      }
    }
  }

  bool isDone(double bestSum, int64_t curLen) const {
    if (static_cast<int32_t>(beams_.size()) < o_.numBeams)
      return false;
    switch (o_.earlyStopping) {
    case EarlyStopping::True:
      return true;
    case EarlyStopping::Never:
      if (o_.lengthPenalty > 0)
        return worst_ >= bestSum / std::pow(static_cast<double>(maxLen_),
                                            o_.lengthPenalty);
      [[fallthrough]];
    case EarlyStopping::False:
      return worst_ >=
             bestSum / std::pow(static_cast<double>(curLen), o_.lengthPenalty);
    }
    return false;
  }

  std::vector<BeamHypothesis> best(int32_t n) {
    std::stable_sort(beams_.begin(), beams_.end(),
                     [](const BeamHypothesis &a, const BeamHypothesis &b) {
                       return a.score > b.score;
                     });
    if (static_cast<int32_t>(beams_.size()) > n)
      beams_.resize(static_cast<size_t>(n));
    return std::move(beams_);
  }

private:
  const BeamOptions &o_;
  int64_t maxLen_;
  std::vector<BeamHypothesis> beams_;
  double worst_ = 1e9;
};

struct Beam {
  int32_t seq;
  std::vector<int32_t> tokens;
  double sum;
};

struct Candidate {
  double sum;
  int32_t beam, token;
};

bool better(const Candidate &a, const Candidate &b) {
  if (a.sum != b.sum)
    return a.sum > b.sum;
  if (a.beam != b.beam)
    return a.beam < b.beam;
  return a.token < b.token;
}

/// The `keep` best (beam, token) pairs of one beam's row.
void topCandidates(std::span<const float> logits, const Beam &beam,
                   int32_t beamIndex, const std::vector<int32_t> &prompt,
                   const sample::SamplingParams &p, size_t keep,
                   std::vector<Candidate> &out) {
  std::vector<float> lp = sample::logSoftmax(logits);
  bool penalised = p.repetitionPenalty != 1.0f || p.presencePenalty != 0.0f ||
                   p.frequencyPenalty != 0.0f;
  if (penalised) {
    // HF runs its processors on log_softmax output in beam search.
    sample::Candidates c(lp.size());
    for (size_t i = 0; i < lp.size(); ++i)
      c[i] = {static_cast<int32_t>(i), lp[i]};
    sample::applyRepetitionPenalty(c, prompt, beam.tokens, p.repetitionPenalty);
    sample::applyPresenceFrequencyPenalty(c, beam.tokens, p.presencePenalty,
                                          p.frequencyPenalty);
    for (const sample::Candidate &x : c)
      lp[static_cast<size_t>(x.id)] = x.logit;
  }
  std::vector<Candidate> row(lp.size());
  for (size_t i = 0; i < lp.size(); ++i)
    row[i] = {beam.sum + static_cast<double>(lp[i]), beamIndex,
              static_cast<int32_t>(i)};
  keep = std::min(keep, row.size());
  std::partial_sort(row.begin(),
                    row.begin() + static_cast<std::ptrdiff_t>(keep), row.end(),
                    better);
  out.insert(out.end(), row.begin(),
             row.begin() + static_cast<std::ptrdiff_t>(keep));
}

} // namespace

BeamResult beamSearch(Engine &engine, const tok::Tokenizer *tokenizer,
                      const std::vector<int32_t> &prompt,
                      const BeamOptions &options) {
  options.validate();
  checkPrompt(engine, prompt);
  const int64_t vocab = engine.vocabSize();
  const auto V = static_cast<size_t>(vocab);
  const int32_t B = options.numBeams;
  RequestOptions limits;
  limits.maxNewTokens = options.maxNewTokens;
  limits.eosIds = options.eosIds;
  auto isEos = [&](int32_t t) { return limits.isEos(t); };
  int32_t eosInVocab = 0;
  for (int64_t e : options.eosIds)
    eosInVocab += e >= 0 && e < vocab;
  const size_t keep =
      static_cast<size_t>(std::max(2, 1 + eosInVocab)) * static_cast<size_t>(B);
  // The length rules of every request (generate() stops the same way).
  const int64_t P = static_cast<int64_t>(prompt.size());
  const TokenBudget budget =
      tokenBudget(options.maxNewTokens, P, engine.contextLength());
  const int64_t maxSteps = budget.tokens;
  const FinishReason endReason = budget.reason;

  BeamResult result;
  Hypotheses hyps(options, std::max<int64_t>(maxSteps, 1));
  std::vector<float> logits(V);
  RequestClock clock; // a "token" is a step of every beam
  std::vector<Beam> running;
  running.push_back({engine.newSequence(), {}, 0.0});
  engine.prefill(running[0].seq, prompt, logits.data());
  const int32_t bs = engine.blockSize();
  auto noteBlocks = [&] {
    int32_t used = engine.numBlocks() - engine.freeBlocks();
    int32_t unshared = 0;
    for (const Beam &b : running)
      unshared += static_cast<int32_t>((engine.length(b.seq) + bs - 1) / bs);
    result.stats.peakBlocksUsed = std::max(result.stats.peakBlocksUsed, used);
    result.stats.peakBlocksUnshared =
        std::max(result.stats.peakBlocksUnshared, unshared);
  };
  noteBlocks();

  if (maxSteps <= 0) {
    BeamHypothesis h;
    h.finishReason = endReason;
    result.hypotheses.push_back(h);
  }
  std::vector<Candidate> cands;
  for (int64_t t = 1; t <= maxSteps; ++t) {
    cands.clear();
    for (size_t b = 0; b < running.size(); ++b)
      topCandidates(std::span<const float>(logits.data() + b * V, V),
                    running[b], static_cast<int32_t>(b), prompt,
                    options.penalties, keep, cands);
    std::sort(cands.begin(), cands.end(), better);
    if (cands.size() > keep)
      cands.resize(keep);

    struct Next {
      int32_t parent, token;
      double sum;
    };
    std::vector<Next> next;
    for (size_t rank = 0; rank < cands.size(); ++rank) {
      const Candidate &c = cands[rank];
      if (isEos(c.token)) {
        // HF: an EOS outside the top numBeams does not finish a hypothesis.
        if (rank >= static_cast<size_t>(B))
          continue;
        std::vector<int32_t> ids = running[static_cast<size_t>(c.beam)].tokens;
        ids.push_back(c.token);
        hyps.add(std::move(ids), c.sum, t, FinishReason::Eos);
      } else {
        next.push_back({c.beam, c.token, c.sum});
      }
      if (static_cast<int32_t>(next.size()) == B)
        break;
    }
    clock.token();
    bool done = hyps.isDone(cands.front().sum, t);
    if (!done && (t == maxSteps || next.empty())) {
      for (const Next &n : next) {
        std::vector<int32_t> ids =
            running[static_cast<size_t>(n.parent)].tokens;
        ids.push_back(n.token);
        hyps.add(std::move(ids), n.sum, t, endReason);
      }
      done = true;
    }
    if (done)
      break;

    // Beams without children die first, so their blocks are free before
    // the children fork and copy-on-write.
    std::vector<int32_t> children(running.size(), 0);
    for (const Next &n : next)
      ++children[static_cast<size_t>(n.parent)];
    for (size_t b = 0; b < running.size(); ++b)
      if (children[b] == 0)
        engine.releaseSequence(running[b].seq);
    std::vector<Beam> grown;
    std::vector<int32_t> seqs, tokens;
    for (const Next &n : next) {
      auto p = static_cast<size_t>(n.parent);
      Beam child;
      if (--children[p] == 0) {
        // The last child takes the parent's sequence over: by then every
        // sibling has forked, so it may write in place.
        child.seq = running[p].seq;
      } else {
        child.seq = engine.forkSequence(running[p].seq);
      }
      child.tokens = running[p].tokens;
      child.tokens.push_back(n.token);
      child.sum = n.sum;
      seqs.push_back(child.seq);
      tokens.push_back(n.token);
      grown.push_back(std::move(child));
    }
    running = std::move(grown);
    logits.resize(running.size() * V);
    engine.decode(seqs, tokens, logits.data());
    ++result.stats.decodeSteps;
    noteBlocks();
  }
  for (const Beam &b : running)
    engine.releaseSequence(b.seq);

  if (result.hypotheses.empty())
    result.hypotheses = hyps.best(options.numReturnSequences);
  if (tokenizer)
    for (BeamHypothesis &h : result.hypotheses) {
      std::vector<int32_t> ids = h.outputIds;
      if (!ids.empty() && isEos(ids.back()))
        ids.pop_back();
      h.text = tokenizer->decode(ids, /*skipSpecial=*/true);
    }

  GenerationMetrics &m = result.metrics;
  m.promptTokens = P;
  m.generatedTokens =
      static_cast<int64_t>(result.hypotheses.front().outputIds.size());
  m.ttftSeconds = clock.ttftSeconds();
  m.prefillTokensPerSecond = m.ttftSeconds > 0 ? P / m.ttftSeconds : 0;
  m.tpotSeconds = clock.tpotSeconds();
  m.decodeTokensPerSecond = m.tpotSeconds > 0 ? 1.0 / m.tpotSeconds : 0;
  m.peakRssBytes = peakRssBytes();
  m.kvBytesPerToken = engine.kvBytesPerToken();
  // What the beams held at their peak, sharing counted once.
  m.kvBytesUsed = m.kvBytesPerToken * result.stats.peakBlocksUsed * bs;
  return result;
}

} // namespace llmc
