#include "config.h"
#include "hf_tokenizer.h"
#include "spm_tokenizer.h"

#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"
#include "llmc/tokenizer/tokenizer.h"

#include <filesystem>

namespace llmc::tok {

namespace fs = std::filesystem;

TokenizerFiles findTokenizerFiles(const std::string &path) {
  std::error_code ec;
  fs::path file(path);
  if (fs::is_directory(file, ec)) {
    if (fs::exists(file / "tokenizer.json", ec))
      file /= "tokenizer.json";
    else if (fs::exists(file / "tokenizer.model", ec))
      file /= "tokenizer.model";
    else
      throw Error(path + ": no tokenizer.json or tokenizer.model in this "
                         "folder");
  } else if (!fs::exists(file, ec)) {
    throw Error(path + ": no such tokenizer file or folder");
  }
  TokenizerFiles files;
  files.path = file.string();
  files.fileBytes = readFile(files.path);
  // tokenizer.json is JSON; anything else is taken as a SentencePiece model
  // (a protobuf, which never starts with '{').
  bool json = file.extension() == ".json" ||
              (file.extension() != ".model" && !files.fileBytes.empty() &&
               files.fileBytes[0] == '{');
  files.kind = json ? TokenizerKind::HFJson : TokenizerKind::SentencePiece;

  fs::path dir = file.parent_path();
  fs::path configPath = dir / "tokenizer_config.json";
  fs::path mapPath = dir / "special_tokens_map.json";
  std::string config =
      fs::exists(configPath, ec) ? readFile(configPath.string()) : "{}";
  std::string map = fs::exists(mapPath, ec) ? readFile(mapPath.string()) : "{}";
  files.configJson = detail::mergeSpecialTokensMap(
      config, map, configPath.string(), mapPath.string());
  return files;
}

std::unique_ptr<Tokenizer> loadTokenizer(const std::string &path) {
  TokenizerFiles files = findTokenizerFiles(path);
  return loadTokenizerFromBytes(files.kind, files.fileBytes, files.configJson,
                                files.path);
}

std::string compileTokenizerJson(std::string_view tokenizerJson,
                                 std::string_view origin) {
  return detail::compileHFTokenizer(
      tokenizerJson, origin.empty() ? "tokenizer.json" : std::string(origin));
}

std::string compactTokenizerConfig(std::string_view tokenizerConfigJson,
                                   std::string_view compiled,
                                   std::string_view origin) {
  return detail::compactHFTokenizerConfig(
      tokenizerConfigJson, compiled,
      origin.empty() ? "tokenizer_config.json" : std::string(origin));
}

bool sameTokenizer(TokenizerKind kind, std::string_view a, std::string_view b) {
  if (kind == TokenizerKind::HFTables)
    return detail::sameCompiledHFTokenizer(a, b);
  return a == b;
}

std::unique_ptr<Tokenizer>
loadTokenizerFromBytes(TokenizerKind kind, std::string_view fileBytes,
                       std::string_view tokenizerConfigJson,
                       std::string_view origin,
                       std::shared_ptr<const void> owner) {
  std::string name(origin);
  switch (kind) {
  case TokenizerKind::HFTables:
    if (name.empty())
      name = "tokenizer tables";
    return detail::loadCompiledHFTokenizer(fileBytes, std::move(owner),
                                           tokenizerConfigJson, name,
                                           name + " (tokenizer_config.json)");
  case TokenizerKind::HFJson:
    if (name.empty())
      name = "tokenizer.json";
    return detail::loadHFTokenizer(fileBytes, tokenizerConfigJson, name,
                                   name + " (tokenizer_config.json)");
  case TokenizerKind::SentencePiece:
    if (name.empty())
      name = "tokenizer.model";
    return detail::loadSentencePiece(fileBytes, tokenizerConfigJson, name,
                                     name + " (tokenizer_config.json)");
  case TokenizerKind::GGUF:
    break;
  }
  throw Error((name.empty() ? std::string("tokenizer") : name) +
              ": GGUF tokenizers are built with tokenizerFromGGUF");
}

} // namespace llmc::tok
