//===- test_util.h - Temp files and error matchers for weights tests -----===//
#pragma once

#include "llmc/support/error.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace llmc::weights::test {

inline std::string modelDir(const std::string &name) {
  return std::string(LLMC_DATA_DIR) + "/models/" + name;
}

/// A fresh directory under the system temp dir, removed at the end.
class TempDir {
public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "llmc-weights-XXXXXX")
            .string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string &name) const {
    return (std::filesystem::path(path_) / name).string();
  }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// A safetensors file: 8-byte LE length, `header`, then `data`.
inline std::string safetensorsBytes(const std::string &header,
                                    const std::string &data = "") {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

/// Runs `f`, expects llmc::Error whose message contains every substring.
template <typename F>
void expectError(F &&f, const std::vector<std::string> &substrings) {
  try {
    f();
    ADD_FAILURE() << "expected llmc::Error";
  } catch (const llmc::Error &e) {
    std::string msg = e.what();
    for (const auto &s : substrings)
      EXPECT_NE(msg.find(s), std::string::npos)
          << "message lacks '" << s << "': " << msg;
  }
}

} // namespace llmc::weights::test
