//===- plan_tokenizer.cpp - The tokenizer a plan carries ------------------===//

#include "llmc/runtime/plan_tokenizer.h"
#include "llmc/support/error.h"
#include "llmc/tokenizer/gguf_vocab.h"

#include <nlohmann/json.hpp>

namespace llmc {

std::unique_ptr<tok::Tokenizer> tokenizerFromPlan(const Plan &plan) {
  const PlanTokenizer &t = plan.tokenizer();
  std::string origin = plan.path() + " (tokenizer)";
  if (t.kind == "hf-tables")
    return tok::loadTokenizerFromBytes(tok::TokenizerKind::HFTables, t.bytes(),
                                       t.configJson, origin,
                                       plan.mappingOwner());
  if (t.kind == "hf-json")
    return tok::loadTokenizerFromBytes(tok::TokenizerKind::HFJson, t.bytes(),
                                       t.configJson, origin);
  if (t.kind == "sentencepiece")
    return tok::loadTokenizerFromBytes(tok::TokenizerKind::SentencePiece,
                                       t.bytes(), t.configJson, origin);
  if (t.kind == "gguf") {
    nlohmann::json j = nlohmann::json::parse(t.bytes(), nullptr, false);
    if (j.is_discarded() || !j.is_object())
      throw Error(origin + ": corrupted GGUF vocabulary");
    tok::GGUFVocab v;
    v.model = j.value("model", "");
    v.tokens = j.value("tokens", std::vector<std::string>{});
    v.scores = j.value("scores", std::vector<float>{});
    v.tokenTypes = j.value("token_types", std::vector<int32_t>{});
    v.merges = j.value("merges", std::vector<std::string>{});
    if (j.contains("bos"))
      v.bos = j["bos"].get<int32_t>();
    if (j.contains("eos"))
      v.eos = j["eos"].get<int32_t>();
    if (j.contains("unk"))
      v.unk = j["unk"].get<int32_t>();
    v.addBos = j.value("add_bos", false);
    v.pre = j.value("pre", "");
    v.addSpacePrefix = j.value("add_space_prefix", true);
    return tok::tokenizerFromGGUF(v);
  }
  return nullptr;
}

} // namespace llmc
