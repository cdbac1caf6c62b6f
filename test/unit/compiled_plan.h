//===- compiled_plan.h - A test checkpoint compiled by llmc -----*- C++ -*-===//
//
// For unit tests of the engine and what sits on it: compiles
// test/data/models/MODEL with the llmc binary (into the process's scratch
// directory) and loads the plan. Call it from
// SetUpTestSuite, and skip each test in SetUp when the plan is null: it says
// why in builds without the compiler, and fails if compilation fails.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "../scratch_dir.h"
#include "llmc/runtime/backend_registry.h"
#include "llmc/runtime/engine.h"
#include "llmc/runtime/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace llmc::test {

/// Leaves `plan` null when it skips or fails. `flags` go to llmc compile.
inline void compileTestPlan(const std::string &model,
                            std::unique_ptr<Plan> &plan,
                            const std::string &flags = "") {
#ifndef LLMC_TEST_HAVE_COMPILER
  (void)plan;
  (void)flags;
  GTEST_SKIP() << "built without the llmc compiler (LLMC_ENABLE_COMPILER=OFF): "
                  "no plan of "
               << model << " to run";
#else
  std::string tag;
  for (char c : model + flags) // a model may be a path (a GGUF)
    tag += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  std::string out = scratchPath(tag + ".plan");
  std::string cmd = std::string(LLMC_BIN_DIR) + "/llmc compile " +
                    LLMC_DATA_DIR + "/models/" + model + " -o " + out + " " +
                    flags + " 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  std::string log;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    log.append(buf.data(), n);
  if (pclose(p) != 0) {
    ADD_FAILURE() << cmd << "\n" << log;
    return;
  }
  plan = Plan::load(out);
#endif
}

/// A suite over one compiled checkpoint: `Derived::kModel`'s plan and the
/// backends in bin/, made once for the suite (CRTP, so each suite has its
/// own); every test skips when there is no plan.
template <typename Derived> class CompiledPlanTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::unique_ptr<Plan> plan;
    compileTestPlan(Derived::kModel, plan);
    if (!plan)
      return;
    plan_ = plan.release();
    registry_ = new BackendRegistry(BackendRegistry::discover({LLMC_BIN_DIR}));
  }
  void SetUp() override {
    if (!plan_)
      GTEST_SKIP() << "no compiled plan (see the suite's set-up)";
  }
  static void TearDownTestSuite() {
    delete plan_;
    delete registry_;
    plan_ = nullptr;
    registry_ = nullptr;
  }
  static inline Plan *plan_ = nullptr;
  static inline BackendRegistry *registry_ = nullptr;
};

/// Why backend `name` cannot run here ("" when it can): a test that is
/// also instantiated for cuda skips with this on a machine without a GPU.
inline std::string unusableBackend(const BackendRegistry &registry,
                                   const std::string &name) {
  const LoadedBackend *b = registry.find(name);
  if (!b)
    return "no backend named '" + name + "' was built";
  if (!b->usable())
    return "backend '" + name + "' is not usable here: " +
           (b->devices().empty() ? std::string("no device")
                                 : std::string(b->devices()[0].reason));
  return "";
}

/// A CompiledPlanTest whose parameter is the backend: one that cannot run
/// here (cuda without a GPU) skips each test with the reason.
template <typename Derived>
class CompiledPlanBackendTest
    : public CompiledPlanTest<Derived>,
      public ::testing::WithParamInterface<const char *> {
protected:
  void SetUp() override {
    CompiledPlanTest<Derived>::SetUp();
    if (this->IsSkipped())
      return;
    if (std::string why = unusableBackend(*this->registry_, this->GetParam());
        !why.empty())
      GTEST_SKIP() << why;
  }
};

/// The last logits of one prefill of `tokens` on a new engine.
inline std::vector<float> freshPrefillLogits(const Plan &plan,
                                             const BackendRegistry &registry,
                                             const EngineOptions &options,
                                             std::span<const int32_t> tokens) {
  Engine e(plan, registry, options);
  std::vector<float> logits(static_cast<size_t>(e.vocabSize()));
  e.prefill(e.newSequence(), tokens, logits.data());
  return logits;
}

inline float maxAbsDiff(const std::vector<float> &a,
                        const std::vector<float> &b) {
  float worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

} // namespace llmc::test
