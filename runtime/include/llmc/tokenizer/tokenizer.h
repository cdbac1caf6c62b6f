//===- tokenizer.h - Text <-> token ids -------------------------*- C++ -*-===//
//
// One interface over the tokenizers checkpoints ship: Hugging Face
// tokenizer.json (BPE, byte-level or SentencePiece-style), SentencePiece
// tokenizer.model, and the vocabulary stored in GGUF files (gguf_vocab.h).
// All methods are const and safe to call from several threads at once.
// Bad files throw llmc::Error naming the file; encode/decode never throw on
// odd text or ids.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmc::tok {

/// HFTables: a tokenizer.json compiled for plans (compileTokenizerJson).
enum class TokenizerKind : uint8_t { HFJson, SentencePiece, GGUF, HFTables };

class Tokenizer {
public:
  virtual ~Tokenizer();

  /// Special tokens written in `text` (e.g. "<|endoftext|>") are matched as
  /// their ids. With addSpecial, adds what the post_processor or
  /// tokenizer_config.json asks for (BOS, EOS); otherwise nothing is added.
  virtual std::vector<int32_t> encode(std::string_view text,
                                      bool addSpecial = false) const = 0;
  /// Valid UTF-8: invalid byte sequences become U+FFFD. Ids outside the
  /// vocabulary (e.g. padding rows of the embedding) decode to nothing.
  virtual std::string decode(const std::vector<int32_t> &ids,
                             bool skipSpecial = false) const = 0;
  /// Like decode, but the raw bytes, possibly invalid UTF-8.
  virtual std::string decodeBytes(const std::vector<int32_t> &ids,
                                  bool skipSpecial = false) const;
  /// Raw bytes this token contributes when it follows other tokens (no
  /// start-of-text space stripping); may be part of a UTF-8 character.
  virtual std::string tokenBytes(int32_t id) const = 0;
  /// The vocabulary string ("Ġworld", "▁H", "<0x21>"); "" for unknown ids.
  virtual std::string tokenText(int32_t id) const = 0;
  /// One past the largest id.
  virtual int32_t vocabSize() const = 0;
  /// Id of a vocabulary or added token by its exact text (e.g. "<|im_end|>").
  virtual std::optional<int32_t> tokenId(std::string_view tokenText) const = 0;
  /// Special (control) tokens are the ones decode(skipSpecial) drops.
  virtual bool isSpecial(int32_t id) const;

  // From tokenizer_config.json / special_tokens_map.json when present.
  std::optional<int32_t> bos, eos;
  bool addBos = false, addEos = false;
};

/// The files a tokenizer is rebuilt from (what plans store).
struct TokenizerFiles {
  TokenizerKind kind = TokenizerKind::HFJson;
  std::string path;       ///< the tokenizer.json / tokenizer.model read
  std::string fileBytes;  ///< its contents
  std::string configJson; ///< tokenizer_config.json, with the bos/eos/unk
                          ///< entries of special_tokens_map.json folded in
                          ///< where the config lacks them; "{}" if neither.
};

/// PATH: tokenizer.json, tokenizer.model, or a folder holding one (the
/// folder's tokenizer.json wins). Throws llmc::Error naming the path.
TokenizerFiles findTokenizerFiles(const std::string &path);

std::unique_ptr<Tokenizer> loadTokenizer(const std::string &path);

/// Rebuilds a tokenizer from stored files; `origin` names them in errors.
/// kind GGUF is not accepted here (use tokenizerFromGGUF). HFTables bytes
/// are used in place, without a copy, when `owner` keeps them alive (a
/// plan's mapping) and they are 4-byte aligned.
std::unique_ptr<Tokenizer>
loadTokenizerFromBytes(TokenizerKind kind, std::string_view fileBytes,
                       std::string_view tokenizerConfigJson,
                       std::string_view origin = "",
                       std::shared_ptr<const void> owner = nullptr);

/// A tokenizer.json as plans store it (TokenizerKind::HFTables): the
/// vocabulary and merges as flat hash tables that load in place, with no
/// JSON parsing or hashing per token; the rest of the file as JSON. The
/// same tokenizer whatever the file's cosmetics (merges written as "a b" or
/// as pairs give the same bytes). Throws what loading the file would.
std::string compileTokenizerJson(std::string_view tokenizerJson,
                                 std::string_view origin = "");

/// tokenizer_config.json as a plan stores it beside `compiled`
/// (compileTokenizerJson's bytes): the same tokenizer, without the
/// added_tokens_decoder entries that tokenizer.json already defines (most of
/// Gemma 3's 1 MB file), so a plan's tokenizer loads in milliseconds.
std::string compactTokenizerConfig(std::string_view tokenizerConfigJson,
                                   std::string_view compiled,
                                   std::string_view origin = "");

/// Whether two stored tokenizers of `kind` tokenize alike: compiled
/// tokenizer.json files with the same vocabulary, merges, added tokens,
/// normalizer, pre-tokenizer, decoder, post-processor and model options,
/// whatever else differs in the files (their version, padding and
/// truncation settings, how they wrote their merges); other kinds when
/// their bytes are equal.
bool sameTokenizer(TokenizerKind kind, std::string_view a, std::string_view b);

} // namespace llmc::tok
