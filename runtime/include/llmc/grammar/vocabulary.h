//===- vocabulary.h - Token ids as byte strings, in a trie ------*- C++ -*-===//
//
// What a grammar constrains is bytes; what the model emits is token ids. A
// TokenVocabulary holds every id's bytes (byte-level BPE, SentencePiece
// pieces with byte fallback, added tokens) and a trie over them in
// depth-first order, so that a walk skips a dead prefix's whole subtree
// with one jump. Special tokens and ids without bytes (padding rows of the
// embedding) are left out: a grammar never allows them; end of text is
// the matcher's business (the request's EOS ids).
//
// Immutable once built; share one per tokenizer across threads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llmc::tok {
class Tokenizer;
}

namespace llmc::grammar {

class TokenVocabulary {
public:
  /// Ids [0, vocabSize): the model's logits width, which may exceed the
  /// tokenizer's vocabulary (padding rows are never allowed).
  /// A special token is left out unless its text occurs in one of
  /// `markers` (a chat template's tool-call and reasoning markers, which a
  /// tool call's grammar writes).
  TokenVocabulary(const tok::Tokenizer &tokenizer, int32_t vocabSize,
                  const std::vector<std::string> &markers = {});
  /// Straight from byte strings; "" marks an id a grammar never allows.
  explicit TokenVocabulary(std::vector<std::string> tokenBytes);
  /// Ids 0..255 one byte each and kByteEos without bytes: text checked
  /// against a grammar byte by byte (llmc grammar check, patternProperties'
  /// names, tests). One shared instance.
  static const std::shared_ptr<const TokenVocabulary> &ofBytes();
  static constexpr int32_t kByteEos = 256;

  int32_t size() const { return static_cast<int32_t>(bytes_.size()); }
  const std::string &bytes(int32_t id) const {
    return bytes_[static_cast<size_t>(id)];
  }

  /// A trie node: the byte that leads to it, its depth (1 for the first
  /// byte of a token), the most bytes below it (its longest token's bytes
  /// past it, at most 65535), one past the last node of its subtree, and
  /// the ids whose bytes end here (trieTokens()[tokenBegin, tokenEnd)).
  struct TrieNode {
    uint8_t byte;
    uint16_t height;
    uint32_t depth;
    uint32_t subtreeEnd;
    uint32_t tokenBegin, tokenEnd;
  };
  const std::vector<TrieNode> &trie() const { return trie_; }
  /// The bytes of the nodes strictly below each trie node (bit b of word
  /// b / 64): a mask walk skips a subtree whose bytes all loop back to the
  /// state it is in (a string's content).
  using ByteBits = std::array<uint64_t, 4>;
  const std::vector<ByteBits> &bytesBelow() const { return below_; }
  const std::vector<int32_t> &trieTokens() const { return trieTokens_; }
  /// The bytes of trieTokens()[k] and their length, stored in trie order
  /// (a walk reading them reads memory in order, not a string per id).
  const char *trieTokenData(uint32_t k) const {
    return trieText_.data() + trieTokenStart_[k];
  }
  uint32_t trieTokenSize(uint32_t k) const {
    return trieTokenStart_[k + 1] - trieTokenStart_[k];
  }
  /// Byte classes a grammar state often takes all alike, so that a mask
  /// walk there goes by the length of a token's run of them instead of
  /// visiting each trie node: Plain, the bytes a JSON string holds as they
  /// are (printable ASCII but '"' and '\\': a string's content, whatever its
  /// length bounds); Alnum, letters and digits (a URI's or a pattern's
  /// characters, where punctuation goes elsewhere).
  enum RunClass : uint8_t { Plain, Alnum };
  static constexpr int kRunClasses = 2;
  static bool inRun(RunClass c, uint8_t b) {
    if (c == Alnum)
      return (b >= '0' && b <= '9') || ((b | 0x20) >= 'a' && (b | 0x20) <= 'z');
    return b >= 0x20 && b < 0x7F && b != '"' && b != '\\';
  }
  /// For each of trieTokens(): where its final run of class `c` begins
  /// (its length when its last byte is not in it).
  const std::vector<uint32_t> &trieTokenRunFrom(RunClass c) const {
    return trieTokenRunFrom_[c];
  }
  /// The longest token, in bytes.
  size_t maxTokenBytes() const { return maxBytes_; }

  /// Key masks every grammar over this vocabulary shares, by what the key
  /// reaches (compiled.h): a JSON string's content is computed once per
  /// process, not once per schema. Thread-safe; bounded in memory.
  struct SharedKeyMasks;
  SharedKeyMasks &sharedKeyMasks() const { return *shared_; }

private:
  void buildTrie();

  std::vector<std::string> bytes_;
  std::vector<TrieNode> trie_;
  std::vector<ByteBits> below_;
  std::vector<int32_t> trieTokens_;
  std::array<std::vector<uint32_t>, kRunClasses> trieTokenRunFrom_;
  std::string trieText_;
  std::vector<uint32_t> trieTokenStart_; // and one past the last
  size_t maxBytes_ = 0;
  std::shared_ptr<SharedKeyMasks> shared_;
};

} // namespace llmc::grammar
