//===- long_rope_test.cpp - LongRoPE's switch, crossed in every way -------===//
//
// test/data/models/phi4-mini-longrope switches from the short to the long
// factors past 24 positions. Hugging Face recomputes the cache there, so a
// sequence that grows past the switch one decode step at a time must end
// with the logits of the reference's one 40-token forward (len40), and one
// cut back under the switch must rotate with the short factors again.
//
//===----------------------------------------------------------------------===//

#include "llmc/runtime/engine.h"

#include "../compiled_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace llmc {
namespace {

// The len40 prompt of the fixture's reference.json.
const std::vector<int32_t> kLen40 = {
    46,   1198, 510,  261, 257, 640, 11,   287, 257,  1402, 410, 359, 496, 416,
    262,  384,  64,   11,  612, 300, 1572, 281, 1468, 277,  271, 372, 805, 508,
    1297, 336,  1749, 284, 597, 505, 508,  561, 1351, 268,  13,  412};
constexpr int64_t kSwitch = 24;
constexpr float kTolerance = 2e-4f; // reference.json's logits_max_abs_diff

std::vector<float> referenceLogits(const std::string &file) {
  std::ifstream in(std::string(LLMC_DATA_DIR) +
                       "/models/phi4-mini-longrope/reference/" + file,
                   std::ios::binary);
  std::vector<float> out(2048);
  in.read(reinterpret_cast<char *>(out.data()),
          static_cast<std::streamsize>(out.size() * sizeof(float)));
  EXPECT_TRUE(in) << file;
  return out;
}

using test::maxAbsDiff;

class LongRope : public test::CompiledPlanBackendTest<LongRope> {
public:
  static constexpr const char *kModel = "phi4-mini-longrope";

protected:
  EngineOptions options(bool prefixCaching = false) {
    EngineOptions o;
    o.backend = GetParam();
    o.threads = 2;
    o.contextLength = 64;
    o.prefixCaching = prefixCaching;
    return o;
  }
  std::unique_ptr<Engine> engine(bool prefixCaching = false) {
    return std::make_unique<Engine>(*plan_, *registry_, options(prefixCaching));
  }
  /// The last logits of a fresh prefill of `tokens`.
  std::vector<float> fresh(std::span<const int32_t> tokens) {
    return test::freshPrefillLogits(*plan_, *registry_, options(), tokens);
  }
};

TEST_P(LongRope, DecodingPastTheSwitchEndsWhereOneForwardDoes) {
  auto e = engine();
  EXPECT_EQ(e->ropeSwitch(), kSwitch);
  std::vector<float> logits(static_cast<size_t>(e->vocabSize()));
  int32_t seq = e->newSequence();
  e->prefill(seq, std::span(kLen40).first(20), logits.data());
  for (size_t i = 20; i < kLen40.size(); ++i) {
    int32_t t = kLen40[i];
    e->decode(std::span(&seq, 1), std::span(&t, 1), logits.data());
    // Each step agrees with a fresh prefill of the same tokens: under the
    // switch on the short factors, past it on the long ones throughout.
    EXPECT_LT(maxAbsDiff(logits, fresh(std::span(kLen40).first(i + 1))),
              kTolerance)
        << "after " << i + 1 << " tokens";
  }
  EXPECT_LT(maxAbsDiff(logits, referenceLogits("len40.last_logits.f32.bin")),
            kTolerance);
  e->releaseSequence(seq);
  e->checkIdle();
}

TEST_P(LongRope, CutBackUnderTheSwitchRotatesShortAgain) {
  auto e = engine();
  std::vector<float> logits(static_cast<size_t>(e->vocabSize()));
  int32_t seq = e->newSequence();
  e->prefill(seq, kLen40, logits.data());
  EXPECT_LT(maxAbsDiff(logits, referenceLogits("len40.last_logits.f32.bin")),
            kTolerance);
  e->truncate(seq, 20);
  int32_t t = kLen40[20];
  e->decode(std::span(&seq, 1), std::span(&t, 1), logits.data());
  EXPECT_LT(maxAbsDiff(logits, fresh(std::span(kLen40).first(21))), kTolerance);
  e->releaseSequence(seq);
  e->checkIdle();
}

// Prefix caching stays on: a long prompt never reuses blocks a short one
// computed (nor the reverse), and each still gives its fresh logits.
TEST_P(LongRope, CachedBlocksAreSharedOnlyOnTheirSideOfTheSwitch) {
  auto e = engine(true);
  ASSERT_TRUE(e->kv().prefixCaching());
  std::vector<float> logits(static_cast<size_t>(e->vocabSize()));
  std::span<const int32_t> shortPrompt = std::span(kLen40).first(20);
  int32_t a = e->newSequence();
  e->prefill(a, shortPrompt, logits.data());
  e->releaseSequence(a);
  EXPECT_EQ(e->kv().cachedPrefixLength(shortPrompt, 0), 16);

  int32_t b = e->newSequence();
  EXPECT_EQ(e->attachCachedPrefix(b, kLen40), 0);
  e->prefill(b, kLen40, logits.data());
  EXPECT_LT(maxAbsDiff(logits, referenceLogits("len40.last_logits.f32.bin")),
            kTolerance);
  e->releaseSequence(b);

  int32_t c = e->newSequence();
  const std::vector<int32_t> shortAgain(shortPrompt.begin(), shortPrompt.end());
  EXPECT_EQ(e->attachCachedPrefix(c, shortAgain), 16);
  e->prefill(c, std::span(shortAgain).subspan(16), logits.data());
  EXPECT_LT(maxAbsDiff(logits, fresh(shortPrompt)), kTolerance);
  e->releaseSequence(c);
  e->checkIdle();
}

INSTANTIATE_TEST_SUITE_P(Backends, LongRope,
                         ::testing::Values("ref", "cpu", "cuda"));

} // namespace
} // namespace llmc
