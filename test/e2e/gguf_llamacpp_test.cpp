//===- gguf_llamacpp_test.cpp - GGUFs written by llama.cpp, against it ----===//
//
// test/data/gguf-llamacpp holds the bundled model quantized to Q4_K_M by
// llama.cpp's own quantizer (Q4_K, Q6_K and F16 tensors) and what llama.cpp
// itself makes of it: the argmax at every position of a 40-token prompt and
// the 16-token greedy continuation (make.sh there). llmc compiles the file
// and, on every usable backend, must agree at ≥ 95% of the positions and
// give the same greedy tokens (llama.cpp's last top-1/top-2 gap is 0.9).
//
//===----------------------------------------------------------------------===//
#include "e2e_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

namespace {

using namespace llmc::e2e;
using nlohmann::json;

TEST(GgufFromLlamaCpp, Q4KMAgreesWithLlamaCpp) {
  const std::string dir = kData + "/gguf-llamacpp/";
  json ref = readJson(dir + "fortune-Q4_K_M.json");
  const std::string plan = tempPath("fortune-Q4_K_M.plan");
  Command c = runCommand(kBin + "/llmc compile " + dir +
                         "fortune-Q4_K_M.gguf -o " + plan);
  ASSERT_EQ(c.status, 0) << c.out;
  const size_t vocab = 6000, positions = ref["argmax"].size();
  for (const std::string &backend : usableBackends()) {
    SCOPED_TRACE(backend);
    const std::string logits = tempPath("fortune-Q4_K_M." + backend + ".bin");
    std::string cmd = kBin + "/llmc run " + plan + " --backend " + backend +
                      " --prompt-ids " + joinIds(ref["prompt_ids"]) +
                      " --max-new-tokens " +
                      std::to_string(ref["greedy"].size()) +
                      " --json --dump-prompt-logits " + logits;
    Command r = runCommand(cmd, false);
    ASSERT_EQ(r.status, 0) << cmd << "\n" << r.out;
    json out = json::parse(
        r.out.substr(r.out.rfind('{', r.out.find("\"output_ids\""))), nullptr,
        false);
    std::ifstream in(logits, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    ASSERT_EQ(bytes.size(), positions * vocab * 4);
    std::vector<float> l(positions * vocab);
    std::memcpy(l.data(), bytes.data(), bytes.size());
    size_t same = 0;
    for (size_t i = 0; i < positions; ++i) {
      auto row = l.begin() + static_cast<std::ptrdiff_t>(i * vocab);
      same += size_t(std::max_element(row, row + std::ptrdiff_t(vocab)) -
                     row) == ref["argmax"][i].get<size_t>();
    }
    std::printf("[ agreement ] %s top-1 vs llama.cpp: %zu/%zu\n",
                backend.c_str(), same, positions);
    EXPECT_GE(double(same), 0.95 * double(positions));
    EXPECT_EQ(out["output_ids"], ref["greedy"]);
  }
}

} // namespace
