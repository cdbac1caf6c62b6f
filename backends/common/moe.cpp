//===- moe.cpp - Routing tokens to experts --------------------------------===//
#include "common/moe.h"
#include "common/graph.h"

#include <algorithm>
#include <cmath>

namespace llmc::common {

void routeTopK(const float *logits, int64_t E, int64_t k, bool renormalize,
               int64_t mode, float *weights, int32_t *experts) {
  std::vector<float> score(logits, logits + E);
  if (mode == 0) { // softmax over all experts first (Mixtral, Qwen3-MoE)
    const float max = *std::max_element(score.begin(), score.end());
    float sum = 0.0f;
    for (float &s : score)
      sum += s = std::exp(s - max);
    for (float &s : score)
      s /= sum;
  }
  std::vector<bool> taken(size_t(E), false);
  for (int64_t j = 0; j < k; ++j) {
    int64_t best = -1;
    for (int64_t e = 0; e < E; ++e) // strict >: ties go to the lower index
      if (!taken[size_t(e)] &&
          (best < 0 || score[size_t(e)] > score[size_t(best)]))
        best = e;
    taken[size_t(best)] = true;
    experts[j] = int32_t(best);
    weights[j] = score[size_t(best)];
  }
  if (mode == 1) { // gpt-oss: a softmax over the chosen logits
    const float max = weights[0];
    float sum = 0.0f;
    for (int64_t j = 0; j < k; ++j)
      sum += weights[j] = std::exp(weights[j] - max);
    for (int64_t j = 0; j < k; ++j)
      weights[j] /= sum;
  } else if (renormalize) {
    float sum = 0.0f;
    for (int64_t j = 0; j < k; ++j)
      sum += weights[j];
    for (int64_t j = 0; j < k; ++j)
      weights[j] /= sum;
  }
}

int32_t expertAt(const int32_t *experts, int64_t k, int64_t t, int64_t j,
                 int64_t E) {
  const int32_t e = experts[t * k + j];
  if (e < 0 || e >= E)
    throw InvalidArgument("expert id " + std::to_string(e) + " at row " +
                          std::to_string(t) + ", run " + std::to_string(j) +
                          " is not one of the " + std::to_string(E) +
                          " experts");
  return e;
}

ExpertGroups groupByExpert(const int32_t *experts, int64_t rows, int64_t k,
                           int64_t E) {
  ExpertGroups g;
  g.begin.assign(size_t(E + 1), 0);
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t j = 0; j < k; ++j)
      ++g.begin[size_t(expertAt(experts, k, t, j, E)) + 1];
  for (int64_t e = 0; e < E; ++e)
    g.begin[size_t(e + 1)] += g.begin[size_t(e)];
  g.pairs.resize(size_t(rows * k));
  std::vector<int64_t> next(g.begin.begin(), g.begin.end() - 1);
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t j = 0; j < k; ++j)
      g.pairs[size_t(next[size_t(experts[t * k + j])]++)] = int32_t(t * k + j);
  return g;
}

} // namespace llmc::common
