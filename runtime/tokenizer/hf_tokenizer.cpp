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
#include <cstring>
#include <unordered_set>

namespace llmc::tok::detail {

namespace {

/// A compiled tokenizer writes each added token as [id, content, flags]:
/// a 262k vocabulary's 6k added tokens then parse in a fraction of the time
/// their objects take.
enum AddedFlag { kSpecial = 1, kLstrip = 2, kRstrip = 4, kSingleWord = 8 };

json packAddedToken(const AddedToken &t) {
  return json::array({t.id, t.content,
                      (t.special ? kSpecial : 0) | (t.lstrip ? kLstrip : 0) |
                          (t.rstrip ? kRstrip : 0) |
                          (t.singleWord ? kSingleWord : 0)});
}

AddedToken unpackAddedToken(const json &entry, const std::string &where) {
  if (entry.size() != 3 || !entry[0].is_number_integer() ||
      !entry[1].is_string() || !entry[2].is_number_integer())
    throw Error(where + ": expected [id, content, flags]");
  const int64_t id = entry[0].get<int64_t>(), flags = entry[2].get<int64_t>();
  if (id < 0 || id > INT32_MAX)
    throw Error(where + ": id " + std::to_string(id) + " is out of range");
  AddedToken t;
  t.id = static_cast<int32_t>(id);
  t.content = entry[1].get<std::string>();
  t.special = flags & kSpecial;
  t.lstrip = flags & kLstrip;
  t.rstrip = flags & kRstrip;
  t.singleWord = flags & kSingleWord;
  return t;
}

/// The vocabulary and merges of a compiled tokenizer (compileHFTokenizer),
/// already viewed.
struct Tables {
  TokenTable vocab;
  MergeTable merges;
};

class HFTokenizer : public VocabTokenizer {
public:
  /// With `tables`, the model's vocabulary and merges are those (and
  /// root's model holds neither), else they are read from root.
  void load(const json &root, const TokenizerConfig &config,
            const std::string &origin, Tables *tables = nullptr);
  std::string serializedTables() const {
    return serializeTables(vocab_, bpe_->merges());
  }

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
      tokens.emplace_back(textOf(id));
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
                 const std::string &origin, Tables *tables);
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
                            const std::string &origin, Tables *tables) {
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

  MergeTable mergeTable;
  if (tables) {
    vocab_ = std::move(tables->vocab);
    mergeTable = std::move(tables->merges);
  } else {
    const json &vocabJson = model.at("vocab");
    if (!vocabJson.is_object())
      throw Error(origin + ": model.vocab is not an object");
    // Vocabularies are dense or nearly (a trimmed copy keeps its ids); an
    // id far past the entries is a corrupt file, and would otherwise make
    // us allocate for it.
    const int64_t maxId = std::max<int64_t>(
        2 * static_cast<int64_t>(vocabJson.size() + addedCount) + 1024,
        int64_t{1} << 20);
    TokenTableBuilder builder;
    for (auto &[text, idJson] : vocabJson.items()) {
      if (!idJson.is_number_integer() || idJson.get<int64_t>() < 0 ||
          idJson.get<int64_t>() >= maxId)
        throw Error(origin + ": vocab entry '" + text + "' has a bad id");
      builder.set(static_cast<int32_t>(idJson.get<int64_t>()), text, false,
                  true);
    }
    vocab_ = builder.build();

    const json &mergesJson = model.at("merges");
    if (!mergesJson.is_array())
      throw Error(origin + ": model.merges is not an array");
    std::vector<std::array<int32_t, 3>> merges;
    merges.reserve(mergesJson.size());
    for (size_t i = 0; i < mergesJson.size(); ++i) {
      auto [a, b] = splitMerge(mergesJson[i], origin, i);
      auto ia = vocab_.find(a), ib = vocab_.find(b), iab = vocab_.find(a + b);
      if (!ia || !ib || !iab)
        throw Error(origin + ": merge " + std::to_string(i) + " ('" + a +
                    "' '" + b + "') uses a token missing from the vocab");
      merges.push_back({*ia, *ib, *iab});
    }
    mergeTable = MergeTable::build(merges);
  }

  BpeOptions options;
  options.byteFallback = getBool(model, "byte_fallback", false);
  options.fuseUnk = getBool(model, "fuse_unk", false);
  options.ignoreMerges = getBool(model, "ignore_merges", false);
  std::string unk = getString(model, "unk_token", "");
  if (!unk.empty()) {
    options.unk = vocab_.find(unk);
    if (!options.unk)
      throw Error(origin + ": unk_token '" + unk + "' is not in the vocab");
  }
  bpe_ = std::make_unique<BpeModel>(vocab_, std::move(mergeTable), options);
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
                       const std::string &origin, Tables *tables) {
  if (!root.is_object())
    throw Error(origin + ": expected a JSON object");
  json added = root.value("added_tokens", json::array());
  if (!added.is_array())
    throw Error(origin + ": added_tokens is not an array");
  loadModel(root.value("model", json()), added.size(), origin, tables);
  const int64_t maxId = 2 * static_cast<int64_t>(vocab_.size() + added.size() +
                                                 config.addedTokens.size()) +
                        1024;
  for (size_t i = 0; i < added.size(); ++i) {
    const std::string where =
        origin + ": added_tokens[" + std::to_string(i) + "]";
    AddedToken t = added[i].is_array() ? unpackAddedToken(added[i], where)
                                       : addedTokenOf(added[i], {}, where);
    if (t.id < 0 || t.id >= maxId)
      throw Error(origin + ": added token id " + std::to_string(t.id) +
                  " is out of range");
    addAddedToken(t);
  }
  // transformers also registers tokenizer_config.json's added tokens.
  for (const AddedToken &t : config.addedTokens)
    if (t.id < maxId && !added_.contains(t.content))
      addAddedToken(t);

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

/// A compiled tokenizer.json: kCompiledMagic, the JSON length (u32), the
/// JSON without model.vocab and model.merges and with packed added_tokens
/// (packAddedToken), zero padding to 4 bytes, then
/// serializeTables' words.
constexpr char kCompiledMagic[8] = {'L', 'L', 'M', 'C', 'H', 'F', 'T', '1'};

std::unique_ptr<HFTokenizer> buildHF(const json &root,
                                     const TokenizerConfig &config,
                                     const std::string &origin,
                                     Tables *tables) {
  auto tokenizer = std::make_unique<HFTokenizer>();
  try {
    tokenizer->load(root, config, origin, tables);
  } catch (const json::exception &e) {
    throw Error(origin + ": unexpected tokenizer.json structure: " + e.what());
  }
  return tokenizer;
}

} // namespace

std::unique_ptr<Tokenizer> loadHFTokenizer(std::string_view jsonText,
                                           std::string_view configText,
                                           const std::string &origin,
                                           const std::string &configOrigin) {
  TokenizerConfig config = parseTokenizerConfig(configText, configOrigin);
  return buildHF(parseJson(jsonText, origin), config, origin, nullptr);
}

std::string compileHFTokenizer(std::string_view jsonText,
                               const std::string &origin) {
  json root = parseJson(jsonText, origin);
  // Built once as any load would, so a file llmc cannot run is refused
  // here, at compile time.
  std::string tables =
      buildHF(root, TokenizerConfig{}, origin, nullptr)->serializedTables();
  if (root.contains("model") && root["model"].is_object()) {
    root["model"].erase("vocab");
    root["model"].erase("merges");
  }
  if (root.contains("added_tokens"))
    for (size_t i = 0; i < root["added_tokens"].size(); ++i) {
      json &entry = root["added_tokens"][i];
      entry = packAddedToken(addedTokenOf(
          entry, {}, origin + ": added_tokens[" + std::to_string(i) + "]"));
    }
  std::string rest = root.dump();
  std::string out(kCompiledMagic, sizeof kCompiledMagic);
  const auto n = static_cast<uint32_t>(rest.size());
  out.append(reinterpret_cast<const char *>(&n), 4);
  out += rest;
  out.append((4 - out.size() % 4) % 4, '\0');
  return out + tables;
}

bool isCompiledHFTokenizer(std::string_view bytes) {
  return bytes.size() >= sizeof kCompiledMagic &&
         bytes.compare(
             0, sizeof kCompiledMagic,
             std::string_view(kCompiledMagic, sizeof kCompiledMagic)) == 0;
}

namespace {

/// A compiled tokenizer's two parts: its JSON and its tables.
std::pair<std::string_view, std::string_view>
splitCompiled(std::string_view bytes, const std::string &origin) {
  if (!isCompiledHFTokenizer(bytes) || bytes.size() < sizeof kCompiledMagic + 4)
    throw Error(origin + ": not a compiled tokenizer (bad magic)");
  uint32_t n;
  std::memcpy(&n, bytes.data() + sizeof kCompiledMagic, 4);
  const size_t jsonAt = sizeof kCompiledMagic + 4;
  if (n > bytes.size() - jsonAt)
    throw Error(origin + ": corrupted compiled tokenizer: its JSON runs past "
                         "the end");
  const size_t tablesAt = (jsonAt + n + 3) / 4 * 4;
  if (tablesAt > bytes.size())
    throw Error(origin + ": corrupted compiled tokenizer: no tables");
  return {bytes.substr(jsonAt, n), bytes.substr(tablesAt)};
}

} // namespace

bool sameCompiledHFTokenizer(std::string_view a, std::string_view b) {
  auto [ja, ta] = splitCompiled(a, "tokenizer A");
  auto [jb, tb] = splitCompiled(b, "tokenizer B");
  if (ta != tb)
    return false;
  json x = parseJson(ja, "tokenizer A"), y = parseJson(jb, "tokenizer B");
  for (json *j : {&x, &y})
    for (const char *cosmetic : {"version", "truncation", "padding"})
      j->erase(cosmetic);
  return x == y;
}

std::string compactHFTokenizerConfig(std::string_view configText,
                                     std::string_view compiled,
                                     const std::string &configOrigin) {
  if (configText.find("added_tokens_decoder") == std::string_view::npos)
    return std::string(configText);
  json config = parseJson(configText, configOrigin);
  auto decoder = config.find("added_tokens_decoder");
  if (!config.is_object() || decoder == config.end() || !decoder->is_object())
    return std::string(configText);
  json root = parseJson(splitCompiled(compiled, "compiled tokenizer").first,
                        "compiled tokenizer");
  std::unordered_set<std::string> defined;
  for (const json &entry : root.value("added_tokens", json::array()))
    defined.insert(entry.at(1).get<std::string>());
  json kept = json::object();
  for (auto &[key, value] : decoder->items())
    if (!value.is_object() || !value.contains("content") ||
        !value["content"].is_string() ||
        !defined.contains(value["content"].get<std::string>()))
      kept[key] = value;
  *decoder = std::move(kept);
  return config.dump();
}

std::unique_ptr<Tokenizer>
loadCompiledHFTokenizer(std::string_view bytes,
                        std::shared_ptr<const void> owner,
                        std::string_view configText, const std::string &origin,
                        const std::string &configOrigin) {
  auto [jsonPart, tablesPart] = splitCompiled(bytes, origin);
  TokenizerConfig config = parseTokenizerConfig(configText, configOrigin);
  json root = parseJson(jsonPart, origin);
  // The tables sit at a multiple of 4 from the start: in place when the
  // bytes are aligned.
  Tables tables;
  viewTables(tablesPart, std::move(owner), origin, tables.vocab, tables.merges);
  return buildHF(root, config, origin, &tables);
}

} // namespace llmc::tok::detail
