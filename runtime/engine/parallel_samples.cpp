//===- parallel_samples.cpp - n samples of one prompt, prefilled once
//-------===//
//
// Per sample this is generate()'s loop, step for step (same sampler calls,
// same stop checks), so sample i yields exactly the tokens generate() yields
// with seed + i; what differs is that the prompt is prefilled once, the
// samples are forks of it and every step is one batched decode.
//
//===----------------------------------------------------------------------===//

#include "llmc/runtime/beam.h"

#include "llmc/runtime/stop.h"
#include "llmc/support/error.h"
#include "llmc/tokenizer/stream_decoder.h"

#include <algorithm>
#include <chrono>

namespace llmc {

namespace {

using Clock = std::chrono::steady_clock;

struct Sample {
  Sample(sample::SamplingParams p, const tok::Tokenizer *tokenizer,
         const std::vector<std::string> &stops)
      : sampler(p), stopper(stops) {
    if (tokenizer)
      detok = std::make_unique<tok::StreamDecoder>(*tokenizer, true);
  }
  sample::Sampler sampler;
  std::unique_ptr<tok::StreamDecoder> detok;
  text::StopMatcher stopper;
  GenerateResult result;
  int32_t seq = -1;
  bool live = true;
  size_t row = 0; // its row in the last logits
  Clock::time_point firstToken, lastToken;
};

} // namespace

std::vector<GenerateResult> generateN(Engine &engine,
                                      const tok::Tokenizer *tokenizer,
                                      const std::vector<int32_t> &prompt,
                                      const GenerateOptions &options,
                                      int32_t n) {
  if (n < 1)
    throw Error("--n must be >= 1, got " + std::to_string(n));
  options.sampling.validate();
  if (prompt.empty())
    throw Error("the prompt is empty: give --prompt text or --prompt-ids");
  if (options.maxNewTokens < 0)
    throw Error("--max-new-tokens must be >= 0, got " +
                std::to_string(options.maxNewTokens));
  const int64_t vocab = engine.vocabSize();
  const auto V = static_cast<size_t>(vocab);
  for (int32_t id : prompt)
    if (id < 0 || id >= vocab)
      throw Error("prompt token id " + std::to_string(id) +
                  " is outside the vocabulary [0, " + std::to_string(vocab) +
                  ")");
  if (static_cast<int64_t>(prompt.size()) > engine.contextLength())
    throw Error("the prompt has " + std::to_string(prompt.size()) +
                " tokens but the context length is " +
                std::to_string(engine.contextLength()));
  if (!options.stops.empty() && !tokenizer)
    throw Error("--stop needs a tokenizer, and this plan has none");

  std::vector<std::unique_ptr<Sample>> samples;
  for (int32_t i = 0; i < n; ++i) {
    sample::SamplingParams p = options.sampling;
    p.seed += static_cast<uint64_t>(i);
    samples.push_back(std::make_unique<Sample>(p, tokenizer, options.stops));
  }
  GenerateResult &first = samples[0]->result;
  if (options.keepAllPromptLogits) {
    first.allPromptLogits.resize(prompt.size() * V);
    int32_t scratch = engine.newSequence();
    engine.prefill(scratch, prompt, first.allPromptLogits.data(), true);
    engine.releaseSequence(scratch);
  }
  std::vector<float> logits(V);
  auto start = Clock::now();
  int32_t promptSeq = engine.newSequence();
  engine.prefill(promptSeq, prompt, logits.data());
  if (options.keepPromptLogits)
    first.promptLogits = logits;
  // Every sample starts from the prompt's row and the prompt's blocks.
  for (int32_t i = 0; i < n; ++i)
    samples[static_cast<size_t>(i)]->seq =
        i == 0 ? promptSeq : engine.forkSequence(promptSeq);

  auto emit = [](Sample &s, const std::string &t) { s.result.text += t; };
  auto finish = [&](Sample &s) {
    if (s.detok && s.result.finishReason != "stop") {
      auto r = s.stopper.push(s.detok->flush());
      emit(s, r.emit);
      emit(s, s.stopper.flush());
    }
    if (s.result.outputIds.empty())
      s.firstToken = s.lastToken = Clock::now();
    s.result.metrics.kvBytesUsed =
        engine.kvBytesPerToken() * engine.length(s.seq);
    engine.releaseSequence(s.seq);
    s.live = false;
  };

  for (auto &sp : samples) {
    sp->result.finishReason = "length";
    if (options.maxNewTokens == 0)
      finish(*sp);
  }
  std::vector<int32_t> seqs, tokens;
  while (true) {
    seqs.clear();
    tokens.clear();
    for (auto &sp : samples) {
      Sample &s = *sp;
      if (!s.live)
        continue;
      std::vector<int32_t> &out = s.result.outputIds;
      int32_t next = s.sampler.sample(
          std::span<const float>(logits.data() + s.row * V, V), prompt, out);
      out.push_back(next);
      s.lastToken = Clock::now();
      if (out.size() == 1)
        s.firstToken = s.lastToken;
      bool eos = std::find(options.eosIds.begin(), options.eosIds.end(),
                           next) != options.eosIds.end();
      bool stop = false;
      if (s.detok && !eos) {
        auto r = s.stopper.push(s.detok->push(next));
        emit(s, r.emit);
        if (r.stopped) {
          s.result.finishReason = "stop";
          stop = true;
        }
      }
      if (!stop && eos) {
        s.result.finishReason = "eos";
        stop = true;
      }
      if (!stop && static_cast<int64_t>(out.size()) >= options.maxNewTokens)
        stop = true;
      if (!stop && engine.length(s.seq) + 1 > engine.contextLength()) {
        s.result.finishReason = "context";
        stop = true;
      }
      if (stop) {
        finish(s);
        continue;
      }
      s.row = seqs.size();
      seqs.push_back(s.seq);
      tokens.push_back(next);
    }
    if (seqs.empty())
      break;
    logits.resize(seqs.size() * V);
    engine.decode(seqs, tokens, logits.data());
  }

  std::vector<GenerateResult> results;
  auto seconds = [](Clock::duration d) {
    return std::chrono::duration<double>(d).count();
  };
  for (auto &sp : samples) {
    GenerationMetrics &m = sp->result.metrics;
    const auto N = sp->result.outputIds.size();
    m.promptTokens = static_cast<int64_t>(prompt.size());
    m.generatedTokens = static_cast<int64_t>(N);
    m.ttftSeconds = seconds(sp->firstToken - start);
    m.prefillTokensPerSecond =
        m.ttftSeconds > 0 ? m.promptTokens / m.ttftSeconds : 0;
    if (N > 1) {
      m.tpotSeconds =
          seconds(sp->lastToken - sp->firstToken) / static_cast<double>(N - 1);
      m.decodeTokensPerSecond = m.tpotSeconds > 0 ? 1.0 / m.tpotSeconds : 0;
    }
    m.peakRssBytes = peakRssBytes();
    m.kvBytesPerToken = engine.kvBytesPerToken();
    results.push_back(std::move(sp->result));
  }
  return results;
}

} // namespace llmc
