//===- draft_proposer.cpp - A smaller model guesses the next tokens -------===//
//
// Each sequence has a sequence of its own in the draft model's KV cache.
// A round of proposals first brings every draft cache up to its context
// (the part it has not computed: the accepted drafts and the target's
// token, or a whole prompt the first time; what the target rejected is
// truncated away), then runs up to k one-token steps, every sequence in the
// same steps. A sequence that does not fit the draft's cache or context
// proposes nothing this round.
//
//===----------------------------------------------------------------------===//
#include "llmc/runtime/speculative.h"

#include "llmc/runtime/plan.h"
#include "llmc/support/error.h"
#include "llmc/tokenizer/tokenizer.h"

#include <algorithm>

namespace llmc::spec {

void checkDraftCompatible(const Plan &target, const Plan &draft) {
  const std::string both =
      " (target " + target.path() + ", draft " + draft.path() + ")";
  if (target.config().vocabSize != draft.config().vocabSize)
    throw Error("the draft's vocabulary has " +
                std::to_string(draft.config().vocabSize) +
                " tokens and the target's " +
                std::to_string(target.config().vocabSize) + both +
                ": a draft must share the target's tokenizer");
  const PlanTokenizer &a = target.tokenizer(), &b = draft.tokenizer();
  if (a.kind != b.kind)
    throw Error("the draft's tokenizer is " + b.kind + " and the target's " +
                a.kind + both + ": a draft must share the target's tokenizer");
  // The same vocabulary, merges, special tokens and pipeline; for a
  // compiled tokenizer.json not the same file (one that writes its merges
  // as pairs is the same tokenizer as one that writes them as strings).
  const bool same = a.kind == "hf-tables"
                        ? tok::sameTokenizer(tok::TokenizerKind::HFTables,
                                             a.bytes(), b.bytes())
                        : a.bytes() == b.bytes();
  if (!same)
    throw Error("the draft's " + b.kind +
                " tokenizer is not the target's (their vocabularies, merges, "
                "special tokens or pipelines differ)" +
                both + ": a draft must share the target's tokenizer");
}

struct DraftProposer::Seq {
  int32_t kv = -1;
  std::unique_ptr<sample::Sampler> sampler; // the request's processors
  std::vector<int32_t> generated; // the context's generated part + drafts
};

DraftProposer::DraftProposer(StepRunner &draft) : draft_(draft) {}

DraftProposer::~DraftProposer() {
  for (auto &[key, s] : seqs_)
    draft_.releaseSequence(s->kv);
}

void DraftProposer::release(uint64_t key) {
  auto it = seqs_.find(key);
  if (it == seqs_.end())
    return;
  draft_.releaseSequence(it->second->kv);
  seqs_.erase(it);
}

void DraftProposer::propose(std::span<Proposal *const> proposals) {
  struct Live {
    Proposal *p;
    Seq *s;
    std::vector<int32_t> feed;
  };
  std::vector<Live> live;
  const auto V = static_cast<size_t>(draft_.vocabSize());
  for (Proposal *p : proposals) {
    p->tokens.clear();
    p->q.clear();
    const auto L = static_cast<int64_t>(p->context.size());
    const int64_t k =
        std::min<int64_t>(p->maxTokens, draft_.contextLength() - L + 1);
    if (k <= 0 || L == 0)
      continue;
    p->maxTokens = static_cast<int32_t>(k);
    std::unique_ptr<Seq> &s = seqs_[p->key];
    if (!s) {
      s = std::make_unique<Seq>();
      s->kv = draft_.newSequence();
    }
    if (!s->sampler) {
      sample::SamplingParams params = *p->sampling;
      // Its own generator: the target's draws stay the target's.
      params.seed ^= 0x9e3779b97f4a7c15ull;
      s->sampler = std::make_unique<sample::Sampler>(params);
    }
    // What the draft computed that is still the context; the context's
    // last token is fed again when all of it is cached, for its logits.
    const std::vector<int32_t> &held = draft_.kv().tokens(s->kv);
    auto common =
        static_cast<int64_t>(std::mismatch(held.begin(), held.end(),
                                           p->context.begin(), p->context.end())
                                 .first -
                             held.begin());
    common = std::min(common, L - 1);
    draft_.kv().truncate(s->kv, common);
    Live l{p, s.get(), {}};
    l.feed.assign(p->context.begin() + common, p->context.end());
    s->generated.assign(p->context.begin() +
                            static_cast<std::ptrdiff_t>(p->promptLength),
                        p->context.end());
    live.push_back(std::move(l));
  }

  std::vector<float> logits;
  while (!live.empty()) {
    std::vector<StepWork> work;
    for (const Live &l : live)
      work.push_back({l.s->kv, l.feed, 1});
    // Drop the longest feeds until the step fits the draft's cache.
    while (!work.empty() && !draft_.fits(work)) {
      auto worst = std::max_element(work.begin(), work.end(),
                                    [](const StepWork &a, const StepWork &b) {
                                      return a.tokens.size() < b.tokens.size();
                                    });
      const auto i = static_cast<size_t>(worst - work.begin());
      work.erase(worst);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (work.empty())
      break;
    logits.resize(work.size() * V);
    draft_.step(work, logits.data());
    std::vector<Live> next;
    for (size_t i = 0; i < live.size(); ++i) {
      Live &l = live[i];
      Proposal &p = *l.p;
      std::span<const float> row(logits.data() + i * V, V);
      sample::Sampler &sm = *l.s->sampler;
      const sample::Candidates &c =
          sm.process(row, p.context.first(p.promptLength), l.s->generated);
      int32_t t;
      if (sm.params().greedy()) {
        t = sample::argmax(c); // a point mass at the draft's choice
      } else {
        TokenProbs q = distributionOf(c);
        t = drawFrom(q, sm.rng());
        p.q.push_back(std::move(q));
      }
      p.tokens.push_back(t);
      l.s->generated.push_back(t);
      if (static_cast<int32_t>(p.tokens.size()) < p.maxTokens) {
        l.feed.assign(1, t);
        next.push_back(std::move(l));
      }
    }
    live = std::move(next);
  }
}

} // namespace llmc::spec
