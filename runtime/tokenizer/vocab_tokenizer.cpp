#include "vocab_tokenizer.h"

#include "llmc/support/utf8.h"

namespace llmc::tok::detail {

std::vector<int32_t> VocabTokenizer::encode(std::string_view text,
                                            bool addSpecial) const {
  std::vector<int32_t> ids, prefix, suffix;
  if (addSpecial) {
    specialAround(prefix, suffix);
    ids = prefix;
  }
  for (const Segment &segment : added_.split(text)) {
    if (segment.addedId >= 0)
      ids.push_back(segment.addedId);
    else
      encodeText(segment.text, segment.offset == 0, ids);
  }
  ids.insert(ids.end(), suffix.begin(), suffix.end());
  return ids;
}

void VocabTokenizer::specialAround(std::vector<int32_t> &prefix,
                                   std::vector<int32_t> &suffix) const {
  if (addBos && bos)
    prefix.push_back(*bos);
  if (addEos && eos)
    suffix.push_back(*eos);
}

std::string VocabTokenizer::decodeBytes(const std::vector<int32_t> &ids,
                                        bool skipSpecial) const {
  std::vector<int32_t> kept;
  kept.reserve(ids.size());
  for (int32_t id : ids)
    if (hasToken(id) && !(skipSpecial && special_[id]))
      kept.push_back(id);
  return decodeKnown(kept, /*atStart=*/true);
}

std::string VocabTokenizer::decode(const std::vector<int32_t> &ids,
                                   bool skipSpecial) const {
  return utf8::sanitizeUtf8(decodeBytes(ids, skipSpecial));
}

std::string VocabTokenizer::tokenBytes(int32_t id) const {
  if (!hasToken(id))
    return {};
  return decodeKnown({id}, /*atStart=*/false);
}

std::string VocabTokenizer::tokenText(int32_t id) const {
  return hasToken(id) ? texts_[id] : std::string();
}

int32_t VocabTokenizer::vocabSize() const {
  return static_cast<int32_t>(texts_.size());
}

std::optional<int32_t> VocabTokenizer::tokenId(std::string_view text) const {
  auto it = idOfText_.find(std::string(text));
  if (it == idOfText_.end())
    return std::nullopt;
  return it->second;
}

bool VocabTokenizer::isSpecial(int32_t id) const {
  return hasToken(id) && special_[id];
}

void VocabTokenizer::setToken(int32_t id, std::string text, bool special) {
  if (id < 0)
    return;
  if (static_cast<size_t>(id) >= texts_.size()) {
    texts_.resize(id + 1);
    present_.resize(id + 1, 0);
    special_.resize(id + 1, 0);
  }
  // The first id of a text wins in lookups, as in a vocabulary map.
  idOfText_.emplace(text, id);
  texts_[id] = std::move(text);
  present_[id] = 1;
  special_[id] = special;
}

void VocabTokenizer::addAddedToken(const AddedToken &token) {
  setToken(token.id, token.content, token.special);
  // An added token's text must find the added id, not a vocabulary twin.
  idOfText_[token.content] = token.id;
  added_.add(token);
}

void VocabTokenizer::setBosEos(const std::optional<std::string> &bosText,
                               const std::optional<std::string> &eosText) {
  if (bosText)
    if (auto id = tokenId(*bosText))
      bos = id;
  if (eosText)
    if (auto id = tokenId(*eosText))
      eos = id;
}

} // namespace llmc::tok::detail
