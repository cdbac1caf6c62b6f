#include "vocab_tokenizer.h"

#include "llmc/support/utf8.h"

#include <algorithm>

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
    if (hasToken(id) && !(skipSpecial && isSpecial(id)))
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

std::string_view VocabTokenizer::textOf(int32_t id) const {
  if (auto it = addedText_.find(id); it != addedText_.end())
    return it->second;
  return vocab_.text(id);
}

std::string VocabTokenizer::tokenText(int32_t id) const {
  return hasToken(id) ? std::string(textOf(id)) : std::string();
}

int32_t VocabTokenizer::vocabSize() const {
  int32_t n = vocab_.size();
  for (const auto &[id, text] : addedText_)
    n = std::max(n, id + 1);
  return n;
}

std::optional<int32_t> VocabTokenizer::tokenId(std::string_view text) const {
  if (auto it = addedIds_.find(std::string(text)); it != addedIds_.end())
    return it->second;
  return vocab_.find(text);
}

bool VocabTokenizer::isSpecial(int32_t id) const {
  if (auto it = addedSpecial_.find(id); it != addedSpecial_.end())
    return it->second;
  return vocab_.special(id);
}

void VocabTokenizer::addAddedToken(const AddedToken &token) {
  if (token.id < 0)
    return;
  addedText_[token.id] = token.content;
  addedSpecial_[token.id] = token.special;
  // An added token's text must find the added id, not a vocabulary twin.
  addedIds_[token.content] = token.id;
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
