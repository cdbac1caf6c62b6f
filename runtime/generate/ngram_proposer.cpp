//===- ngram_proposer.cpp - Prompt lookup ---------------------------------===//
//
// Copying workloads (summaries, edits, code that repeats its own names)
// continue a sequence the way an earlier part of it continued: find the
// most recent earlier occurrence of the last n tokens and propose what
// followed it. Longer n-grams are tried first: they predict better.
//
//===----------------------------------------------------------------------===//
#include "llmc/runtime/speculative.h"

#include "llmc/support/error.h"

#include <algorithm>

namespace llmc::spec {

NgramProposer::NgramProposer(int32_t ngramMax) : ngramMax_(ngramMax) {
  if (ngramMax < 1)
    throw Error("--ngram-max must be at least 1, got " +
                std::to_string(ngramMax));
}

void NgramProposer::propose(std::span<Proposal *const> proposals) {
  for (Proposal *p : proposals) {
    p->tokens.clear();
    p->q.clear();
    const std::span<const int32_t> c = p->context;
    const auto L = static_cast<int64_t>(c.size());
    for (int64_t n = std::min<int64_t>(ngramMax_, L - 1); n >= 1; --n) {
      const std::span<const int32_t> suffix = c.subspan(size_t(L - n));
      // The most recent earlier match: it starts before L - n, so at least
      // one token follows it.
      for (int64_t j = L - n - 1; j >= 0; --j) {
        if (!std::equal(suffix.begin(), suffix.end(), c.begin() + j))
          continue;
        const int64_t from = j + n;
        const int64_t to = std::min<int64_t>(from + p->maxTokens, L);
        p->tokens.assign(c.begin() + from, c.begin() + to);
        break;
      }
      if (!p->tokens.empty())
        break;
    }
  }
}

} // namespace llmc::spec
