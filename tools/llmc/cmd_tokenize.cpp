//===- cmd_tokenize.cpp - llmc tokenize PATH --text TEXT | --decode IDS
//----===//

#include "cli_util.h"
#include "commands.h"
#include "llmc/runtime/plan_tokenizer.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"
#include "llmc/tokenizer/tokenizer.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace llmc::cli {
namespace {

/// The first 8 bytes only: a plan is as big as its weights.
bool isPlan(const std::string &path) {
  if (std::filesystem::is_directory(path))
    return false;
  char head[8] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(head, sizeof head);
  return in.gcount() == 8 && std::string_view(head, 8) == "LLMCPLAN";
}

std::unique_ptr<tok::Tokenizer> loadAny(const std::string &path) {
  if (!std::filesystem::exists(path))
    throw Error(path + ": no such file or directory");
  if (isPlan(path)) {
    auto plan = Plan::load(path);
    auto t = tokenizerFromPlan(*plan);
    if (!t)
      throw Error(path + ": the plan has no tokenizer");
    return t;
  }
  return tok::loadTokenizer(path);
}

} // namespace

Action addTokenize(CLI::App &app) {
  struct Options {
    std::string path, text, textFile, decode;
    bool addSpecial = false;
  };
  auto o = std::make_shared<Options>();
  app.add_option(
         "PATH", o->path,
         "A plan, a checkpoint folder, tokenizer.json or tokenizer.model")
      ->required();
  auto *t = app.add_option("--text", o->text, "Text to encode");
  auto *f = app.add_option("--text-file", o->textFile,
                           "Encode this file's raw bytes");
  auto *d = app.add_option("--decode", o->decode, "Ids to decode: 1,2,3");
  t->excludes(f)->excludes(d);
  f->excludes(d);
  app.add_flag("--add-special-tokens", o->addSpecial,
               "Add BOS/EOS as the tokenizer's config says");
  return [o]() -> int {
    auto tokenizer = loadAny(o->path);
    if (!o->decode.empty()) {
      std::string s = tokenizer->decode(parseIds(o->decode, "--decode"));
      std::fwrite(s.data(), 1, s.size(), stdout);
      std::printf("\n");
      return 0;
    }
    std::string text = o->textFile.empty() ? o->text : readFile(o->textFile);
    std::vector<int32_t> ids = tokenizer->encode(text, o->addSpecial);
    std::printf("%s\n", nlohmann::json(ids).dump().c_str());
    return 0;
  };
}

} // namespace llmc::cli
