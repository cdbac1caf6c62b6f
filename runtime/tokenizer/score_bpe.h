//===- score_bpe.h - SentencePiece BPE by piece scores ----------*- C++ -*-===//
//
// SentencePiece's BPE (and llama.cpp's llm_tokenizer_spm): characters are
// merged pairwise, always taking the adjacent pair whose concatenation is the
// highest-scoring piece (leftmost on ties). Characters left without a piece
// become <0xXX> byte tokens, or unk.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llmc::tok::detail {

class ScoreBpe {
public:
  /// `mergeable` pieces take part in merges (normal, user-defined, unused);
  /// `unused` ones are split again afterwards, as SentencePiece does.
  void addPiece(const std::string &piece, int32_t id, float score, bool unused);
  void setByteToken(uint8_t byte, int32_t id) { byteIds_[byte] = id; }
  void setUnk(std::optional<int32_t> unk) { unk_ = unk; }

  /// `text` is already normalized ('▁' for spaces, dummy prefix added).
  void encode(std::string_view text, std::vector<int32_t> &out) const;

private:
  struct Piece {
    int32_t id;
    float score;
    bool unused;
  };
  void
  emit(std::string_view symbol, std::vector<int32_t> &out, bool &lastWasUnk,
       const std::unordered_map<std::string, std::pair<size_t, size_t>> &splits,
       int depth) const;

  std::unordered_map<std::string, Piece> pieces_;
  std::array<int32_t, 256> byteIds_ = [] {
    std::array<int32_t, 256> a{};
    a.fill(-1);
    return a;
  }();
  std::optional<int32_t> unk_;
};

} // namespace llmc::tok::detail
