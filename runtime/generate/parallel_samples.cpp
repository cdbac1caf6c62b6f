//===- parallel_samples.cpp - n samples of one prompt, prefilled once -----===//
//
// Each sample is a RequestState with seed + i, so sample i yields exactly the
// tokens generate() yields with that seed; what differs is that the prompt
// is prefilled once, the samples are forks of it and every step is one
// batched decode.
//
//===----------------------------------------------------------------------===//

#include "llmc/runtime/beam.h"

#include "llmc/support/error.h"
#include "llmc/support/memory.h"

namespace llmc {

std::vector<GenerateResult> generateN(Engine &engine,
                                      const tok::Tokenizer *tokenizer,
                                      const std::vector<int32_t> &prompt,
                                      const GenerateOptions &options,
                                      int32_t n) {
  if (n < 1)
    throw Error("--n must be >= 1, got " + std::to_string(n));
  options.validate();
  checkPrompt(engine, prompt);
  const auto V = static_cast<size_t>(engine.vocabSize());
  const auto start = RequestClock::Clock::now();

  struct Sample {
    std::unique_ptr<RequestState> request;
    int32_t seq = -1;
    int64_t kvTokens = 0;
  };
  std::vector<Sample> samples(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    RequestOptions o = options;
    o.sampling.seed += static_cast<uint64_t>(i);
    samples[static_cast<size_t>(i)].request = std::make_unique<RequestState>(
        o, tokenizer, prompt, engine.contextLength(), start);
  }
  std::vector<float> allPromptLogits;
  if (options.keepAllPromptLogits) {
    allPromptLogits.resize(prompt.size() * V);
    int32_t scratch = engine.newSequence();
    engine.prefill(scratch, prompt, allPromptLogits.data(), true);
    engine.releaseSequence(scratch);
  }
  std::vector<float> logits(V);
  int32_t promptSeq = engine.newSequence();
  engine.prefill(promptSeq, prompt, logits.data());
  std::vector<float> promptLogits;
  if (options.keepPromptLogits)
    promptLogits = logits;
  // Every sample starts from the prompt's row and the prompt's blocks.
  for (int32_t i = 0; i < n; ++i)
    samples[static_cast<size_t>(i)].seq =
        i == 0 ? promptSeq : engine.forkSequence(promptSeq);

  auto finish = [&](Sample &s) {
    s.kvTokens = engine.length(s.seq);
    engine.releaseSequence(s.seq);
    s.seq = -1;
  };
  for (Sample &s : samples)
    if (s.request->finished())
      finish(s);

  std::vector<size_t> rows(samples.size(), 0); // each sample's logits row
  std::vector<int32_t> seqs, tokens;
  try {
  while (true) {
    seqs.clear();
    tokens.clear();
    for (size_t i = 0; i < samples.size(); ++i) {
      Sample &s = samples[i];
      if (s.seq < 0)
        continue;
      int32_t next = s.request->accept(
          std::span<const float>(logits.data() + rows[i] * V, V));
      if (s.request->finished()) {
        finish(s);
        continue;
      }
      rows[i] = seqs.size();
      seqs.push_back(s.seq);
      tokens.push_back(next);
    }
    if (seqs.empty())
      break;
    logits.resize(seqs.size() * V);
    engine.decode(seqs, tokens, logits.data());
  }
  } catch (...) {
    for (Sample &s : samples)
      if (s.seq >= 0)
        engine.releaseSequence(s.seq);
    throw;
  }

  std::vector<GenerateResult> results;
  for (Sample &s : samples) {
    GenerateResult r;
    const RequestState &q = *s.request;
    r.promptIds = prompt;
    r.outputIds = q.outputIds();
    r.text = q.text();
    r.finishReason = q.finishReason();
    r.metrics = q.metrics(static_cast<int64_t>(prompt.size()));
    r.metrics.peakRssBytes = peakRssBytes();
    r.metrics.kvBytesPerToken = engine.kvBytesPerToken();
    r.metrics.kvBytesUsed = r.metrics.kvBytesPerToken * s.kvTokens;
    results.push_back(std::move(r));
  }
  results[0].promptLogits = std::move(promptLogits);
  results[0].allPromptLogits = std::move(allPromptLogits);
  return results;
}

} // namespace llmc
