//===- reference_test.cpp - llmc compile + run against PyTorch references
//--===//
//
// For every checkpoint in test/data/models: compile plans with the `llmc`
// binary, run every reference prompt on every usable backend, and compare
// with the outputs of an independent PyTorch implementation (see
// test/data/models/README.md): f32 logits within the documented 2e-4 and the
// exact 16-token greedy continuation. bf16, int8 and int4 plans are checked
// against looser, documented bounds.
//
//===----------------------------------------------------------------------===//

#include "e2e_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using namespace llmc::e2e;

std::vector<float> readFloats(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  std::vector<float> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
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

/// An MoE checkpoint's routing sensitivity, measured by an implementation
/// independent of llmc (test/data/models/moe_sensitivity.py): what an exact
/// bf16 / quantized / quantized-KV run does to its routing and logits. Null
/// for a dense checkpoint. A router is a discontinuity: where an expert
/// swaps in the simulation, llmc's run must land where the simulation does,
/// not inside the bounds of a dense model.
json moeSensitivity(const std::string &model) {
  const std::string path =
      kData + "/models/" + model + "/reference/moe_sensitivity.json";
  return fs::exists(path) ? readJson(path) : json();
}

struct RunResult {
  json out;
  std::vector<float> lastLogits, allLogits;
};

RunResult run(const std::string &planPath, const std::string &backend,
              const json &prompt, bool all) {
  std::string base = tempPath("run");
  std::string cmd = kBin + "/llmc run " + planPath + " --backend " + backend +
                    " --prompt-ids " + joinIds(prompt["input_ids"]) +
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

class Reference
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(Reference, F32LogitsAndGreedyTokensMatch) {
  auto [model, backend] = GetParam();
  std::string dir = kData + "/models/" + model + "/reference/";
  json ref = readJson(dir + "reference.json");
  double tol = ref["tolerance"]["logits_max_abs_diff"].get<double>();
  std::string p = compilePlan(model, "--dtype f32");
  for (const json &prompt : ref["prompts"]) {
    SCOPED_TRACE(model + " " + backend + " " +
                 prompt["name"].get<std::string>());
    bool all = prompt.contains("all_logits");
    RunResult r = run(p, backend, prompt, all);
    EXPECT_LE(
        maxAbsDiff(
            r.lastLogits,
            readFloats(dir + prompt["last_logits"]["file"].get<std::string>())),
        tol);
    if (all) {
      EXPECT_LE(maxAbsDiff(
                    r.allLogits,
                    readFloats(
                        dir + prompt["all_logits"]["file"].get<std::string>())),
                tol);
    }
    EXPECT_EQ(r.out["output_ids"], prompt["greedy"]["output_ids"]);
  }
}

// Every optimisation pass is optional: with any one of them off, the plan
// still reproduces the reference (logits and greedy tokens).
TEST_P(Reference, EachOptimisationPassCanBeDisabled) {
  auto [model, backend] = GetParam();
  std::string dir = kData + "/models/" + model + "/reference/";
  json ref = readJson(dir + "reference.json");
  double tol = ref["tolerance"]["logits_max_abs_diff"].get<double>();
  for (const char *pass : {"llmc-fuse", "llmc-plan-memory"}) {
    std::string p = compilePlan(model, std::string("--disable-pass ") + pass);
    for (const json &prompt : ref["prompts"]) {
      SCOPED_TRACE(model + " " + backend + " without " + pass + " " +
                   prompt["name"].get<std::string>());
      RunResult r = run(p, backend, prompt, false);
      EXPECT_LE(maxAbsDiff(r.lastLogits,
                           readFloats(dir + prompt["last_logits"]["file"]
                                                .get<std::string>())),
                tol);
      EXPECT_EQ(r.out["output_ids"], prompt["greedy"]["output_ids"]);
    }
  }
}

// The same checkpoint as a GGUF in llama.cpp's layout (llmc-make-gguf: its
// names, Q/K rows permuted for ggml's RoPE, GPT-2's Conv1D weights stored
// [out, in], the tokenizer as tokenizer.ggml.*), F32: the GGUF import path
// reproduces the reference as the safetensors one does.
TEST_P(Reference, F32GgufMatchesReference) {
  auto [model, backend] = GetParam();
  std::string dir = kData + "/models/" + model + "/reference/";
  json config = readJson(kData + "/models/" + model + "/config.json");
  const std::string arch = config["architectures"][0];
  if (arch == "MistralForCausalLM")
    GTEST_SKIP() << arch << ": llama.cpp writes it as 'llama', without "
                 << "its sliding window, so no GGUF reproduces this reference";
  if (arch == "Gemma2ForCausalLM" || arch == "Gemma3ForCausalLM")
    GTEST_SKIP() << arch << ": llama.cpp's gemma2/gemma3 have no key for "
                 << "query_pre_attn_scalar (24 here) and derive head_dim "
                 << "(32), so no GGUF reproduces this reference; "
                 << "gguf_llamacpp_test checks the GGUF path on a variant with "
                 << "32";
  json ref = readJson(dir + "reference.json");
  double tol = ref["tolerance"]["logits_max_abs_diff"].get<double>();
  const std::string gguf = tempPath(model + ".f32.gguf");
  const std::string plan = tempPath(model + ".gguf.plan");
  Command c = runCommand(kBin + "/llmc-make-gguf " + kData + "/models/" +
                         model + " -o " + gguf + " --type f32");
  ASSERT_EQ(c.status, 0) << c.out;
  c = runCommand(kBin + "/llmc compile " + gguf + " -o " + plan);
  ASSERT_EQ(c.status, 0) << c.out;
  for (const json &prompt : ref["prompts"]) {
    SCOPED_TRACE(model + " " + backend + " " +
                 prompt["name"].get<std::string>());
    RunResult r = run(plan, backend, prompt, false);
    EXPECT_LE(
        maxAbsDiff(
            r.lastLogits,
            readFloats(dir + prompt["last_logits"]["file"].get<std::string>())),
        tol);
    EXPECT_EQ(r.out["output_ids"], prompt["greedy"]["output_ids"]);
  }
}

/// Index of the largest value in row `r` of [rows, vocab] logits.
size_t argmaxRow(const std::vector<float> &l, size_t vocab, size_t r) {
  auto begin = l.begin() + static_cast<std::ptrdiff_t>(r * vocab);
  return static_cast<size_t>(
      std::max_element(begin, begin + static_cast<std::ptrdiff_t>(vocab)) -
      begin);
}

/// The gap between the two largest logits of `l`.
double top2Margin(const std::vector<float> &l) {
  std::vector<float> v = l;
  std::partial_sort(v.begin(), v.begin() + 2, v.end(), std::greater<float>());
  return v[0] - v[1];
}

/// A copy of checkpoint `model` whose F32 weights are rounded to bf16
/// (nearest even) and kept F32: the f32 plan of it computes, exactly, what
/// a bf16 plan should, so it measures what rounding alone does to a
/// checkpoint's logits.
std::string bf16RoundedCheckpoint(const std::string &model) {
  const fs::path src = kData + "/models/" + model;
  const fs::path dst = tempPath(model + ".bf16-rounded");
  fs::remove_all(dst);
  fs::create_directories(dst);
  for (const auto &e : fs::directory_iterator(src))
    if (e.is_regular_file())
      fs::copy_file(e.path(), dst / e.path().filename());
  std::fstream f(dst / "model.safetensors",
                 std::ios::in | std::ios::out | std::ios::binary);
  uint64_t n = 0;
  f.read(reinterpret_cast<char *>(&n), 8);
  std::string text(n, '\0');
  f.read(text.data(), static_cast<std::streamsize>(n));
  const json header = json::parse(text);
  for (const auto &[name, t] : header.items()) {
    if (name == "__metadata__" || t["dtype"] != "F32")
      continue;
    const uint64_t at = 8 + n + t["data_offsets"][0].get<uint64_t>();
    std::vector<uint32_t> v((t["data_offsets"][1].get<uint64_t>() -
                             t["data_offsets"][0].get<uint64_t>()) /
                            4);
    f.seekg(static_cast<std::streamoff>(at));
    f.read(reinterpret_cast<char *>(v.data()),
           static_cast<std::streamsize>(v.size() * 4));
    for (uint32_t &u : v)
      u = ((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16) << 16;
    f.seekp(static_cast<std::streamoff>(at));
    f.write(reinterpret_cast<const char *>(v.data()),
            static_cast<std::streamsize>(v.size() * 4));
  }
  return dst.string();
}

// bf16 weights are outside the f32 tolerance; the documented loose bound is
// |logit - reference| < 0.1, with the greedy tokens kept wherever the
// reference's top-1/top-2 gap is wider than twice that bound. Where rounding
// the checkpoint's weights (and KV) to bf16 alone moves its logits by more
// than half that bound (llama-gqa and phi4-mini-longrope, whose logits are
// the largest), measured by the rounded weights' plan with f32 weights and a
// bf16 cache, the bound holds against that run: the bf16 kernels are
// checked, and the checkpoint's own sensitivity printed.
TEST_P(Reference, Bf16PlanStaysCloseToReference) {
  auto [model, backend] = GetParam();
  std::string dir = kData + "/models/" + model + "/reference/";
  json ref = readJson(dir + "reference.json");
  std::string p = compilePlan(model, "--dtype bf16");
  const json moe = moeSensitivity(model);
  std::string rounded;
  for (const json &prompt : ref["prompts"]) {
    const std::string name = prompt["name"].get<std::string>();
    SCOPED_TRACE(model + " " + backend + " " + name);
    RunResult r = run(p, backend, prompt, false);
    std::vector<float> expected =
        readFloats(dir + prompt["last_logits"]["file"].get<std::string>());
    double diff = maxAbsDiff(r.lastLogits, expected);
    if (diff >= 0.05 && moe.is_null()) {
      if (rounded.empty()) {
        rounded = tempPath(model + ".bf16-rounded.plan");
        Command c =
            runCommand(kBin + "/llmc compile " + bf16RoundedCheckpoint(model) +
                       " -o " + rounded + " --kv-dtype bf16");
        ASSERT_EQ(c.status, 0) << c.out;
      }
      std::vector<float> exact =
          run(rounded, backend, prompt, false).lastLogits;
      const double sensitivity = maxAbsDiff(exact, expected);
      if (sensitivity >= 0.05) {
        std::printf("[ bf16      ] %s %s %s: bf16 weights and KV, computed "
                    "in f32, move the logits by %.4f; the bf16 plan is %.4f "
                    "from that, %.4f from the reference\n",
                    model.c_str(), backend.c_str(), name.c_str(), sensitivity,
                    maxAbsDiff(r.lastLogits, exact), diff);
        EXPECT_LT(maxAbsDiff(r.lastLogits, exact), 0.1);
        diff = 0; // bounded against the rounded run; tokens checked below
      }
    }
    // Where an exact bf16 run swaps an expert (a near-tied router), the
    // logits move by what the simulation measured; the 0.1 bound holds
    // around that. The simulation keeps activations in f32: a backend that
    // rounds them to bf16 as well (cpu on AVX512-BF16, as llama.cpp does)
    // may fall on the reference's side of the tie instead, and then the
    // plain 0.1 bound holds.
    const json *flipped =
        moe.is_null() ? nullptr : &moe["prompts"][name]["bf16_weights"];
    if (flipped && (*flipped)["routing_changes"].get<int>() > 0) {
      const double simulated = (*flipped)["last_logits_max_diff"].get<double>();
      std::printf("[ routing   ] %s %s %s: bf16 swaps %d experts in the "
                  "simulation (its max |diff| %.3f), llmc %.3f\n",
                  model.c_str(), backend.c_str(), name.c_str(),
                  (*flipped)["routing_changes"].get<int>(), simulated, diff);
      EXPECT_TRUE(std::fabs(diff - simulated) < 0.1 || diff < 0.1)
          << "neither the simulated routing nor the reference's";
      continue;
    }
    EXPECT_LT(diff, 0.1);
    if (prompt["greedy"]["min_top2_margin"].get<double>() > 0.2) {
      EXPECT_EQ(r.out["output_ids"], prompt["greedy"]["output_ids"]);
    } else if (top2Margin(expected) > 0.2) {
      EXPECT_EQ(r.out["output_ids"][0], prompt["greedy"]["output_ids"][0]);
    }
  }
}

/// The prompt whose logits were recorded at every position.
const json *longestPrompt(const json &ref) {
  const json *longest = nullptr;
  for (const json &prompt : ref["prompts"])
    if (prompt.contains("all_logits"))
      longest = &prompt;
  return longest;
}

/// Rows [*, vocab] of a and b whose argmax agrees.
size_t sameTop1(const std::vector<float> &a, const std::vector<float> &b,
                size_t vocab) {
  size_t same = 0;
  for (size_t i = 0; i < a.size() / vocab; ++i)
    same += argmaxRow(a, vocab, i) == argmaxRow(b, vocab, i);
  return same;
}

// Weight-only int8 / int4 plans: the top-1 token at every position of the
// 40-token prompt, compared with the f32 plan's. Random-weight checkpoints
// have small logit gaps (down to 1e-2), so the floors are low: measured
// int8 0.875-0.975 and int4 0.325-0.65 over the eight checkpoints; a broken
// kernel or packing lands near chance (1/vocab). The bundled trained model
// is where quantization quality is measured (perplexity).
TEST_P(Reference, QuantizedPlansAgreeWithF32) {
  auto [model, backend] = GetParam();
  std::string dir = kData + "/models/" + model + "/reference/";
  json ref = readJson(dir + "reference.json");
  const json *longest = longestPrompt(ref);
  ASSERT_NE(longest, nullptr);
  size_t vocab = ref["vocab_size"].get<size_t>();
  RunResult f32 =
      run(compilePlan(model, "--dtype f32"), backend, *longest, true);
  const json moe = moeSensitivity(model);
  for (auto [quant, floor] :
       {std::pair{"int8", 0.8}, std::pair{"int4", 0.25}}) {
    if (!moe.is_null())
      std::printf(
          "[ routing   ] %s %s: the exact simulation swaps %d "
          "experts, top-1 agreement %.3f\n",
          model.c_str(), quant,
          moe["len40"]["weights"][quant]["routing_changes"].get<int>(),
          moe["len40"]["weights"][quant]["top1_agreement"].get<double>());
    RunResult q = run(compilePlan(model, std::string("--quant ") + quant),
                      backend, *longest, true);
    ASSERT_EQ(q.allLogits.size(), f32.allLogits.size());
    size_t rows = f32.allLogits.size() / vocab;
    size_t same = sameTop1(q.allLogits, f32.allLogits, vocab);
    double agreement = static_cast<double>(same) / static_cast<double>(rows);
    std::printf("[ agreement ] %s %s %s top-1 vs f32: %.3f (%zu/%zu)\n",
                model.c_str(), backend.c_str(), quant, agreement, same, rows);
    EXPECT_GE(agreement, floor) << quant;
  }
}

// The f32 plan with its KV cache in each dtype, chosen at run time: the
// top-1 token at every position of the 40-token prompt and the 16 greedy
// tokens after it, against the same plan with an f32 cache. Floors as for
// weight quantization above: a few points under the measured agreement
// (README: KV cache dtypes), far above what a broken cache gives.
TEST_P(Reference, KvDtypesAgreeWithF32Kv) {
  auto [model, backend] = GetParam();
  std::string dir = kData + "/models/" + model + "/reference/";
  json ref = readJson(dir + "reference.json");
  const json *longest = longestPrompt(ref);
  ASSERT_NE(longest, nullptr);
  const size_t vocab = ref["vocab_size"].get<size_t>();
  const std::string plan = compilePlan(model, "--dtype f32");
  RunResult f32 = run(plan, backend, *longest, true);
  // The plan's own cache is f32: the same tokens as the reference.
  EXPECT_EQ(f32.out["output_ids"], (*longest)["greedy"]["output_ids"]);
  const json moe = moeSensitivity(model);
  for (auto [kv, floor] : {std::pair{"bf16", 0.9}, std::pair{"f16", 0.95},
                           std::pair{"int8", 0.9}, std::pair{"fp8", 0.8}}) {
    // An 8-bit cache that swaps experts in the exact simulation agrees as
    // often as the simulation does (mixtral-moe fp8: 31/40, 4 swaps).
    if (!moe.is_null() && moe["len40"]["kv"].contains(kv) &&
        moe["len40"]["kv"][kv]["routing_changes"].get<int>() > 0)
      floor = std::min(
          floor, moe["len40"]["kv"][kv]["top1_agreement"].get<double>() - 0.05);
    RunResult q = run(plan + " --kv-dtype " + kv, backend, *longest, true);
    ASSERT_EQ(q.allLogits.size(), f32.allLogits.size());
    const size_t rows = f32.allLogits.size() / vocab;
    const size_t same = sameTop1(q.allLogits, f32.allLogits, vocab);
    size_t greedySame = 0;
    for (size_t i = 0; i < 16; ++i)
      greedySame += q.out["output_ids"][i] == f32.out["output_ids"][i];
    const double agreement = double(same) / double(rows);
    std::printf("[ agreement ] %s %s KV %s top-1 vs f32 KV: %.3f (%zu/%zu), "
                "greedy %zu/16, max |logit diff| %.4f\n",
                model.c_str(), backend.c_str(), kv, agreement, same, rows,
                greedySame, maxAbsDiff(q.allLogits, f32.allLogits));
    EXPECT_GE(agreement, floor) << "KV " << kv;
    // The random-weight checkpoints' greedy steps are near-ties (top-2
    // margins down to 0.002), so their greedy tokens are only printed; the
    // trained bundled model's are held: measured 16/16 for every dtype.
    if (model == "fortune-llama") {
      EXPECT_GE(greedySame, std::string(kv) == "fp8" ? 12u : 16u)
          << "KV " << kv;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, Reference,
    ::testing::Combine(::testing::ValuesIn(models()),
                       ::testing::ValuesIn(usableBackends())),
    [](const auto &info) {
      std::string n = std::get<0>(info.param) + "_" + std::get<1>(info.param);
      std::replace(n.begin(), n.end(), '-', '_');
      return n;
    });

} // namespace
