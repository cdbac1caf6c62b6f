// Shared helpers of the grammar tests: byte vocabularies, matching whole
// texts, random walks through a grammar and the brute-force mask.
#pragma once

#include "llmc/grammar/matcher.h"
#include "llmc/runtime/sampler.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace llmc::grammar::test {

/// Ids 0..255: one byte each; id 256: EOS (no bytes).
inline std::shared_ptr<const TokenVocabulary> byteVocabulary() {
  return TokenVocabulary::ofBytes();
}
inline constexpr int32_t kByteEos = TokenVocabulary::kByteEos;

inline std::shared_ptr<const CompiledGrammar>
compileForBytes(Grammar g, int64_t warm = 64) {
  static const auto vocab = byteVocabulary();
  return std::make_shared<CompiledGrammar>(std::move(g), vocab, warm);
}

/// Whether the grammar accepts exactly `text`.
inline bool matches(const std::shared_ptr<const CompiledGrammar> &g,
                    const std::string &text) {
  Matcher m(g, {kByteEos});
  for (unsigned char c : text)
    if (!m.accept(c))
      return false;
  return m.canEnd() && m.accept(kByteEos);
}

/// The mask must equal asking allows() of every token.
inline void expectMaskIsExact(Matcher &m, const std::string &where) {
  TokenMask mask(m.grammar().vocabulary().size());
  m.fillMask(mask);
  int32_t wrong = 0, firstWrong = -1;
  for (int32_t id = 0; id < mask.size(); ++id)
    if (mask.test(id) != m.allows(id)) {
      if (firstWrong < 0)
        firstWrong = id;
      ++wrong;
    }
  EXPECT_EQ(wrong, 0) << where << ": first wrong id " << firstWrong << " ('"
                      << (firstWrong >= 0
                              ? m.grammar().vocabulary().bytes(firstWrong)
                              : "")
                      << "'), mask says "
                      << (firstWrong >= 0 && mask.test(firstWrong));
}

/// A random walk: each step draws among the allowed tokens (a third of the
/// time among those holding a closing character, so that walks end). Returns
/// the text, or "" with *finished false if it ran out of steps.
inline std::string randomWalk(Matcher m, sample::Rng &rng, int32_t eos,
                              int maxSteps, bool *finished,
                              bool checkMasks = false) {
  const TokenVocabulary &v = m.grammar().vocabulary();
  TokenMask mask(v.size());
  std::string text;
  *finished = false;
  for (int step = 0; step < maxSteps; ++step) {
    if (checkMasks)
      expectMaskIsExact(m, "after '" + text + "'");
    m.fillMask(mask);
    std::vector<int32_t> allowed, closing;
    for (int32_t id = 0; id < v.size(); ++id)
      if (mask.test(id)) {
        allowed.push_back(id);
        if (id == eos ||
            v.bytes(id).find_first_of("\"]},\n") != std::string::npos)
          closing.push_back(id);
      }
    EXPECT_FALSE(allowed.empty()) << "a dead end after '" << text << "'";
    if (allowed.empty())
      return "";
    const std::vector<int32_t> &from =
        !closing.empty() && rng.uniform() < 0.33 ? closing : allowed;
    const int32_t id = from[rng.next() % from.size()];
    EXPECT_TRUE(m.accept(id));
    if (id == eos || m.ended()) {
      *finished = true;
      return text;
    }
    text += v.bytes(id);
    if (m.mustEnd()) {
      *finished = true;
      return text;
    }
  }
  return "";
}

} // namespace llmc::grammar::test
