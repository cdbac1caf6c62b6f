//===- beam_search.cpp - HF-style beam search, step by step ---------------===//
//
// The rules are those of transformers' BeamSearchScorer (beam.h lists them).
// This file is the search alone, step by step; the scheduler keeps the
// beams' engine sequences (runtime/sched).
//
//===----------------------------------------------------------------------===//

#include "llmc/runtime/beam.h"

#include "llmc/support/error.h"

#include <algorithm>
#include <cmath>

namespace llmc {

void BeamOptions::validate() const {
  if (numBeams < 1 || numBeams > kMaxSequencesPerRequest)
    throw Error("--num-beams must be in [1, " +
                std::to_string(kMaxSequencesPerRequest) + "], got " +
                std::to_string(numBeams));
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
void topCandidates(std::span<const float> logits, BeamSearcher::Beam &beam,
                   int32_t beamIndex, const std::vector<int32_t> &prompt,
                   const sample::SamplingParams &p, size_t keep,
                   grammar::TokenMask &mask, std::vector<Candidate> &out) {
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
  if (beam.matcher) {
    beam.matcher->fillMask(mask);
    mask.applyTo(lp);
  }
  std::vector<Candidate> row;
  row.reserve(lp.size());
  for (size_t i = 0; i < lp.size(); ++i)
    if (lp[i] != -INFINITY) // masked by the grammar
      row.push_back({beam.sum + static_cast<double>(lp[i]), beamIndex,
                     static_cast<int32_t>(i)});
  keep = std::min(keep, row.size());
  std::partial_sort(row.begin(),
                    row.begin() + static_cast<std::ptrdiff_t>(keep), row.end(),
                    better);
  out.insert(out.end(), row.begin(),
             row.begin() + static_cast<std::ptrdiff_t>(keep));
}

} // namespace

struct BeamSearcher::State {
  explicit State(const BeamOptions &o, int64_t maxLen) : hyps(o, maxLen) {}
  Hypotheses hyps;
};

BeamSearcher::BeamSearcher(BeamOptions options, std::vector<int32_t> prompt,
                           int64_t vocabSize, int64_t contextLength)
    : options_(std::move(options)), prompt_(std::move(prompt)) {
  options_.validate();
  limits_.maxNewTokens = options_.maxNewTokens;
  limits_.eosIds = options_.eosIds;
  int32_t eosInVocab = 0;
  for (int64_t e : options_.eosIds)
    eosInVocab += e >= 0 && e < vocabSize;
  keep_ = static_cast<size_t>(std::max(2, 1 + eosInVocab)) *
          static_cast<size_t>(options_.numBeams);
  // The length rules of every request (generate() stops the same way).
  const TokenBudget budget =
      tokenBudget(options_.maxNewTokens, static_cast<int64_t>(prompt_.size()),
                  contextLength);
  maxSteps_ = budget.tokens;
  endReason_ = budget.reason;
  state_ = std::make_unique<State>(options_, std::max<int64_t>(maxSteps_, 1));
  beams_.push_back({{}, 0.0, std::nullopt});
  if (options_.grammar) {
    std::vector<int32_t> eos;
    for (int64_t e : options_.eosIds)
      eos.push_back(static_cast<int32_t>(e));
    beams_[0].matcher.emplace(options_.grammar, std::move(eos));
    mask_ = grammar::TokenMask(options_.grammar->vocabulary().size());
  }
}

BeamSearcher::~BeamSearcher() = default;

std::vector<BeamSearcher::Next>
BeamSearcher::step(std::span<const float> logits) {
  if (done_)
    return {};
  if (maxSteps_ <= 0) {
    done_ = true;
    BeamHypothesis h;
    h.finishReason = endReason_;
    results_.push_back(h);
    return {};
  }
  const size_t V = logits.size() / beams_.size();
  const int32_t B = options_.numBeams;
  const int64_t t = ++steps_;
  std::vector<Candidate> cands;
  for (size_t b = 0; b < beams_.size(); ++b)
    topCandidates(logits.subspan(b * V, V), beams_[b], static_cast<int32_t>(b),
                  prompt_, options_.penalties, keep_, mask_, cands);
  std::sort(cands.begin(), cands.end(), better);
  if (cands.size() > keep_)
    cands.resize(keep_);
  if (cands.empty()) {
    // Every beam's grammar needs bytes no token writes: they end here.
    for (const Beam &b : beams_)
      state_->hyps.add(b.tokens, b.sum, std::max<int64_t>(t - 1, 1),
                       FinishReason::Abort);
    done_ = true;
    results_ = state_->hyps.best(options_.numReturnSequences);
    beams_.clear();
    return {};
  }

  std::vector<Next> next;
  std::vector<double> sums;
  for (size_t rank = 0; rank < cands.size(); ++rank) {
    const Candidate &c = cands[rank];
    // A token that completes the beam's grammar ends it like EOS does.
    bool complete = false;
    if (const auto &m = beams_[static_cast<size_t>(c.beam)].matcher;
        m && !limits_.isEos(c.token)) {
      grammar::Matcher after = *m;
      complete = after.accept(c.token) && after.mustEnd();
    }
    if (limits_.isEos(c.token) || complete) {
      // HF: an EOS outside the top numBeams does not finish a hypothesis.
      if (rank >= static_cast<size_t>(B))
        continue;
      std::vector<int32_t> ids = beams_[static_cast<size_t>(c.beam)].tokens;
      ids.push_back(c.token);
      state_->hyps.add(std::move(ids), c.sum, t,
                       complete ? FinishReason::Stop : FinishReason::Eos);
    } else {
      next.push_back({c.beam, c.token});
      sums.push_back(c.sum);
    }
    if (static_cast<int32_t>(next.size()) == B)
      break;
  }
  bool done = state_->hyps.isDone(cands.front().sum, t);
  if (!done && (t == maxSteps_ || next.empty())) {
    for (size_t i = 0; i < next.size(); ++i) {
      std::vector<int32_t> ids =
          beams_[static_cast<size_t>(next[i].parent)].tokens;
      ids.push_back(next[i].token);
      state_->hyps.add(std::move(ids), sums[i], t, endReason_);
    }
    done = true;
  }
  if (done) {
    done_ = true;
    results_ = state_->hyps.best(options_.numReturnSequences);
    beams_.clear();
    return {};
  }
  std::vector<Beam> grown;
  for (size_t i = 0; i < next.size(); ++i) {
    Beam child = beams_[static_cast<size_t>(next[i].parent)];
    child.tokens.push_back(next[i].token);
    child.sum = sums[i];
    if (child.matcher && !child.matcher->accept(next[i].token))
      throw Error("internal error: a beam took a token its grammar refuses");
    grown.push_back(std::move(child));
  }
  beams_ = std::move(grown);
  return next;
}

std::vector<BeamHypothesis>
BeamSearcher::results(const tok::Tokenizer *tokenizer) const {
  std::vector<BeamHypothesis> out = results_;
  if (tokenizer)
    for (BeamHypothesis &h : out) {
      std::vector<int32_t> ids = h.outputIds;
      if (!ids.empty() && limits_.isEos(ids.back()))
        ids.pop_back();
      h.text = tokenizer->decode(ids, /*skipSpecial=*/true);
    }
  return out;
}

} // namespace llmc
