#include "hf_tokenizer.h"

#include "bpe.h"
#include "config.h"
#include "decoder.h"
#include "json.h"
#include "normalizer.h"
#include "pre_tokenizer.h"
#include "vocab_tokenizer.h"

#include "llmc/support/error.h"

#include <algorithm>

namespace llmc::tok::detail {

namespace {

class HFTokenizer : public VocabTokenizer {
public:
  void load(const json &root, const TokenizerConfig &config,
            const std::string &origin);

protected:
  void encodeText(std::string_view text, bool startOfText,
                  std::vector<int32_t> &out) const override {
    std::vector<std::string> words;
    words.emplace_back(normalizer_ ? normalizer_->apply(text)
                                   : std::string(text));
    if (pre_)
      pre_->apply(words, startOfText);
    for (const std::string &word : words)
      bpe_->encodeWord(word, out);
  }

  std::string decodeKnown(const std::vector<int32_t> &ids,
                          bool atStart) const override {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (int32_t id : ids)
      tokens.push_back(texts_[id]);
    if (decoder_)
      decoder_->apply(tokens, atStart);
    std::string out;
    for (const std::string &t : tokens)
      out += t;
    return out;
  }

  void specialAround(std::vector<int32_t> &prefix,
                     std::vector<int32_t> &suffix) const override {
    if (!hasTemplate_) {
      VocabTokenizer::specialAround(prefix, suffix);
      return;
    }
    prefix = templatePrefix_;
    suffix = templateSuffix_;
    // LlamaTokenizerFast rebuilds its template from add_bos_token /
    // add_eos_token, so explicit flags win over tokenizer.json.
    if (configAddBos_ && bos) {
      if (!prefix.empty() && prefix.front() == *bos)
        prefix.erase(prefix.begin());
      if (*configAddBos_)
        prefix.insert(prefix.begin(), *bos);
    }
    if (configAddEos_ && eos) {
      if (!suffix.empty() && suffix.back() == *eos)
        suffix.pop_back();
      if (*configAddEos_)
        suffix.push_back(*eos);
    }
  }

private:
  void loadModel(const json &model, size_t addedCount,
                 const std::string &origin);
  void loadPostProcessor(const json &spec, const std::string &origin);
  std::vector<int32_t> templateIds(const json &items, const json &specials,
                                   bool &sawSequence, bool beforeSequence,
                                   const std::string &origin) const;

  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_;
  std::unique_ptr<BpeModel> bpe_;
  std::unique_ptr<Decoder> decoder_;
  bool hasTemplate_ = false;
  std::vector<int32_t> templatePrefix_, templateSuffix_;
  std::optional<bool> configAddBos_, configAddEos_;
};

std::pair<std::string, std::string>
splitMerge(const json &merge, const std::string &origin, size_t index) {
  if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
      merge[1].is_string())
    return {merge[0].get<std::string>(), merge[1].get<std::string>()};
  if (merge.is_string()) {
    const std::string &s = merge.get_ref<const std::string &>();
    size_t space = s.find(' ');
    if (space != std::string::npos &&
        s.find(' ', space + 1) == std::string::npos)
      return {s.substr(0, space), s.substr(space + 1)};
  }
  throw Error(origin + ": merge " + std::to_string(index) +
              " is neither \"a b\" nor [\"a\", \"b\"]");
}

void HFTokenizer::loadModel(const json &model, size_t addedCount,
                            const std::string &origin) {
  if (!model.is_object())
    throw Error(origin + ": \"model\" is missing or not an object");
  std::string type = typeOf(model);
  if (type.empty() && model.contains("merges"))
    type = "BPE"; // files written before "type" existed
  if (type != "BPE")
    throw Error("unsupported tokenizer model '" + type + "' in " + origin +
                "; supported: BPE");
  for (const char *key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (!getString(model, key, "").empty())
      throw Error(origin + ": unsupported BPE option " + key);

  const json &vocabJson = model.at("vocab");
  if (!vocabJson.is_object())
    throw Error(origin + ": model.vocab is not an object");
  std::unordered_map<std::string, int32_t> vocab;
  vocab.reserve(vocabJson.size());
  // Vocabularies are dense; a far larger id is a corrupt file, and would
  // otherwise make us allocate for it.
  const int64_t maxId =
      2 * static_cast<int64_t>(vocabJson.size() + addedCount) + 1024;
  for (auto &[text, idJson] : vocabJson.items()) {
    if (!idJson.is_number_integer() || idJson.get<int64_t>() < 0 ||
        idJson.get<int64_t>() >= maxId)
      throw Error(origin + ": vocab entry '" + text + "' has a bad id");
    int32_t id = static_cast<int32_t>(idJson.get<int64_t>());
    vocab.emplace(text, id);
    setToken(id, text, false);
  }

  const json &mergesJson = model.at("merges");
  if (!mergesJson.is_array())
    throw Error(origin + ": model.merges is not an array");
  std::vector<std::array<int32_t, 3>> merges;
  merges.reserve(mergesJson.size());
  for (size_t i = 0; i < mergesJson.size(); ++i) {
    auto [a, b] = splitMerge(mergesJson[i], origin, i);
    auto ia = vocab.find(a), ib = vocab.find(b), iab = vocab.find(a + b);
    if (ia == vocab.end() || ib == vocab.end() || iab == vocab.end())
      throw Error(origin + ": merge " + std::to_string(i) + " ('" + a + "' '" +
                  b + "') uses a token missing from the vocab");
    merges.push_back({ia->second, ib->second, iab->second});
  }

  BpeOptions options;
  options.byteFallback = getBool(model, "byte_fallback", false);
  options.fuseUnk = getBool(model, "fuse_unk", false);
  options.ignoreMerges = getBool(model, "ignore_merges", false);
  std::string unk = getString(model, "unk_token", "");
  if (!unk.empty()) {
    auto it = vocab.find(unk);
    if (it == vocab.end())
      throw Error(origin + ": unk_token '" + unk + "' is not in the vocab");
    options.unk = it->second;
  }
  bpe_ = std::make_unique<BpeModel>(std::move(vocab), merges, options);
}

std::vector<int32_t> HFTokenizer::templateIds(const json &items,
                                              const json &specials,
                                              bool &sawSequence,
                                              bool beforeSequence,
                                              const std::string &origin) const {
  std::vector<int32_t> ids;
  for (const json &item : items) {
    if (item.contains("Sequence")) {
      sawSequence = true;
      continue;
    }
    if (sawSequence == beforeSequence)
      continue;
    std::string name = item.at("SpecialToken").at("id").get<std::string>();
    auto special = specials.find(name);
    if (special == specials.end()) {
      if (auto id = tokenId(name)) {
        ids.push_back(*id);
        continue;
      }
      throw Error(origin + ": post_processor uses unknown token '" + name +
                  "'");
    }
    for (const json &id : special->at("ids"))
      ids.push_back(id.get<int32_t>());
  }
  return ids;
}

void HFTokenizer::loadPostProcessor(const json &spec,
                                    const std::string &origin) {
  std::string type = typeOf(spec);
  if (spec.is_null() || type == "ByteLevel")
    return;
  if (type == "Sequence") {
    for (const json &item : spec.at("processors"))
      loadPostProcessor(item, origin);
    return;
  }
  if (type == "TemplateProcessing") {
    const json &single = spec.at("single");
    json specials = spec.value("special_tokens", json::object());
    bool saw = false;
    templatePrefix_ = templateIds(single, specials, saw, true, origin);
    saw = false;
    templateSuffix_ = templateIds(single, specials, saw, false, origin);
    hasTemplate_ = true;
    return;
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    templatePrefix_ = {spec.at("cls").at(1).get<int32_t>()};
    templateSuffix_ = {spec.at("sep").at(1).get<int32_t>()};
    hasTemplate_ = true;
    return;
  }
  throw Error(origin + ": unsupported post_processor '" + type +
              "'; supported: TemplateProcessing, RobertaProcessing, "
              "BertProcessing, ByteLevel, Sequence");
}

void HFTokenizer::load(const json &root, const TokenizerConfig &config,
                       const std::string &origin) {
  if (!root.is_object())
    throw Error(origin + ": expected a JSON object");
  json added = root.value("added_tokens", json::array());
  if (!added.is_array())
    throw Error(origin + ": added_tokens is not an array");
  loadModel(root.value("model", json()), added.size(), origin);
  const int64_t maxId = 2 * static_cast<int64_t>(texts_.size() + added.size() +
                                                 config.addedTokens.size()) +
                        1024;
  for (const json &entry : added) {
    AddedToken t;
    int64_t id = entry.at("id").get<int64_t>();
    if (id < 0 || id >= maxId)
      throw Error(origin + ": added token id " + std::to_string(id) +
                  " is out of range");
    t.id = static_cast<int32_t>(id);
    t.content = entry.at("content").get<std::string>();
    t.special = getBool(entry, "special", false);
    t.lstrip = getBool(entry, "lstrip", false);
    t.rstrip = getBool(entry, "rstrip", false);
    t.singleWord = getBool(entry, "single_word", false);
    addAddedToken(t);
  }
  // transformers also registers tokenizer_config.json's added tokens.
  for (const AddedToken &t : config.addedTokens) {
    if (t.id >= maxId)
      continue;
    auto it = std::find_if(
        added_.tokens().begin(), added_.tokens().end(),
        [&](const AddedToken &a) { return a.content == t.content; });
    if (it == added_.tokens().end())
      addAddedToken(t);
  }

  normalizer_ = makeNormalizer(root.value("normalizer", json()), origin);
  pre_ = makePreTokenizer(root.value("pre_tokenizer", json()), origin);
  decoder_ = makeDecoder(root.value("decoder", json()), origin);
  loadPostProcessor(root.value("post_processor", json()), origin);

  setBosEos(config.bosToken, config.eosToken);
  configAddBos_ = config.addBos;
  configAddEos_ = config.addEos;
  auto contains = [](const std::vector<int32_t> &v, std::optional<int32_t> id) {
    return id && std::find(v.begin(), v.end(), *id) != v.end();
  };
  addBos =
      config.addBos.value_or(hasTemplate_ && contains(templatePrefix_, bos));
  addEos =
      config.addEos.value_or(hasTemplate_ && contains(templateSuffix_, eos));
}

} // namespace

std::unique_ptr<Tokenizer> loadHFTokenizer(std::string_view jsonText,
                                           std::string_view configText,
                                           const std::string &origin,
                                           const std::string &configOrigin) {
  TokenizerConfig config = parseTokenizerConfig(configText, configOrigin);
  json root = parseJson(jsonText, origin);
  auto tokenizer = std::make_unique<HFTokenizer>();
  try {
    tokenizer->load(root, config, origin);
  } catch (const json::exception &e) {
    throw Error(origin + ": unexpected tokenizer.json structure: " + e.what());
  }
  return tokenizer;
}

} // namespace llmc::tok::detail
