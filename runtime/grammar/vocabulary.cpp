//===- vocabulary.cpp - Token bytes and their trie ------------------------===//
#include "llmc/grammar/vocabulary.h"

#include "compiled.h"

#include "llmc/tokenizer/tokenizer.h"

#include <algorithm>

namespace llmc::grammar {

TokenVocabulary::TokenVocabulary(const tok::Tokenizer &tokenizer,
                                 int32_t vocabSize,
                                 const std::vector<std::string> &markers)
    : bytes_(static_cast<size_t>(std::max(vocabSize, 0))) {
  const int32_t known = std::min(vocabSize, tokenizer.vocabSize());
  auto inMarkers = [&](const std::string &text) {
    return !text.empty() &&
           std::any_of(markers.begin(), markers.end(), [&](auto &m) {
             return m.find(text) != std::string::npos;
           });
  };
  for (int32_t id = 0; id < known; ++id)
    if (!tokenizer.isSpecial(id) || inMarkers(tokenizer.tokenBytes(id)))
      bytes_[static_cast<size_t>(id)] = tokenizer.tokenBytes(id);
  buildTrie();
  shared_ = std::make_shared<SharedKeyMasks>();
}

TokenVocabulary::TokenVocabulary(std::vector<std::string> tokenBytes)
    : bytes_(std::move(tokenBytes)) {
  buildTrie();
  shared_ = std::make_shared<SharedKeyMasks>();
}

const std::shared_ptr<const TokenVocabulary> &TokenVocabulary::ofBytes() {
  static const std::shared_ptr<const TokenVocabulary> v = [] {
    std::vector<std::string> bytes;
    for (int b = 0; b < 256; ++b)
      bytes.emplace_back(1, static_cast<char>(b));
    bytes.emplace_back(); // kByteEos
    return std::make_shared<const TokenVocabulary>(std::move(bytes));
  }();
  return v;
}

void TokenVocabulary::buildTrie() {
  std::vector<int32_t> order;
  for (int32_t id = 0; id < size(); ++id)
    if (!bytes(id).empty())
      order.push_back(id);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return bytes(a) != bytes(b) ? bytes(a) < bytes(b) : a < b;
  });
  // Sorted strings give the trie in depth-first order: a token shares its
  // previous one's path up to their common prefix.
  std::vector<uint32_t> path; // node indices from depth 1 down
  const std::string *prev = nullptr;
  auto close = [&](size_t depth) {
    while (path.size() > depth) {
      trie_[path.back()].subtreeEnd = static_cast<uint32_t>(trie_.size());
      path.pop_back();
    }
  };
  for (int32_t id : order) {
    const std::string &b = bytes(id);
    maxBytes_ = std::max(maxBytes_, b.size());
    size_t common = 0;
    if (prev)
      while (common < prev->size() && common < b.size() &&
             (*prev)[common] == b[common])
        ++common;
    close(common);
    for (size_t d = common; d < b.size(); ++d) {
      path.push_back(static_cast<uint32_t>(trie_.size()));
      const uint32_t t = static_cast<uint32_t>(trieTokens_.size());
      trie_.push_back({static_cast<uint8_t>(b[d]), 0,
                       static_cast<uint32_t>(d + 1), 0, t, t});
    }
    // Tokens of equal bytes are adjacent: they end at the same node.
    TrieNode &end = trie_[path.back()];
    if (end.tokenEnd != trieTokens_.size()) {
      end.tokenBegin = end.tokenEnd = static_cast<uint32_t>(trieTokens_.size());
    }
    trieTokens_.push_back(id);
    trieTokenStart_.push_back(static_cast<uint32_t>(trieText_.size()));
    trieText_ += b;
    for (int c = 0; c < kRunClasses; ++c) {
      size_t from = b.size();
      while (from > 0 && inRun(RunClass(c), static_cast<uint8_t>(b[from - 1])))
        --from;
      trieTokenRunFrom_[c].push_back(static_cast<uint32_t>(from));
    }
    end.tokenEnd = static_cast<uint32_t>(trieTokens_.size());
    prev = &b;
  }
  close(0);
  trieTokenStart_.push_back(static_cast<uint32_t>(trieText_.size()));
  below_.assign(trie_.size(), ByteBits{});
  for (size_t i = trie_.size(); i-- > 0;)
    for (size_t j = i + 1; j < trie_[i].subtreeEnd; j = trie_[j].subtreeEnd) {
      for (size_t w = 0; w < 4; ++w)
        below_[i][w] |= below_[j][w];
      below_[i][trie_[j].byte >> 6] |= uint64_t(1) << (trie_[j].byte & 63);
      trie_[i].height = static_cast<uint16_t>(std::max<int>(
          trie_[i].height, std::min(trie_[j].height + 1, int(UINT16_MAX))));
    }
}

} // namespace llmc::grammar
