#include "llmc/runtime/sampler.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>

namespace llmc::sample {
namespace {

// Dividing by a temperature or penalty below 1 can overflow float; an
// infinite logit would turn later softmaxes into NaN, so saturate instead.
float saturate(float v) { return std::clamp(v, -FLT_MAX, FLT_MAX); }

float maxLogit(const Candidates &c) {
  float m = -INFINITY;
  for (const Candidate &x : c)
    m = std::max(m, x.logit);
  return m;
}

// Rank order used wherever candidates are sorted: best logit first, then the
// lowest id, a total order, so results never depend on the sort algorithm.
bool ranksBefore(const Candidate &a, const Candidate &b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Penalties run on the whole vocabulary, so a dense table indexed by id is
// O(vocab + context) where sorting a long prompt every step would not be.
size_t tableSize(const Candidates &c) {
  return c.empty() ? 0 : static_cast<size_t>(c.back().id) + 1;
}

} // namespace

void applyRepetitionPenalty(Candidates &c, std::span<const int32_t> promptIds,
                            std::span<const int32_t> generatedIds,
                            float penalty) {
  if (penalty == 1.0f || c.empty())
    return;
  std::vector<uint8_t> seen(tableSize(c), 0);
  for (std::span<const int32_t> ids : {promptIds, generatedIds})
    for (int32_t id : ids)
      if (id >= 0 && static_cast<size_t>(id) < seen.size())
        seen[id] = 1;
  for (Candidate &x : c)
    if (seen[x.id])
      x.logit = saturate(x.logit > 0 ? x.logit / penalty : x.logit * penalty);
}

void applyPresenceFrequencyPenalty(Candidates &c,
                                   std::span<const int32_t> generatedIds,
                                   float presence, float frequency) {
  if ((presence == 0.0f && frequency == 0.0f) || c.empty())
    return;
  std::vector<int32_t> count(tableSize(c), 0);
  for (int32_t id : generatedIds)
    if (id >= 0 && static_cast<size_t>(id) < count.size())
      ++count[id];
  for (Candidate &x : c)
    if (int32_t n = count[x.id])
      x.logit =
          saturate(x.logit - presence - frequency * static_cast<float>(n));
}

void applyTemperature(Candidates &c, float temperature) {
  if (temperature == 1.0f)
    return;
  for (Candidate &x : c)
    x.logit = saturate(x.logit / temperature);
}

void applyTopK(Candidates &c, int k) {
  if (k <= 0 || static_cast<size_t>(k) >= c.size())
    return;
  std::vector<float> v(c.size());
  std::transform(c.begin(), c.end(), v.begin(),
                 [](const Candidate &x) { return x.logit; });
  std::nth_element(v.begin(), v.begin() + (k - 1), v.end(),
                   std::greater<float>());
  const float kth = v[k - 1];
  std::erase_if(c, [kth](const Candidate &x) { return x.logit < kth; });
}

void applyTopP(Candidates &c, float p) {
  if (p >= 1.0f || c.size() <= 1)
    return;
  const float mx = maxLogit(c);
  auto weight = [mx](const Candidate &x) {
    return std::exp(static_cast<double>(x.logit - mx));
  };
  double total = 0;
  for (const Candidate &x : c)
    total += weight(x);
  const double target = static_cast<double>(p) * total;

  // The nucleus is usually a few dozen tokens of a 150k vocabulary: sort a
  // prefix, and widen it only while the mass seen so far is still short.
  Candidates order(c);
  size_t sorted = 0, kept = 0;
  size_t end = std::min<size_t>(order.size(), 64);
  double mass = 0;
  bool reached = false;
  while (!reached) {
    if (end < order.size())
      std::nth_element(order.begin() + sorted, order.begin() + end, order.end(),
                       ranksBefore);
    std::sort(order.begin() + sorted, order.begin() + end, ranksBefore);
    for (; kept < end; ++kept) {
      if (mass >= target) {
        reached = true;
        break;
      }
      mass += weight(order[kept]);
    }
    if (end == order.size())
      break;
    sorted = end;
    end = std::min(order.size(), end * 8);
  }
  const Candidate last = order[kept - 1];
  std::erase_if(c,
                [&last](const Candidate &x) { return ranksBefore(last, x); });
}

void applyMinP(Candidates &c, float minP) {
  if (minP <= 0.0f || c.empty())
    return;
  // p_i >= minP * p_max  <=>  exp(l_i - l_max) >= minP: no normaliser needed.
  const float mx = maxLogit(c);
  std::erase_if(c, [mx, minP](const Candidate &x) {
    return std::exp(static_cast<double>(x.logit - mx)) <
           static_cast<double>(minP);
  });
}

} // namespace llmc::sample
