//===- sampler.h - Logits processors and seeded sampling --------*- C++ -*-===//
//
// Turns one row of logits into one token id. The chain runs in Hugging Face
// transformers' order (docs/sampling.md says why and how peers differ):
//
//   repetition penalty -> presence/frequency penalties -> temperature
//   -> top-k -> top-p -> min-p -> seeded draw
//
// Temperature 0 means greedy: the penalties still apply, then the argmax is
// taken (ties go to the lowest id) and top-k/top-p/min-p are skipped, since
// none of them can remove the argmax.
//
// Every processor is a free function over a candidate list so that it can be
// tested alone. Candidate lists are kept in ascending id order with unique
// ids; every processor requires that and preserves it, which is what makes
// the draw independent of how std::nth_element or std::sort order ties.
//
// Not thread-safe: a Sampler holds its RNG and scratch space; use one per
// sequence.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace llmc::sample {

/// Below this temperature sampling is greedy: dividing logits by a smaller
/// number can overflow float, and the distribution is one-hot anyway (vLLM
/// uses the same cut-off).
inline constexpr float kGreedyTemperature = 1e-5f;

/// How validate() names a parameter: "--top-p" (the CLI) or "top_p" (JSON
/// requests and files).
enum class ParamNames { Flags, Json };
std::string paramName(const char *flag, ParamNames names);

/// The user-facing knobs, named after the CLI flags in validate()'s messages.
/// Defaults disable every processor except a plain draw at temperature 1.
struct SamplingParams {
  float temperature = 1.0f;       // --temperature, >= 0; 0 = greedy
  int topK = 0;                   // --top-k, >= 0; 0 = off
  float topP = 1.0f;              // --top-p, in (0, 1]; 1 = off
  float minP = 0.0f;              // --min-p, in [0, 1]; 0 = off
  float repetitionPenalty = 1.0f; // --repetition-penalty, > 0; 1 = off
  float presencePenalty = 0.0f;   // --presence-penalty, in [-2, 2]
  float frequencyPenalty = 0.0f;  // --frequency-penalty, in [-2, 2]
  uint64_t seed = 0;              // --seed; every value, 0 included, is valid

  bool greedy() const { return temperature < kGreedyTemperature; }
  /// Throws llmc::Error naming the flag and the bad value, e.g.
  /// "--top-p must be in (0, 1], got 1.5". NaN and infinities are rejected.
  void validate(ParamNames names = ParamNames::Flags) const;
};

struct Candidate {
  int32_t id;
  float logit;
};
using Candidates = std::vector<Candidate>;

//===----------------------------------------------------------------------===//
// Processors. Each takes candidates in ascending id order and keeps that
// order; the truncating ones erase candidates rather than setting -inf.
// A processor at its "off" value returns the list unchanged.
//===----------------------------------------------------------------------===//

/// HF RepetitionPenaltyLogitsProcessor: every id that occurs in the prompt or
/// the generated tokens (once, however often it occurs) gets logit / penalty
/// if its logit is > 0, else logit * penalty. Ids outside the list are ignored.
void applyRepetitionPenalty(Candidates &c, std::span<const int32_t> promptIds,
                            std::span<const int32_t> generatedIds,
                            float penalty);

/// OpenAI presence/frequency penalties over the *generated* tokens only:
/// logit -= presence * (count > 0) + frequency * count.
void applyPresenceFrequencyPenalty(Candidates &c,
                                   std::span<const int32_t> generatedIds,
                                   float presence, float frequency);

/// logit / temperature; requires temperature > 0.
void applyTemperature(Candidates &c, float temperature);

/// Keeps every candidate whose logit is >= the k-th largest logit (so ties at
/// the boundary all survive, as in HF TopKLogitsWarper). k <= 0 is off.
/// O(n) expected: selects the k-th value with nth_element, never sorts.
void applyTopK(Candidates &c, int k);

/// Nucleus: orders candidates by (probability desc, id asc) and keeps each one
/// whose predecessors' total probability is still < p (so at least one
/// survives). Exact, but sorts only a growing prefix of the candidates.
void applyTopP(Candidates &c, float p);

/// Keeps candidates whose probability is >= minP * (the top probability).
void applyMinP(Candidates &c, float minP);

//===----------------------------------------------------------------------===//
// Distributions.
//===----------------------------------------------------------------------===//

/// Numerically stable (max-subtracted). -inf maps to probability 0; the input
/// must hold at least one finite value.
std::vector<float> softmax(std::span<const float> logits);
std::vector<float> logSoftmax(std::span<const float> logits);
/// softmax over the candidates' logits, in the candidates' order.
std::vector<float> probabilities(std::span<const Candidate> c);

/// Highest logit, ties to the lowest id. Requires a non-empty list.
int32_t argmax(std::span<const Candidate> c);

/// Inverse-CDF draw in id order: the first candidate whose cumulative
/// probability exceeds u. u in [0, 1); a zero-probability candidate is never
/// returned. Requires a non-empty list.
int32_t drawCandidate(std::span<const Candidate> c, double u);

//===----------------------------------------------------------------------===//
// Randomness: xoshiro256** seeded through splitmix64. Bits and floats are
// computed here, never by <random> distributions, so a seed gives the same
// sequence on every platform and standard library.
//===----------------------------------------------------------------------===//

class Rng {
public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();

private:
  uint64_t s_[4];
};

/// One step of splitmix64 (Vigna): advances state and returns the output.
uint64_t splitmix64(uint64_t &state);

//===----------------------------------------------------------------------===//
// The sampler.
//===----------------------------------------------------------------------===//

/// One row of --explain output: the best candidates before and after one
/// processor, by logit. `prob` is the softmax over the candidates alive at
/// that point, so it is renormalised after truncation.
struct TraceEntry {
  int32_t id;
  float logit;
  float prob;
};
struct ProcessorTrace {
  std::string name; // "repetition_penalty", "top_p", ...
  std::vector<TraceEntry> topBefore, topAfter;
};

class Sampler {
public:
  /// Validates params (throws llmc::Error) and seeds the RNG with params.seed.
  explicit Sampler(SamplingParams params);

  /// Runs the chain on `logits` (one entry per vocabulary id) and draws.
  /// promptIds/generatedIds feed the penalties and must lie in
  /// [0, logits.size()). Throws llmc::Error on NaN or +inf logits, on an
  /// all -inf row, and on out-of-range ids. When `trace` is given it is
  /// cleared and gets one entry per processor that is not off, with `topN`
  /// candidates on each side.
  int32_t sample(std::span<const float> logits,
                 std::span<const int32_t> promptIds,
                 std::span<const int32_t> generatedIds,
                 std::vector<ProcessorTrace> *trace = nullptr, int topN = 5);

  /// The chain without the draw: the candidates sample() would draw from
  /// (greedy: the penalised list it takes the argmax of). Valid until the
  /// next call; does not touch the RNG.
  const Candidates &process(std::span<const float> logits,
                            std::span<const int32_t> promptIds,
                            std::span<const int32_t> generatedIds,
                            std::vector<ProcessorTrace> *trace = nullptr,
                            int topN = 5);

  const SamplingParams &params() const { return params_; }
  /// The generator sample() draws from (speculative verification draws
  /// its acceptances from it too).
  Rng &rng() { return rng_; }

private:
  SamplingParams params_;
  Rng rng_;
  Candidates candidates_;
};

} // namespace llmc::sample
