//===- registry_test.cpp - Finding, refusing and wrapping plugins
//----------===//
#include "op_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace llmc::testing {
namespace {

using ::testing::HasSubstr;

bool mentions(const std::vector<std::string> &lines, const std::string &a,
              const std::string &b) {
  for (const std::string &line : lines)
    if (line.find(a) != std::string::npos && line.find(b) != std::string::npos)
      return true;
  return false;
}

TEST(Registry, FindsRefAndNullOnTheSearchPath) {
  const BackendRegistry &r = registry();
  const LoadedBackend *ref = r.find("ref");
  ASSERT_NE(ref, nullptr);
  EXPECT_THAT(ref->path, HasSubstr("libllmc-backend-ref.so"));
  ASSERT_EQ(ref->devices().size(), 1u);
  EXPECT_STREQ(ref->devices()[0].name, "CPU (reference kernels)");
  EXPECT_TRUE(ref->usable());

  const LoadedBackend *null = r.find("null");
  ASSERT_NE(null, nullptr);
  ASSERT_EQ(null->devices().size(), 1u);
  EXPECT_EQ(null->devices()[0].usable, 0);
  EXPECT_STREQ(null->devices()[0].reason,
               "the null backend is a template and runs nothing");
  EXPECT_FALSE(null->usable());
}

TEST(Registry, OneFileOnTwoSearchDirectoriesIsOnePlugin) {
  // bin/ is both next to this executable and on LLMC_BACKEND_PATH.
  BackendRegistry r =
      BackendRegistry::discover({LLMC_BIN_DIR, LLMC_BIN_DIR "/."});
  EXPECT_NE(r.find("ref"), nullptr);
  EXPECT_FALSE(mentions(r.problems(), "ref", "also provided")) << "duplicate";
}

TEST(Registry, SearchPathHonoursTheEnvironment) {
  const char *old = std::getenv("LLMC_BACKEND_PATH");
  std::string saved = old ? old : "";
  setenv("LLMC_BACKEND_PATH", "/nonexistent/a::/nonexistent/b", 1);
  std::vector<std::string> dirs = BackendRegistry::searchPath();
  if (old)
    setenv("LLMC_BACKEND_PATH", saved.c_str(), 1);
  else
    unsetenv("LLMC_BACKEND_PATH");
  ASSERT_GE(dirs.size(), 4u);
  EXPECT_EQ(dirs[dirs.size() - 2], "/nonexistent/a");
  EXPECT_EQ(dirs.back(), "/nonexistent/b");
  EXPECT_THAT(dirs[1], HasSubstr("lib/llmc/backends"));
}

TEST(Registry, RefusesBadPluginsWithAReason) {
  const char *old = std::getenv("LLMC_BACKEND_PATH");
  std::string path = std::string(LLMC_TEST_PLUGIN_DIR) + ":" + (old ? old : "");
  std::string saved = old ? old : "";
  setenv("LLMC_BACKEND_PATH", path.c_str(), 1);
  BackendRegistry r = BackendRegistry::discover();
  if (old)
    setenv("LLMC_BACKEND_PATH", saved.c_str(), 1);
  else
    unsetenv("LLMC_BACKEND_PATH");

  std::vector<std::string> problems = r.problems();
  for (const std::string &p : problems)
    std::printf("problem: %s\n", p.c_str());
  EXPECT_EQ(r.find("badabi"), nullptr);
  EXPECT_TRUE(mentions(problems, "libllmc-backend-badabi.so",
                       "ABI 99.0 is not supported by this llmc (1.x)"));
  EXPECT_EQ(r.find("small"), nullptr);
  EXPECT_TRUE(
      mentions(problems, "libllmc-backend-small.so", "smaller than ABI 1.0"));
  // The shadow "ref" scores -5; the real one (0) wins wherever it was found.
  const LoadedBackend *ref = r.find("ref");
  ASSERT_NE(ref, nullptr);
  EXPECT_THAT(ref->path, HasSubstr("libllmc-backend-ref.so"));
  EXPECT_TRUE(mentions(problems, "libllmc-backend-shadow.so", "also provided"));
}

TEST(Registry, NullBackendRefusesToCreateWithAMessage) {
  const LoadedBackend *null = registry().find("null");
  ASSERT_NE(null, nullptr);
  try {
    BackendInstance instance(*null);
    FAIL() << "the null backend created an instance";
  } catch (const BackendError &e) {
    EXPECT_EQ(e.status(), LLMC_UNIMPLEMENTED);
    EXPECT_THAT(e.what(), HasSubstr("null: create is not implemented"));
  }
}

TEST(Registry, InstanceWrapsErrorsAndMoves) {
  BackendInstance a = openBackend("ref");
  BackendInstance b = std::move(a);
  EXPECT_EQ(b.name(), "ref");
  llmc_backend_options options = {0, 3, 0.0f};
  EXPECT_THROW(BackendInstance(*registry().find("ref"), options), BackendError);
  EXPECT_THROW(b.createKvCache({0, 1, 1, LLMC_F32, 16, 1, 0, nullptr}),
               BackendError);
}

} // namespace
} // namespace llmc::testing
