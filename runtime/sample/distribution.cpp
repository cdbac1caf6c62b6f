#include "llmc/runtime/sampler.h"
#include "llmc/support/error.h"

#include <algorithm>
#include <cmath>

namespace llmc::sample {
namespace {

template <typename Range, typename Logit>
double maxOf(const Range &r, Logit logit) {
  double m = -INFINITY;
  for (const auto &x : r)
    m = std::max(m, static_cast<double>(logit(x)));
  if (!std::isfinite(m))
    throw Error("softmax: needs at least one finite logit");
  return m;
}

// Double accumulation so a 150k-term sum loses nothing that float keeps.
template <typename Range, typename Logit>
std::vector<float> softmaxOf(const Range &r, Logit logit) {
  const double mx = maxOf(r, logit);
  std::vector<double> w;
  w.reserve(r.size());
  double total = 0;
  for (const auto &x : r)
    total += w.emplace_back(std::exp(static_cast<double>(logit(x)) - mx));
  std::vector<float> out(w.size());
  for (size_t i = 0; i < w.size(); ++i)
    out[i] = static_cast<float>(w[i] / total);
  return out;
}

} // namespace

std::vector<float> softmax(std::span<const float> logits) {
  return softmaxOf(logits, [](float l) { return l; });
}

std::vector<float> logSoftmax(std::span<const float> logits) {
  auto id = [](float l) { return l; };
  const double mx = maxOf(logits, id);
  double total = 0;
  for (float l : logits)
    total += std::exp(static_cast<double>(l) - mx);
  const double logZ = mx + std::log(total);
  std::vector<float> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i)
    out[i] = static_cast<float>(static_cast<double>(logits[i]) - logZ);
  return out;
}

std::vector<float> probabilities(std::span<const Candidate> c) {
  return softmaxOf(c, [](const Candidate &x) { return x.logit; });
}

int32_t argmax(std::span<const Candidate> c) {
  if (c.empty())
    throw Error("sampler: argmax of an empty candidate list");
  const Candidate *best = &c[0];
  for (const Candidate &x : c)
    if (x.logit > best->logit || (x.logit == best->logit && x.id < best->id))
      best = &x;
  return best->id;
}

int32_t drawCandidate(std::span<const Candidate> c, double u) {
  if (c.empty())
    throw Error("sampler: cannot draw from an empty candidate list");
  const double mx = maxOf(c, [](const Candidate &x) { return x.logit; });
  std::vector<double> w(c.size());
  double total = 0;
  for (size_t i = 0; i < c.size(); ++i)
    total += w[i] = std::exp(static_cast<double>(c[i].logit) - mx);
  // Strict < means a zero-weight candidate can never be hit, even at u == 0.
  const double target = u * total;
  double cum = 0;
  size_t lastPositive = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    if (w[i] == 0)
      continue;
    cum += w[i];
    lastPositive = i;
    if (target < cum)
      return c[i].id;
  }
  // Only rounding (target within an ulp of the total) gets here.
  return c[lastPositive].id;
}

} // namespace llmc::sample
