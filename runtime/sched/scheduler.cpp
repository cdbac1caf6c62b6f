//===- scheduler.cpp - Continuous batching over one engine ----------------===//
//
// The unit of scheduling is a sequence: the tokens it must hold in the KV
// cache before its next logits (prompt + generated; the last generated one
// not yet fed) and how many of them are computed. Prefill, chunked
// prefill, decode and the recompute after a preemption are all "compute
// the tokens you have not computed", as in vLLM V1.
//
//===----------------------------------------------------------------------===//
#include "llmc/runtime/scheduler.h"

#include "llmc/support/error.h"
#include "llmc/support/memory.h"

#include <algorithm>
#include <set>

namespace llmc {

void SchedulerOptions::validate() const {
  if (maxNumSeqs < 1)
    throw Error("--max-num-seqs must be at least 1, got " +
                std::to_string(maxNumSeqs));
  if (maxNumBatchedTokens < 1)
    throw Error("--max-num-batched-tokens must be at least 1, got " +
                std::to_string(maxNumBatchedTokens));
  speculative.validate();
  if (speculative.enabled() && !proposer)
    throw Error("speculative decoding needs a proposer");
}

namespace {

struct Seq {
  int32_t kv = -1;             // engine sequence; -1 while not running
  std::vector<int32_t> tokens; // what the cache must hold for its next logits
  int64_t computed = 0;        // of `tokens`, in the cache
  RequestState *request = nullptr; // sampling; null for a beam
  std::vector<float> row;          // a beam's logits, held for the group
  std::unique_ptr<spec::SpecSequence> spec; // a speculating sample
  bool drafting = false;                    // it has a proposal for this step
  bool done = false;
  int64_t pending() const {
    return done || !row.empty()
               ? 0
               : static_cast<int64_t>(tokens.size()) - computed;
  }
};

} // namespace

struct Scheduler::Group {
  ScheduledRequest req;
  spec::SpeculativeOptions spec; // its own k (method None: off)
  std::vector<std::unique_ptr<RequestState>> samples; // sampling: n
  std::unique_ptr<BeamSearcher> beam;
  std::vector<Seq> seqs; // live or done sequences
  bool forked = false;   // the n samples exist (after the prompt's logits)
  bool admitted = false; // ever
  int64_t cachedPromptTokens = 0, preemptions = 0;
  RequestClock beamClock; // a beam step is a "token"
  BeamStats beamStats;

  int32_t seats() const {
    return beam ? req.beam->numBeams : std::max(1, req.n);
  }
  bool finished() const {
    if (beam)
      return beam->done();
    for (const auto &s : samples)
      if (!s->finished())
        return false;
    return true;
  }
};

Scheduler::Scheduler(StepRunner &engine, const tok::Tokenizer *tokenizer,
                     SchedulerOptions options)
    : engine_(engine), tokenizer_(tokenizer), options_(options) {
  options_.validate();
}

Scheduler::~Scheduler() {
  // Whatever is left gives its blocks back (the engine may outlive us).
  for (auto &g : running_)
    for (Seq &s : g->seqs)
      if (s.kv >= 0)
        engine_.releaseSequence(s.kv);
}

double Scheduler::kvUsage() const {
  // With a sliding pool, whichever of the two is fuller binds.
  const KvManager &kv = engine_.kv();
  double used = static_cast<double>(kv.usedBlocks()) /
                static_cast<double>(kv.numBlocks());
  if (kv.hasSlidingPool())
    used = std::max(used, static_cast<double>(kv.usedSlidingBlocks()) /
                              static_cast<double>(kv.numSlidingBlocks()));
  return used;
}

void Scheduler::add(ScheduledRequest r) {
  if (r.n < 1)
    throw Error("n must be at least 1, got " + std::to_string(r.n));
  if (r.beam && r.n != 1)
    throw Error("beam search and n > 1 samples cannot be combined");
  r.options.validate();
  if (r.beam) {
    r.beam->validate();
    r.options.maxNewTokens = r.beam->maxNewTokens;
    r.options.eosIds = r.beam->eosIds;
    if (!r.beam->grammar)
      r.beam->grammar = r.options.grammar;
  }
  checkPrompt(engine_, r.prompt);
  if (!r.options.stops.empty() && !tokenizer_)
    throw Error("stop strings need a tokenizer, and this plan has none");
  auto g = std::make_unique<Group>();
  const int32_t seats = r.beam ? r.beam->numBeams : r.n;
  if (seats > options_.maxNumSeqs)
    throw Error("the request needs " + std::to_string(seats) +
                " sequences at once but --max-num-seqs is " +
                std::to_string(options_.maxNumSeqs));
  // Alone, every sequence may hold its prompt and all it generates without
  // sharing (a preempted request recomputes its samples one by one), so a
  // request that fits this way can always finish.
  const int64_t P = static_cast<int64_t>(r.prompt.size());
  const int64_t G =
      tokenBudget(r.options.maxNewTokens, P, engine_.contextLength()).tokens;
  const int64_t tokens = P + std::max<int64_t>(G, 1) - 1;
  const int64_t bs = engine_.blockSize();
  const int64_t blocks = seats * ((tokens + bs - 1) / bs);
  if (blocks > engine_.numBlocks())
    throw Error(
        "the request needs room for " + std::to_string(seats * tokens) +
        " tokens (" + std::to_string(P) + " prompt + " + std::to_string(G) +
        " to generate" +
        (seats > 1 ? ", times " + std::to_string(seats) + " sequences"
                   : std::string()) +
        ") but the KV cache holds " +
        std::to_string(int64_t(engine_.numBlocks()) * bs) +
        " tokens; raise --kv-cache-memory or --kv-cache-blocks, or lower "
        "max_new_tokens");
  // The sliding pool holds each sequence's window and one step's chunk.
  if (const KvManager &kv = engine_.kv(); kv.hasSlidingPool()) {
    const int64_t perSeq =
        std::min((tokens + bs - 1) / bs,
                 (kv.slidingWindow() + kSlidingSlackTokens + bs - 1) / bs + 2);
    const int64_t chunk =
        (std::min<int64_t>(P, options_.maxNumBatchedTokens) + bs - 1) / bs;
    if (seats * perSeq + chunk > kv.numSlidingBlocks())
      throw Error(
          "the request needs " + std::to_string(seats * perSeq + chunk) +
          " blocks of the sliding-window layers' KV pool (" +
          std::to_string(seats) + " sequences' windows and a " +
          std::to_string(std::min<int64_t>(P, options_.maxNumBatchedTokens)) +
          "-token step) but it has " + std::to_string(kv.numSlidingBlocks()) +
          "; raise --max-num-seqs or --kv-cache-memory, or lower "
          "--max-num-batched-tokens");
  }

  if (r.beam) {
    g->beam = std::make_unique<BeamSearcher>(
        *r.beam, r.prompt, engine_.vocabSize(), engine_.contextLength());
    g->beamClock.arrival = g->beamClock.scheduled = r.arrival;
  } else {
    for (int32_t i = 0; i < r.n; ++i) {
      RequestOptions o = r.options;
      o.sampling.seed += static_cast<uint64_t>(i);
      g->samples.push_back(std::make_unique<RequestState>(
          o, tokenizer_, r.prompt, engine_.contextLength(), r.arrival));
    }
  }
  if (!r.beam && options_.proposer && options_.speculative.enabled() &&
      r.speculativeTokens != 0) {
    g->spec = options_.speculative;
    if (r.speculativeTokens > 0)
      g->spec.numTokens = r.speculativeTokens;
    g->spec.validate();
  }
  Seq first;
  first.tokens = r.prompt;
  first.request = g->beam ? nullptr : g->samples[0].get();
  g->seqs.push_back(std::move(first));
  g->req = std::move(r);
  counters_.promptTokens += P;
  waiting_.push_back(std::move(g));
}

void Scheduler::finishGroup(Group &g,
                            std::vector<std::unique_ptr<Group>> &from) {
  for (Seq &s : g.seqs)
    if (s.kv >= 0) {
      engine_.releaseSequence(s.kv);
      s.kv = -1;
    }
  RequestResult result;
  result.id = g.req.id;
  result.cachedPromptTokens = g.cachedPromptTokens;
  const int64_t prefilled =
      static_cast<int64_t>(g.req.prompt.size()) - g.cachedPromptTokens;
  if (g.beam) {
    for (const BeamHypothesis &h : g.beam->results(tokenizer_)) {
      SequenceOutput o;
      o.outputIds = h.outputIds;
      o.text = h.text;
      o.finishReason = h.finishReason;
      o.score = h.score;
      o.sumLogprobs = h.sumLogprobs;
      result.outputs.push_back(std::move(o));
    }
    GenerationMetrics &m = result.metrics;
    m.promptTokens = static_cast<int64_t>(g.req.prompt.size());
    m.generatedTokens =
        result.outputs.empty()
            ? 0
            : static_cast<int64_t>(result.outputs[0].outputIds.size());
    m.queueSeconds = g.beamClock.queueSeconds();
    m.ttftSeconds = g.beamClock.ttftSeconds();
    m.tpotSeconds = g.beamClock.tpotSeconds();
    double prefillSeconds = m.ttftSeconds - m.queueSeconds;
    m.prefillTokensPerSecond =
        prefillSeconds > 0 ? static_cast<double>(prefilled) / prefillSeconds
                           : 0;
    m.decodeTokensPerSecond = m.tpotSeconds > 0 ? 1.0 / m.tpotSeconds : 0;
    result.beamStats = g.beamStats;
    result.beamStats.decodeSteps = std::max<int64_t>(g.beam->steps() - 1, 0);
  } else {
    for (auto &s : g.samples) {
      if (!s->finished())
        s->finish(FinishReason::Abort);
      SequenceOutput o;
      o.outputIds = s->outputIds();
      o.text = s->text();
      o.finishReason = s->finishReason();
      o.logprobs = s->logprobs();
      result.outputs.push_back(std::move(o));
    }
    result.metrics = g.samples[0]->metrics(prefilled);
    for (const Seq &s : g.seqs)
      if (s.spec)
        result.metrics.speculative += s.spec->stats();
  }
  result.metrics.preemptions = g.preemptions;
  result.metrics.reusedPromptTokens = g.cachedPromptTokens;
  result.metrics.peakRssBytes = peakRssBytes();
  result.metrics.kvBytesPerToken = engine_.kvBytesPerToken();
  counters_.finished[result.outputs.empty() ? FinishReason::Abort
                                            : result.outputs[0].finishReason]++;
  auto onFinish = std::move(g.req.onFinish);
  // Remove the group before the callback, which may add requests.
  std::unique_ptr<Group> keep;
  for (auto it = from.begin(); it != from.end(); ++it)
    if (it->get() == &g) {
      keep = std::move(*it);
      from.erase(it);
      break;
    }
  if (onFinish)
    onFinish(std::move(result));
}

bool Scheduler::abort(uint64_t id) {
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it)
    if ((*it)->req.id == id) {
      std::vector<std::unique_ptr<Group>> one;
      one.push_back(std::move(*it));
      waiting_.erase(it);
      for (auto &s : one[0]->samples)
        s->finish(FinishReason::Abort);
      finishGroup(*one[0], one);
      return true;
    }
  for (auto &g : running_)
    if (g->req.id == id) {
      for (auto &s : g->samples)
        s->finish(FinishReason::Abort);
      finishGroup(*g, running_);
      return true;
    }
  return false;
}

void Scheduler::abortAll() {
  std::vector<uint64_t> ids;
  for (const auto &g : waiting_)
    ids.push_back(g->req.id);
  for (const auto &g : running_)
    ids.push_back(g->req.id);
  for (uint64_t id : ids)
    abort(id);
}

bool Scheduler::preemptNewest(Group *current) {
  std::unique_ptr<Group> victim = std::move(running_.back());
  running_.pop_back();
  const bool self = victim.get() == current;
  for (Seq &s : victim->seqs) {
    if (s.kv >= 0)
      engine_.releaseSequence(s.kv);
    s.kv = -1;
    s.computed = 0;
    s.row.clear();
    if (s.spec)
      s.spec->forget();
  }
  ++victim->preemptions;
  ++counters_.preemptions;
  waiting_.push_front(std::move(victim));
  return self;
}

namespace {

/// What one sequence does in the step being built.
struct Planned {
  Scheduler::Group *group;
  size_t seq;
  int64_t n;
  bool verify = false; // n - 1 drafts follow its last token
};

} // namespace

void Scheduler::propose() {
  std::vector<spec::Proposal *> proposals;
  std::vector<Seq *> drafting;
  for (auto &g : running_) {
    if (g->beam || !g->spec.enabled())
      continue;
    for (Seq &s : g->seqs) {
      s.drafting = false;
      if (s.done || s.kv < 0 || !s.request || s.request->finished() ||
          s.pending() != 1)
        continue;
      if (!s.spec)
        s.spec = std::make_unique<spec::SpecSequence>(*options_.proposer,
                                                      g->spec, nextSpecKey_++);
      const int64_t room =
          engine_.draftRoom(static_cast<int64_t>(s.tokens.size()));
      if (spec::Proposal *p = s.spec->want(*s.request, s.tokens, room)) {
        proposals.push_back(p);
        drafting.push_back(&s);
      }
    }
  }
  if (proposals.empty())
    return;
  const auto t0 = RequestClock::Clock::now();
  options_.proposer->propose(proposals);
  const double share =
      std::chrono::duration<double>(RequestClock::Clock::now() - t0).count() /
      static_cast<double>(proposals.size());
  for (Seq *s : drafting) {
    s->spec->addProposeSeconds(share);
    s->drafting = s->spec->hasDrafts();
  }
}

int64_t Scheduler::step() {
  if (idle())
    return 0;
  const auto start = RequestClock::Clock::now();
  // 0. Drafts for the speculating samples about to decode, all at once.
  propose();
  int64_t budget = options_.maxNumBatchedTokens;
  std::vector<Planned> plan;
  KvBlocks plannedBlocks;
  auto blocksFor = [&](const Seq &s, int64_t n) {
    return engine_.kv().blocksNeeded(s.kv, n);
  };

  // 1. Running requests, oldest first.
  for (size_t gi = 0; gi < running_.size() && budget > 0; ++gi) {
    Group *g = running_[gi].get();
    bool preemptedSelf = false;
    for (size_t si = 0; si < g->seqs.size() && budget > 0; ++si) {
      Seq &s = g->seqs[si];
      int64_t n = std::min(s.pending(), budget);
      if (n <= 0)
        continue;
      // A speculating sample feeds its drafts too, as far as the budget
      // goes; when blocks run short its drafts go before anyone's cache.
      bool verify = false;
      if (s.drafting) {
        n = std::min(static_cast<int64_t>(s.spec->fed().size()), budget);
        s.spec->shrink(static_cast<size_t>(n - 1));
        verify = n > 1;
      }
      KvBlocks need = blocksFor(s, n);
      while (!(plannedBlocks + need).fitsIn(engine_.kv().available())) {
        if (verify) {
          s.spec->shrink(0);
          n = 1;
          verify = false;
          need = blocksFor(s, n);
          continue;
        }
        if (preemptNewest(g)) {
          preemptedSelf = true;
          break;
        }
      }
      if (preemptedSelf)
        break;
      plan.push_back({g, si, n, verify});
      plannedBlocks += need;
      budget -= n;
    }
    if (preemptedSelf) {
      // Its sequences planned before the preemption give their room back.
      for (auto it = plan.begin(); it != plan.end();)
        if (it->group == g) {
          budget += it->n;
          it = plan.erase(it);
        } else {
          ++it;
        }
      plannedBlocks = {};
      for (const Planned &p : plan)
        plannedBlocks += blocksFor(p.group->seqs[p.seq], p.n);
      break; // everything after it was preempted already
    }
  }

  // 2. Waiting requests, first come first served.
  int32_t seats = 0;
  for (const auto &g : running_)
    seats += g->seats();
  while (!waiting_.empty() && budget > 0) {
    Group *g = waiting_.front().get();
    if (seats + g->seats() > options_.maxNumSeqs)
      break;
    // Each live sequence starts over from what the prefix cache has; the
    // room is checked once the cached blocks are attached (they leave the
    // evictable set), and the attachment undone if the chunks do not fit.
    KvManager &kv = engine_.kv();
    for (Seq &s : g->seqs)
      if (!s.done) {
        s.kv = kv.create();
        s.computed = engine_.attachCachedPrefix(s.kv, s.tokens);
      }
    std::vector<Planned> chunks;
    KvBlocks need;
    int64_t tokens = 0;
    for (size_t si = 0; si < g->seqs.size(); ++si) {
      const Seq &s = g->seqs[si];
      int64_t n = std::min(s.pending(), budget - tokens);
      if (n <= 0)
        continue;
      need += blocksFor(s, n);
      chunks.push_back({g, si, n});
      tokens += n;
    }
    if (chunks.empty() || !(plannedBlocks + need).fitsIn(kv.available())) {
      for (Seq &s : g->seqs)
        if (s.kv >= 0) {
          kv.release(s.kv);
          s.kv = -1;
          s.computed = 0;
        }
      break;
    }
    std::unique_ptr<Group> owned = std::move(waiting_.front());
    waiting_.pop_front();
    for (const Seq &s : g->seqs)
      if (!s.done) {
        counters_.prefixQueryTokens += static_cast<int64_t>(s.tokens.size());
        counters_.prefixHitTokens += s.computed;
      }
    if (!g->admitted) {
      g->admitted = true;
      g->cachedPromptTokens = g->seqs[0].computed;
      const auto now = RequestClock::Clock::now();
      for (auto &sample : g->samples)
        sample->clock().scheduled = now;
      g->beamClock.scheduled = now;
    }
    plan.insert(plan.end(), chunks.begin(), chunks.end());
    plannedBlocks += need;
    budget -= tokens;
    seats += g->seats();
    running_.push_back(std::move(owned));
  }

  if (plan.empty()) {
    if (idle())
      return 0;
    throw Error("internal error: the scheduler found nothing to run with " +
                std::to_string(waiting_.size()) + " requests waiting and " +
                std::to_string(running_.size()) + " running");
  }

  // 3. One engine step.
  std::vector<StepWork> work;
  int64_t rows = 0, decodeRows = 0, chunkTokens = 0;
  bool verifying = false;
  for (const Planned &p : plan) {
    verifying |= p.verify;
    (p.n == 1 && !p.verify ? decodeRows : chunkTokens) += p.n;
  }
  const StepKind kind = verifying          ? StepKind::Verify
                        : chunkTokens == 0 ? StepKind::Decode
                        : decodeRows == 0  ? StepKind::Prefill
                                           : StepKind::Mixed;
  for (const Planned &p : plan) {
    Seq &s = p.group->seqs[p.seq];
    StepWork w;
    w.seq = s.kv;
    if (p.verify) {
      w.tokens = s.spec->fed();
      w.logitRows = static_cast<int32_t>(p.n);
    } else {
      w.tokens = std::span<const int32_t>(s.tokens).subspan(
          static_cast<size_t>(s.computed), static_cast<size_t>(p.n));
      w.logitRows = s.computed + p.n == static_cast<int64_t>(s.tokens.size());
      w.knownLength = static_cast<int64_t>(s.tokens.size());
    }
    rows += w.logitRows;
    work.push_back(w);
  }
  const auto V = static_cast<size_t>(engine_.vocabSize());
  logits_.resize(static_cast<size_t>(std::max<int64_t>(rows, 1)) * V);
  const auto stepStart = RequestClock::Clock::now();
  engine_.step(work, logits_.data());
  const auto stepEnd = RequestClock::Clock::now();
  const double stepSeconds =
      std::chrono::duration<double>(stepEnd - stepStart).count();
  ++counters_.steps;
  counters_.maxRunningSeqs =
      std::max(counters_.maxRunningSeqs, static_cast<int32_t>(plan.size()));
  int64_t ran = 0;

  // 4. Logits to tokens.
  std::set<Group *> touched;
  std::vector<spec::SpecSequence *> decoded; // speculating samples' steps
  size_t row = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    Group &g = *plan[i].group;
    ran += plan[i].n;
    if (plan[i].verify) {
      // The cache keeps the last token and the accepted drafts.
      Seq &s = g.seqs[plan[i].seq];
      std::span<const float> rows(logits_.data() + row * V,
                                  static_cast<size_t>(plan[i].n) * V);
      row += static_cast<size_t>(plan[i].n);
      touched.insert(&g);
      const int64_t proposed = plan[i].n - 1;
      const int64_t keep = s.spec->settle(*s.request, rows, stepSeconds);
      decoded.push_back(s.spec.get());
      s.computed += keep;
      engine_.kv().truncate(s.kv, s.computed);
      counters_.specDraftTokens += proposed;
      counters_.specAcceptedTokens += keep - 1;
      emitTokens(g, plan[i].seq, s.spec->pushed());
      continue;
    }
    g.seqs[plan[i].seq].computed += plan[i].n;
    if (!work[i].logitRows)
      continue;
    // A speculating sample's plain decode step: the break-even's baseline.
    if (Seq &s = g.seqs[plan[i].seq]; s.spec && plan[i].n == 1)
      decoded.push_back(s.spec.get());
    std::span<const float> logits(logits_.data() + row * V, V);
    ++row;
    touched.insert(&g);
    if (g.beam) {
      g.seqs[plan[i].seq].row.assign(logits.begin(), logits.end());
      continue;
    }
    // The prompt's logits of a request of n samples: every sample starts
    // here, as a fork sharing the prompt's blocks.
    size_t first = plan[i].seq, last = plan[i].seq + 1;
    if (!g.forked && g.req.n > 1) {
      g.forked = true;
      for (int32_t k = 1; k < g.req.n; ++k) {
        Seq fork;
        fork.kv = engine_.forkSequence(g.seqs[0].kv);
        fork.tokens = g.seqs[0].tokens;
        fork.computed = g.seqs[0].computed;
        fork.request = g.samples[static_cast<size_t>(k)].get();
        g.seqs.push_back(std::move(fork));
      }
      first = 0;
      last = g.seqs.size();
    }
    for (size_t k = first; k < last; ++k)
      sampleNext(g, k, logits);
  }

  // The whole step, proposing and sampling included, is what each of them
  // waited for.
  const double total =
      std::chrono::duration<double>(RequestClock::Clock::now() - start).count();
  for (spec::SpecSequence *s : decoded)
    s->finishStep(total);

  // 5. Beam groups whose every running beam has its row take a step.
  for (Group *g : touched) {
    if (!g->beam)
      continue;
    noteBeamBlocks(*g);
    bool ready = true;
    for (const Seq &s : g->seqs)
      ready &= s.done || !s.row.empty();
    if (!ready)
      continue;
    std::vector<float> rowsAll;
    for (const Seq &s : g->seqs)
      rowsAll.insert(rowsAll.end(), s.row.begin(), s.row.end());
    std::vector<BeamSearcher::Next> next = g->beam->step(rowsAll);
    g->beamClock.token();
    if (g->beam->done())
      continue;
    // Beams without children die first, so their blocks are free before
    // the children fork; the last child of a beam takes its sequence over
    // (every sibling has forked by then, so it may write in place).
    std::vector<int32_t> children(g->seqs.size(), 0);
    for (const auto &n : next)
      ++children[static_cast<size_t>(n.parent)];
    for (size_t b = 0; b < g->seqs.size(); ++b)
      if (children[b] == 0 && g->seqs[b].kv >= 0)
        engine_.releaseSequence(g->seqs[b].kv);
    std::vector<Seq> grown;
    for (const auto &n : next) {
      Seq &parent = g->seqs[static_cast<size_t>(n.parent)];
      Seq child;
      child.kv = --children[static_cast<size_t>(n.parent)] == 0
                     ? parent.kv
                     : engine_.forkSequence(parent.kv);
      child.tokens = parent.tokens;
      child.tokens.push_back(n.token);
      child.computed = parent.computed;
      grown.push_back(std::move(child));
    }
    g->seqs = std::move(grown);
  }

  // 6. Finished requests leave, freeing their blocks now.
  for (Group *g : touched)
    if (g->finished())
      finishGroup(*g, running_);

  StepTime &t = counters_.stepTime[static_cast<size_t>(kind)];
  ++t.steps;
  t.decodeRows += decodeRows;
  t.chunkTokens += chunkTokens;
  t.planSeconds += std::chrono::duration<double>(stepStart - start).count();
  t.engineSeconds += stepSeconds;
  t.sampleSeconds +=
      std::chrono::duration<double>(RequestClock::Clock::now() - stepEnd)
          .count();
  return ran;
}

void Scheduler::sampleNext(Group &g, size_t index,
                           std::span<const float> logits) {
  RequestState &q = *g.seqs[index].request;
  if (q.finished())
    return;
  const int32_t token = q.accept(logits);
  emitTokens(g, index,
             token < 0 ? std::span<const int32_t>() // ended without one
                       : std::span<const int32_t>(&token, 1));
}

void Scheduler::emitTokens(Group &g, size_t index,
                           std::span<const int32_t> tokens) {
  Seq &s = g.seqs[index];
  RequestState &q = *s.request;
  counters_.generationTokens += static_cast<int64_t>(tokens.size());
  RequestEvent e;
  e.id = g.req.id;
  e.index = static_cast<int32_t>(index);
  e.tokens.assign(tokens.begin(), tokens.end());
  if (q.options().logprobs >= 0)
    e.logprobs.assign(q.logprobs().end() -
                          static_cast<std::ptrdiff_t>(tokens.size()),
                      q.logprobs().end());
  e.text = q.takeText();
  if (q.finished()) {
    // A finished sample gives its blocks back now.
    e.finished = q.finishReason();
    s.done = true;
    engine_.releaseSequence(s.kv);
    s.kv = -1;
    if (s.spec)
      s.spec->forget();
  } else {
    s.tokens.insert(s.tokens.end(), tokens.begin(), tokens.end());
  }
  if (g.req.onEvent)
    g.req.onEvent(e);
}

void Scheduler::noteBeamBlocks(Group &g) {
  // Blocks the beams hold now, sharing counted once, and what they would
  // hold unshared.
  std::set<int32_t> held;
  int32_t unshared = 0;
  const int64_t bs = engine_.blockSize();
  for (const Seq &s : g.seqs) {
    if (s.kv < 0)
      continue;
    const auto &table = engine_.kv().blockTable(s.kv);
    held.insert(table.begin(), table.end());
    unshared += static_cast<int32_t>((s.computed + bs - 1) / bs);
  }
  g.beamStats.peakBlocksUsed =
      std::max(g.beamStats.peakBlocksUsed, static_cast<int32_t>(held.size()));
  g.beamStats.peakBlocksUnshared =
      std::max(g.beamStats.peakBlocksUnshared, unshared);
}

void Scheduler::runToCompletion() {
  while (!idle())
    step();
}

} // namespace llmc
