#include "convert.h"

#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include <sentencepiece_processor.h>

#include <filesystem>

namespace llmc::make_gguf {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// llama.cpp's token types.
enum TokenType : int32_t {
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6
};

// config.json ids may be an int, a list (first wins) or null.
std::optional<int64_t> tokenId(const json &config, const char *key) {
  auto it = config.find(key);
  if (it == config.end())
    return std::nullopt;
  if (it->is_array() && !it->empty())
    return (*it)[0].is_number_integer() ? std::optional((*it)[0].get<int64_t>())
                                        : std::nullopt;
  return it->is_number_integer() ? std::optional(it->get<int64_t>())
                                 : std::nullopt;
}

void addSpecialIds(const json &config, weights::GGUFWriter &out) {
  if (auto id = tokenId(config, "bos_token_id"))
    out.addU32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(*id));
  if (auto id = tokenId(config, "eos_token_id"))
    out.addU32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(*id));
}

void convertBpe(const std::string &path, const json &config,
                weights::GGUFWriter &out) {
  json tok;
  try {
    tok = json::parse(readFile(path));
  } catch (const json::exception &e) {
    throw Error(path + ": " + e.what());
  }
  const json &model = tok.value("model", json::object());
  if (model.value("type", "") != "BPE" || !model.contains("vocab") ||
      !model["vocab"].is_object())
    throw Error(path + ": expected a BPE model with a 'vocab' object");
  int64_t vocabSize = config.value("vocab_size", int64_t{0});
  std::map<int64_t, std::pair<std::string, int32_t>> byId;
  for (const auto &[piece, id] : model["vocab"].items())
    if (id.is_number_integer())
      byId[id.get<int64_t>()] = {piece, Normal};
  for (const json &added : tok.value("added_tokens", json::array()))
    if (added.contains("id") && added["id"].is_number_integer())
      byId[added["id"].get<int64_t>()] = {
          added.value("content", ""),
          added.value("special", false) ? Control : UserDefined};
  int64_t n = std::max(vocabSize, byId.empty() ? 0 : byId.rbegin()->first + 1);
  if (!byId.empty() && byId.begin()->first < 0)
    throw Error(path + ": negative token id");
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (int64_t i = 0; i < n; ++i) {
    auto it = byId.find(i);
    // convert_hf_to_gguf pads holes in the vocabulary the same way.
    tokens.push_back(it != byId.end() ? it->second.first
                                      : "[PAD" + std::to_string(i) + "]");
    types.push_back(it != byId.end() ? it->second.second : Unused);
  }
  std::vector<std::string> merges;
  for (const json &m : model.value("merges", json::array())) {
    if (m.is_string())
      merges.push_back(m.get<std::string>());
    else if (m.is_array() && m.size() == 2 && m[0].is_string() &&
             m[1].is_string())
      merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    else
      throw Error(path + ": a merge must be \"a b\" or [\"a\", \"b\"]");
  }
  out.addString("tokenizer.ggml.model", "gpt2");
  out.addString("tokenizer.ggml.pre", "gpt-2");
  out.addStringArray("tokenizer.ggml.tokens", tokens);
  out.addIntArray("tokenizer.ggml.token_type", types);
  out.addStringArray("tokenizer.ggml.merges", merges);
  addSpecialIds(config, out);
}

void convertSpm(const std::string &path, const json &config,
                weights::GGUFWriter &out) {
  sentencepiece::SentencePieceProcessor sp;
  auto status = sp.Load(path);
  if (!status.ok())
    throw Error(path +
                ": cannot load SentencePiece model: " + status.ToString());
  int n = sp.GetPieceSize();
  int64_t vocabSize = std::max<int64_t>(config.value("vocab_size", 0), n);
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  for (int64_t i = 0; i < vocabSize; ++i) {
    if (i >= n) {
      tokens.push_back("[PAD" + std::to_string(i) + "]");
      scores.push_back(-1000.0f);
      types.push_back(UserDefined);
      continue;
    }
    int id = static_cast<int>(i);
    tokens.push_back(sp.IdToPiece(id));
    scores.push_back(sp.GetScore(id));
    types.push_back(sp.IsUnknown(id)   ? Unknown
                    : sp.IsControl(id) ? Control
                    : sp.IsByte(id)    ? Byte
                    : sp.IsUnused(id)  ? Unused
                                       : Normal);
  }
  out.addString("tokenizer.ggml.model", "llama");
  out.addStringArray("tokenizer.ggml.tokens", tokens);
  out.addFloatArray("tokenizer.ggml.scores", scores);
  out.addIntArray("tokenizer.ggml.token_type", types);
  json ids = config;
  if (!ids.contains("bos_token_id") && sp.bos_id() >= 0)
    ids["bos_token_id"] = sp.bos_id();
  if (!ids.contains("eos_token_id") && sp.eos_id() >= 0)
    ids["eos_token_id"] = sp.eos_id();
  addSpecialIds(ids, out);
  if (sp.unk_id() >= 0)
    out.addU32("tokenizer.ggml.unknown_token_id",
               static_cast<uint32_t>(sp.unk_id()));
}

} // namespace

void convertTokenizer(const std::string &dir, const json &config,
                      weights::GGUFWriter &out) {
  fs::path bpe = fs::path(dir) / "tokenizer.json";
  fs::path spm = fs::path(dir) / "tokenizer.model";
  if (fs::exists(bpe))
    convertBpe(bpe.string(), config, out);
  else if (fs::exists(spm))
    convertSpm(spm.string(), config, out);
  else
    throw Error("no tokenizer in '" + dir + "': neither " + bpe.string() +
                " nor " + spm.string() + " exists");

  fs::path tcPath = fs::path(dir) / "tokenizer_config.json";
  if (!fs::exists(tcPath))
    return;
  json tc = readJson(dir, "tokenizer_config.json");
  if (auto it = tc.find("add_bos_token"); it != tc.end() && it->is_boolean())
    out.addBool("tokenizer.ggml.add_bos_token", it->get<bool>());
  if (auto it = tc.find("add_eos_token"); it != tc.end() && it->is_boolean())
    out.addBool("tokenizer.ggml.add_eos_token", it->get<bool>());
  if (auto it = tc.find("chat_template"); it != tc.end() && it->is_string())
    out.addString("tokenizer.chat_template", it->get<std::string>());
}

} // namespace llmc::make_gguf
