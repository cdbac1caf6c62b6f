//===- one_request.cpp - n samples and beam search as one request ---------===//
//
// llmc run --n and --num-beams: a request of several sequences run by the
// scheduler alone, so they share its one implementation of forks, prefix
// sharing and the per-sample request state.
//
//===----------------------------------------------------------------------===//
#include "llmc/runtime/beam.h"
#include "llmc/runtime/scheduler.h"

#include "llmc/support/error.h"

namespace llmc {
namespace {

RequestResult runAlone(Engine &engine, const tok::Tokenizer *tokenizer,
                       ScheduledRequest request,
                       spec::Proposer *proposer = nullptr,
                       const spec::SpeculativeOptions &speculative = {}) {
  SchedulerOptions so;
  so.maxNumSeqs =
      std::max(1, request.beam ? request.beam->numBeams : request.n);
  so.maxNumBatchedTokens = std::max(2048, so.maxNumSeqs);
  so.proposer = proposer;
  if (proposer)
    so.speculative = speculative;
  Scheduler scheduler(engine, tokenizer, so);
  RequestResult result;
  request.onFinish = [&](RequestResult r) { result = std::move(r); };
  scheduler.add(std::move(request));
  scheduler.runToCompletion();
  return result;
}

} // namespace

std::vector<GenerateResult> generateN(Engine &engine,
                                      const tok::Tokenizer *tokenizer,
                                      const std::vector<int32_t> &prompt,
                                      const GenerateOptions &options,
                                      int32_t n) {
  if (n < 1 || n > kMaxSequencesPerRequest)
    throw Error("--n must be in [1, " +
                std::to_string(kMaxSequencesPerRequest) + "], got " +
                std::to_string(n));
  if (options.keepPromptLogits || options.keepAllPromptLogits)
    throw Error("prompt logits are not kept with --n");
  ScheduledRequest r;
  r.prompt = prompt;
  r.options = options;
  r.n = n;
  RequestResult done = runAlone(engine, tokenizer, std::move(r),
                                options.proposer, options.speculative);
  std::vector<GenerateResult> results;
  for (SequenceOutput &o : done.outputs) {
    GenerateResult g;
    g.promptIds = prompt;
    g.outputIds = std::move(o.outputIds);
    g.text = std::move(o.text);
    g.finishReason = o.finishReason;
    g.metrics = done.metrics;
    g.metrics.generatedTokens = static_cast<int64_t>(g.outputIds.size());
    g.metrics.kvBytesUsed = engine.kvPool().bytesFor(
        static_cast<int64_t>(prompt.size() + g.outputIds.size() - 1));
    results.push_back(std::move(g));
  }
  return results;
}

BeamResult beamSearch(Engine &engine, const tok::Tokenizer *tokenizer,
                      const std::vector<int32_t> &prompt,
                      const BeamOptions &options) {
  options.validate();
  ScheduledRequest r;
  r.prompt = prompt;
  r.beam = options;
  RequestResult done = runAlone(engine, tokenizer, std::move(r));
  BeamResult result;
  for (SequenceOutput &o : done.outputs) {
    BeamHypothesis h;
    h.outputIds = std::move(o.outputIds);
    h.text = std::move(o.text);
    h.finishReason = o.finishReason;
    h.score = o.score;
    h.sumLogprobs = o.sumLogprobs;
    result.hypotheses.push_back(std::move(h));
  }
  result.metrics = done.metrics;
  result.stats = done.beamStats;
  // What the beams held at their peak, sharing counted once.
  result.metrics.kvBytesUsed = result.metrics.kvBytesPerToken *
                               result.stats.peakBlocksUsed * engine.blockSize();
  return result;
}

} // namespace llmc
