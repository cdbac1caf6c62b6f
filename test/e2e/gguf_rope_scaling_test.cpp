//===- gguf_rope_scaling_test.cpp - rope_scaling through GGUF -------------===//
//
// llama.cpp's converter writes linear and yarn rope scaling as
// rope.scaling.* keys and llama3 scaling as per-pair factors
// (rope_freqs.weight) with no key at all. A reference checkpoint given each
// scaling in its config.json must run the same from its safetensors and from
// its GGUF (llmc-make-gguf writes both forms as llama.cpp does): last-position
// logits within the f32 tolerance and the same greedy tokens. Without the
// scaling, the logits move by far more (checked, so the test can fail).
//
//===----------------------------------------------------------------------===//
#include "e2e_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

namespace fs = std::filesystem;
using namespace llmc::e2e;
using nlohmann::json;

struct Output {
  json ids;
  std::vector<float> logits;
};

Output runPlan(const std::string &plan, const std::string &backend,
               const json &prompt) {
  const std::string logits = tempPath("rope.last.bin");
  std::string cmd = kBin + "/llmc run " + plan + " --backend " + backend +
                    " --prompt-ids " + joinIds(prompt) +
                    " --max-new-tokens 8 --ignore-eos --json --dump-logits " +
                    logits;
  Command r = runCommand(cmd, false);
  EXPECT_EQ(r.status, 0) << cmd << "\n" << r.out;
  Output o;
  size_t brace = r.out.rfind("\n{");
  o.ids = json::parse(r.out.substr(brace == std::string::npos ? 0 : brace + 1),
                      nullptr, false)["output_ids"];
  std::ifstream in(logits, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  o.logits.resize(bytes.size() / 4);
  std::memcpy(o.logits.data(), bytes.data(), o.logits.size() * 4);
  return o;
}

double maxAbsDiff(const std::vector<float> &a, const std::vector<float> &b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, double(std::fabs(a[i] - b[i])));
  return m;
}

class GgufRopeScaling : public ::testing::TestWithParam<const char *> {};

TEST_P(GgufRopeScaling, SafetensorsAndGgufAgree) {
  const std::string model = kData + "/models/llama-gqa";
  json ref = readJson(model + "/reference/reference.json");
  double tol = ref["tolerance"]["logits_max_abs_diff"].get<double>();
  const json &prompt = ref["prompts"].back()["input_ids"];
  // A short original context puts llama3's smooth band inside head_dim 16.
  json scaling = json::parse(GetParam());
  const std::string dir = tempPath(std::string("llama-gqa-") +
                                   scaling["rope_type"].get<std::string>());
  fs::create_directories(dir);
  for (const auto &e : fs::directory_iterator(model))
    if (e.is_regular_file())
      fs::copy_file(e.path(), dir + "/" + e.path().filename().string(),
                    fs::copy_options::overwrite_existing);
  json config = readJson(model + "/config.json");
  config["rope_scaling"] = scaling;
  std::ofstream(dir + "/config.json") << config.dump(2);

  const std::string st = dir + "/st.plan", gg = dir + "/gg.plan",
                    gguf = dir + "/model.gguf", plain = dir + "/plain.plan";
  for (const std::string &cmd :
       {kBin + "/llmc compile " + dir + " -o " + st,
        kBin + "/llmc-make-gguf " + dir + " -o " + gguf + " --type f32",
        kBin + "/llmc compile " + gguf + " -o " + gg,
        kBin + "/llmc compile " + model + " -o " + plain}) {
    Command c = runCommand(cmd);
    ASSERT_EQ(c.status, 0) << cmd << "\n" << c.out;
  }
  for (const std::string &backend : usableBackends()) {
    SCOPED_TRACE(backend);
    Output a = runPlan(st, backend, prompt), b = runPlan(gg, backend, prompt),
           unscaled = runPlan(plain, backend, prompt);
    EXPECT_LE(maxAbsDiff(a.logits, b.logits), tol);
    EXPECT_EQ(a.ids, b.ids);
    EXPECT_GT(maxAbsDiff(a.logits, unscaled.logits), 100 * tol);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Types, GgufRopeScaling,
    ::testing::Values(
        R"({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 32})",
        R"({"rope_type": "linear", "factor": 4.0})",
        R"({"rope_type": "yarn", "factor": 4.0,
            "original_max_position_embeddings": 32})"));

} // namespace
