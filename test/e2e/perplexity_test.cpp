//===- perplexity_test.cpp - llmc perplexity on the bundled trained model -===//
//
// test/data/models/fortune-llama was trained by tools/demo-model/train.py,
// which recorded its own perplexity of heldout.txt in training.json. llmc's
// f32 measurement must equal it within 0.5% on every usable backend; bf16,
// int8 and int4 plans are measured against f32 (the README's quantization
// table) and must stay within bounds that a broken kernel or packing would
// blow through by orders of magnitude (random-weight checkpoints cannot tell
// good quantization from bad; a trained model can).
//
//===----------------------------------------------------------------------===//

#include "e2e_util.h"

#include <gtest/gtest.h>

#include <cstdio>

using nlohmann::json;

namespace {

using namespace llmc::e2e;

const std::string kModel = "fortune-llama";
const std::string kDir = kData + "/models/" + kModel;

struct Measured {
  double perplexity = 0;
  int64_t tokens = 0;
};

Measured measure(const std::string &plan, const std::string &backend, int ctx) {
  std::string cmd = kBin + "/llmc perplexity " + plan + " --file " + kDir +
                    "/heldout.txt --ctx " + std::to_string(ctx) +
                    " --backend " + backend + " --json";
  Command c = runCommand(cmd, /*mergeStderr=*/false);
  EXPECT_EQ(c.status, 0) << cmd << "\n" << c.out;
  json j = json::parse(c.out, nullptr, false);
  if (j.is_discarded() || !j.contains("perplexity")) {
    ADD_FAILURE() << cmd << " printed no JSON:\n" << c.out;
    return {};
  }
  return {j["perplexity"].get<double>(), j["tokens"].get<int64_t>()};
}

class BundledModel : public ::testing::TestWithParam<std::string> {};

TEST_P(BundledModel, F32PerplexityEqualsTheTrainingScripts) {
  const std::string backend = GetParam();
  json training = readJson(kDir + "/training.json");
  const json &recorded = training["heldout_txt"];
  for (int ctx : {128, 256}) {
    SCOPED_TRACE(backend + " ctx " + std::to_string(ctx));
    double expected = recorded["perplexity"][std::to_string(ctx)].get<double>();
    Measured m = measure(compilePlan(kModel, "--dtype f32"), backend, ctx);
    // The same text must give the same tokens: the tokenizer is the same
    // SentencePiece model the script used.
    EXPECT_EQ(m.tokens, recorded["tokens"].get<int64_t>());
    std::printf("[ perplexity ] %s f32 ctx %d: llmc %.4f, train.py %.4f\n",
                backend.c_str(), ctx, m.perplexity, expected);
    EXPECT_NEAR(m.perplexity / expected, 1.0, 0.005);
  }
}

TEST_P(BundledModel, QuantizedPlansStayCloseToF32) {
  const std::string backend = GetParam();
  double f32 =
      measure(compilePlan(kModel, "--dtype f32"), backend, 256).perplexity;
  ASSERT_GT(f32, 1.0);
  // Bounds on perplexity / f32 perplexity, a few times what was measured
  // (README: bf16 1.0000, int8 1.0000, int4 1.0046 and 1.0105 with groups of
  // 128): a wrong scale, group or packing costs far more than that.
  for (auto [flags, bound] :
       {std::pair{"--dtype bf16", 1.005}, std::pair{"--quant int8", 1.005},
        std::pair{"--quant int4", 1.02},
        std::pair{"--quant int4 --group 128", 1.04}}) {
    double q = measure(compilePlan(kModel, flags), backend, 256).perplexity;
    std::printf("[ perplexity ] %s %s: %.4f (f32 %.4f, ratio %.4f)\n",
                backend.c_str(), flags, q, f32, q / f32);
    EXPECT_LT(q / f32, bound) << flags;
    EXPECT_GT(q / f32, 1.0 / bound) << flags;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BundledModel,
                         ::testing::ValuesIn(usableBackends()),
                         [](const auto &info) { return info.param; });

} // namespace
