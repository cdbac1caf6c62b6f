//===- tokenizer_bench.cpp - Tokenizer load time and encode speed ---------===//
//
// tokenizer_bench TEXT_FILE DIR...: for each tokenizer folder (tokenizer.json
// + tokenizer_config.json), the time to load it from tokenizer.json and from
// its compiled form mapped from a file (as a plan holds it), and the encode
// (cold: best of 5 fresh tokenizers; warm: median of 5 on one) and decode
// throughput over TEXT_FILE. One line of
// JSON per tokenizer.
//
//===----------------------------------------------------------------------===//
#include "llmc/support/mapped_file.h"
#include "llmc/tokenizer/tokenizer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double medianSeconds(int runs, const std::function<void()> &fn) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    auto start = Clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TEXT_FILE TOKENIZER_DIR...\n", argv[0]);
    return 2;
  }
  try {
    const std::string text = llmc::readFile(argv[1]);
    for (int a = 2; a < argc; ++a) {
      const std::string dir = argv[a];
      auto files = llmc::tok::findTokenizerFiles(dir);
      double jsonLoad = medianSeconds(3, [&] {
        llmc::tok::loadTokenizerFromBytes(files.kind, files.fileBytes,
                                          files.configJson);
      });
      const std::string compiled =
          llmc::tok::compileTokenizerJson(files.fileBytes, dir);
      const std::string config =
          llmc::tok::compactTokenizerConfig(files.configJson, compiled, dir);
      const std::string path =
          (std::filesystem::temp_directory_path() / "llmc_tokenizer_bench.bin")
              .string();
      std::ofstream(path, std::ios::binary) << compiled;
      std::unique_ptr<llmc::tok::Tokenizer> tokenizer;
      double tableLoad = medianSeconds(9, [&] {
        auto file = std::make_shared<llmc::MappedFile>(path);
        tokenizer = llmc::tok::loadTokenizerFromBytes(
            llmc::tok::TokenizerKind::HFTables, file->bytes(), config, path,
            file);
      });
      // Cold: a fresh tokenizer each time, its word cache empty, as for a
      // new prompt; warm: the same text again.
      std::vector<int32_t> ids;
      double encode = 0;
      for (int run = 0; run < 5; ++run) {
        auto file = std::make_shared<llmc::MappedFile>(path);
        auto fresh = llmc::tok::loadTokenizerFromBytes(
            llmc::tok::TokenizerKind::HFTables, file->bytes(), config, path,
            file);
        double t = medianSeconds(1, [&] { ids = fresh->encode(text, false); });
        encode = run == 0 ? t : std::min(encode, t);
      }
      std::filesystem::remove(path);
      double encodeWarm =
          medianSeconds(5, [&] { ids = tokenizer->encode(text, false); });
      double decode = medianSeconds(5, [&] { (void)tokenizer->decode(ids); });
      const double mb = static_cast<double>(text.size()) / 1e6;
      std::printf("{\"tokenizer\": \"%s\", \"vocab\": %d, \"compiled_bytes\": "
                  "%zu, \"load_json_ms\": %.1f, \"load_compiled_ms\": %.2f, "
                  "\"text_bytes\": %zu, \"tokens\": %zu, \"encode_mb_s\": "
                  "%.2f, \"encode_warm_mb_s\": %.2f, \"decode_mb_s\": %.1f}\n",
                  dir.c_str(), tokenizer->vocabSize(), compiled.size(),
                  jsonLoad * 1e3, tableLoad * 1e3, text.size(), ids.size(),
                  mb / encode, mb / encodeWarm, mb / decode);
      std::fflush(stdout);
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tokenizer_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
