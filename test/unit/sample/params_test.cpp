#include "llmc/runtime/sampler.h"
#include "llmc/support/error.h"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>

using namespace llmc::sample;

namespace {

// Expects validate() to throw a message containing `needle`.
void expectRejected(const std::function<void(SamplingParams &)> &edit,
                    const std::string &needle) {
  SamplingParams p;
  edit(p);
  try {
    p.validate();
    FAIL() << "accepted, expected an error containing: " << needle;
  } catch (const llmc::Error &e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << e.what();
  }
}

} // namespace

TEST(SamplingParams, DefaultsAndBoundariesAreValid) {
  SamplingParams p;
  EXPECT_NO_THROW(p.validate());
  EXPECT_FALSE(p.greedy());
  p.temperature = 0;
  p.topP = 1;
  p.minP = 1;
  p.presencePenalty = -2;
  p.frequencyPenalty = 2;
  p.repetitionPenalty = 0.01f;
  p.topK = 1;
  EXPECT_NO_THROW(p.validate());
  EXPECT_TRUE(p.greedy());
}

TEST(SamplingParams, TinyTemperatureIsGreedy) {
  SamplingParams p;
  p.temperature = 1e-6f;
  EXPECT_TRUE(p.greedy());
  p.temperature = 1e-4f;
  EXPECT_FALSE(p.greedy());
}

TEST(SamplingParams, EachBadValueNamesItsFlag) {
  expectRejected([](auto &p) { p.temperature = -0.5f; },
                 "--temperature must be a finite number >= 0, got -0.5");
  expectRejected([](auto &p) { p.temperature = INFINITY; }, "--temperature");
  expectRejected([](auto &p) { p.topK = -3; }, "--top-k must be >= 0");
  expectRejected([](auto &p) { p.topK = -3; }, "got -3");
  expectRejected([](auto &p) { p.topP = 1.5f; },
                 "--top-p must be in (0, 1], got 1.5");
  expectRejected([](auto &p) { p.topP = 0.0f; }, "--top-p");
  expectRejected([](auto &p) { p.minP = -0.1f; },
                 "--min-p must be in [0, 1], got -0.1");
  expectRejected([](auto &p) { p.minP = 1.25f; }, "--min-p");
  expectRejected([](auto &p) { p.repetitionPenalty = 0.0f; },
                 "--repetition-penalty must be a finite number > 0, got 0");
  expectRejected([](auto &p) { p.repetitionPenalty = -1.0f; },
                 "--repetition-penalty");
  expectRejected([](auto &p) { p.presencePenalty = 2.5f; },
                 "--presence-penalty must be in [-2, 2], got 2.5");
  expectRejected([](auto &p) { p.frequencyPenalty = -3.0f; },
                 "--frequency-penalty must be in [-2, 2], got -3");
}

TEST(SamplingParams, NaNIsRejectedEverywhere) {
  expectRejected([](auto &p) { p.temperature = NAN; }, "--temperature");
  expectRejected([](auto &p) { p.topP = NAN; }, "--top-p");
  expectRejected([](auto &p) { p.topP = NAN; }, "got nan");
  expectRejected([](auto &p) { p.minP = NAN; }, "--min-p");
  expectRejected([](auto &p) { p.repetitionPenalty = NAN; },
                 "--repetition-penalty");
  expectRejected([](auto &p) { p.presencePenalty = NAN; },
                 "--presence-penalty");
  expectRejected([](auto &p) { p.frequencyPenalty = NAN; },
                 "--frequency-penalty");
}

TEST(SamplingParams, SamplerValidatesOnConstruction) {
  SamplingParams p;
  p.topP = 2;
  EXPECT_THROW(Sampler{p}, llmc::Error);
}
