//===- e2e_util.h - Running the llmc binary from end-to-end tests -*- C++
//-*-===//
//
// ctest runs the cases of one gtest binary as parallel processes, so every
// file these helpers create carries the pid.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace llmc::e2e {

inline const std::string kData = LLMC_DATA_DIR;
inline const std::string kBin = LLMC_BIN_DIR;

struct Command {
  int status;
  std::string out;
};

/// Runs `cmd` with the build's backends on the path; stdout, and stderr too
/// unless `mergeStderr` is false.
Command runCommand(const std::string &cmd, bool mergeStderr = true);

/// A per-process temporary path ending in `name`.
std::string tempPath(const std::string &name);

/// `llmc compile test/data/models/MODEL FLAGS`, once per (model, flags) in
/// this process; fails the current test if compilation fails.
std::string compilePlan(const std::string &model,
                        const std::string &flags = "");

/// ref always; cpu when its plugin loads and is usable here.
std::vector<std::string> usableBackends();

nlohmann::json readJson(const std::string &path);

/// Token ids as `llmc run --prompt-ids` takes them: "1,2,3".
std::string joinIds(const nlohmann::json &ids);

} // namespace llmc::e2e
