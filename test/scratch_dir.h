//===- scratch_dir.h - One temporary directory per test process -*- C++ -*-===//
//
// Tests that write plans, GGUFs and logits put them under scratchPath():
// a directory of this process (ctest runs cases in parallel processes) under
// gtest's TempDir, removed when the process exits. Plans are tens of
// megabytes and a full ctest run makes thousands: left behind, they fill the
// disk of the machine that runs the suite again and again.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace llmc::test {

class ScratchDir {
public:
  static const std::string &path() {
    static ScratchDir dir;
    return dir.path_;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

private:
  ScratchDir()
      : path_(::testing::TempDir() + "/llmc-test-" + std::to_string(getpid())) {
    std::filesystem::create_directories(path_);
  }
  std::string path_;
};

/// A path for `name` in this process's scratch directory.
inline std::string scratchPath(const std::string &name) {
  return ScratchDir::path() + "/" + name;
}

} // namespace llmc::test
