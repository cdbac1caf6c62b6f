//===- e2e_util.cpp - Running the llmc binary from end-to-end tests -------===//

#include "e2e_util.h"

#include "../scratch_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <map>

namespace llmc::e2e {

Command runCommand(const std::string &cmd, bool mergeStderr) {
  std::string full = "LLMC_BACKEND_PATH=" + kBin + " " + cmd +
                     (mergeStderr ? " 2>&1" : " 2>/dev/null");
  FILE *p = popen(full.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    out.append(buf.data(), n);
  return {pclose(p), out};
}

std::string tempPath(const std::string &name) {
  return llmc::test::scratchPath(name);
}

std::string compilePlan(const std::string &model, const std::string &flags) {
  static std::map<std::string, std::string> cache;
  std::string key = model + flags;
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  std::string tag = flags;
  std::replace(tag.begin(), tag.end(), ' ', '_');
  std::string out = tempPath(model + tag + ".plan");
  Command c = runCommand(kBin + "/llmc compile " + kData + "/models/" + model +
                         " -o " + out + " " + flags);
  EXPECT_EQ(c.status, 0) << c.out;
  return cache[key] = out;
}

std::vector<std::string> usableBackends() {
  std::vector<std::string> out = {"ref"};
  Command c = runCommand(kBin + "/llmc backends");
  size_t at = c.out.rfind("cpu ", 0) == 0 ? 0 : c.out.find("\ncpu ");
  if (at != std::string::npos) {
    size_t line = c.out.find("device 0", at);
    if (line != std::string::npos &&
        c.out.compare(c.out.find(": ", line + 10) + 2, 6, "usable") == 0)
      out.push_back("cpu");
  }
  return out;
}

nlohmann::json readJson(const std::string &path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return nlohmann::json::parse(in, nullptr, false);
}

std::string joinIds(const nlohmann::json &ids) {
  std::string s;
  for (const auto &v : ids)
    s += (s.empty() ? "" : ",") + std::to_string(v.get<int>());
  return s;
}

} // namespace llmc::e2e
