//===- perplexity_test.cpp - llmc perplexity on the bundled trained model -===//
//
// test/data/models/fortune-llama was trained by tools/demo-model/train.py,
// which recorded its own perplexity of heldout.txt in training.json. llmc's
// f32 measurement must equal it within 0.5% on every usable backend; bf16,
// int8 and int4 plans are measured against f32 (the README's quantization
// table), and each KV-cache dtype against an f32 cache; all must stay within
// bounds that a broken kernel or packing would
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

Measured measure(const std::string &plan, const std::string &backend, int ctx,
                 const std::string &extra = "") {
  std::string cmd = kBin + "/llmc perplexity " + plan + " --file " + kDir +
                    "/heldout.txt --ctx " + std::to_string(ctx) +
                    " --backend " + backend + " --json " + extra;
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

// The KV cache in each dtype, chosen at run time, against the f32 cache of
// the same plan, with f32 and with int4 weights (README: KV cache dtypes).
// The bounds are issue 21's: int8 within 0.5%, fp8 within 2%; bf16 and f16
// are held to int8's. Measured: 0.01-0.13% (README); a lost scale or a
// misplaced row costs orders of magnitude more.
TEST_P(BundledModel, KvDtypesStayCloseToF32Kv) {
  const std::string backend = GetParam();
  // ref reads the same rows through the same codec (backends/common), and
  // the conformance suite holds cpu to ref for every KV dtype; ref's
  // perplexity over the whole text takes minutes per dtype.
  const std::string limit = backend == "ref" ? "--max-tokens 1024" : "";
  for (const char *weights : {"--dtype f32", "--quant int4"}) {
    const std::string plan = compilePlan(kModel, weights);
    const double f32 =
        measure(plan, backend, 256, limit + " --kv-dtype f32").perplexity;
    ASSERT_GT(f32, 1.0);
    for (auto [kv, bound] :
         {std::pair{"bf16", 1.005}, std::pair{"f16", 1.005},
          std::pair{"int8", 1.005}, std::pair{"fp8", 1.02}}) {
      const double q =
          measure(plan, backend, 256, limit + " --kv-dtype " + kv).perplexity;
      std::printf("[ perplexity ] %s %s, KV %s: %.4f (f32 KV %.4f, ratio "
                  "%.4f)\n",
                  backend.c_str(), weights, kv, q, f32, q / f32);
      EXPECT_LT(q / f32, bound) << weights << ", KV " << kv;
      EXPECT_GT(q / f32, 1.0 / bound) << weights << ", KV " << kv;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BundledModel,
                         ::testing::ValuesIn(usableBackends()),
                         [](const auto &info) { return info.param; });

} // namespace
