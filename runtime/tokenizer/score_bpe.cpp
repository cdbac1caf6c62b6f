#include "score_bpe.h"

#include "llmc/support/utf8.h"

#include <queue>

namespace llmc::tok::detail {

namespace {
struct Symbol {
  size_t begin, length;
  int32_t prev, next;
};
struct Candidate {
  float score;
  int32_t left, right;
  size_t length; // of the merged piece, to detect stale entries
};
struct Lower {
  bool operator()(const Candidate &a, const Candidate &b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};
} // namespace

void ScoreBpe::addPiece(const std::string &piece, int32_t id, float score,
                        bool unused) {
  pieces_.emplace(piece, Piece{id, score, unused});
}

void ScoreBpe::encode(std::string_view text, std::vector<int32_t> &out) const {
  std::vector<Symbol> symbols;
  for (size_t pos = 0; pos < text.size();) {
    size_t n = utf8::charLength(text, pos);
    int32_t index = static_cast<int32_t>(symbols.size());
    symbols.push_back({pos, n, index - 1, -1});
    pos += n;
  }
  for (size_t i = 0; i + 1 < symbols.size(); ++i)
    symbols[i].next = static_cast<int32_t>(i + 1);

  // How to split a merged unused piece back into its two halves.
  std::unordered_map<std::string, std::pair<size_t, size_t>> splits;
  std::priority_queue<Candidate, std::vector<Candidate>, Lower> heap;
  auto consider = [&](int32_t left) {
    if (left < 0 || symbols[left].next < 0)
      return;
    const Symbol &l = symbols[left], &r = symbols[l.next];
    std::string_view merged = text.substr(l.begin, l.length + r.length);
    auto it = pieces_.find(std::string(merged));
    if (it == pieces_.end())
      return;
    heap.push({it->second.score, left, l.next, merged.size()});
    if (it->second.unused)
      splits[std::string(merged)] = {l.length, r.length};
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i)
    consider(i);
  while (!heap.empty()) {
    Candidate c = heap.top();
    heap.pop();
    Symbol &l = symbols[c.left];
    if (l.length == 0 || l.next != c.right ||
        l.length + symbols[c.right].length != c.length)
      continue;
    Symbol &r = symbols[c.right];
    l.length += r.length;
    l.next = r.next;
    if (r.next >= 0)
      symbols[r.next].prev = c.left;
    r.length = 0; // dead
    consider(l.prev);
    consider(c.left);
  }
  bool lastWasUnk = false;
  for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next)
    emit(text.substr(symbols[i].begin, symbols[i].length), out, lastWasUnk,
         splits, 0);
}

void ScoreBpe::emit(
    std::string_view symbol, std::vector<int32_t> &out, bool &lastWasUnk,
    const std::unordered_map<std::string, std::pair<size_t, size_t>> &splits,
    int depth) const {
  std::string key(symbol);
  auto it = pieces_.find(key);
  if (it != pieces_.end()) {
    auto split = splits.find(key);
    if (it->second.unused && split != splits.end() && depth < 64) {
      emit(symbol.substr(0, split->second.first), out, lastWasUnk, splits,
           depth + 1);
      emit(symbol.substr(split->second.first), out, lastWasUnk, splits,
           depth + 1);
      return;
    }
    out.push_back(it->second.id);
    lastWasUnk = false;
    return;
  }
  bool allBytes = true;
  for (char c : symbol)
    allBytes &= byteIds_[static_cast<uint8_t>(c)] >= 0;
  if (allBytes) {
    for (char c : symbol)
      out.push_back(byteIds_[static_cast<uint8_t>(c)]);
    lastWasUnk = false;
    return;
  }
  // SentencePiece fuses a run of unknown characters into one unk.
  if (unk_ && !lastWasUnk)
    out.push_back(*unk_);
  lastWasUnk = true;
}

} // namespace llmc::tok::detail
