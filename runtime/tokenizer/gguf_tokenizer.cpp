#include "llmc/tokenizer/gguf_vocab.h"

#include "bpe.h"
#include "byte_level.h"
#include "normalizer.h"
#include "pre_tokenizer.h"
#include "regex.h"
#include "score_bpe.h"
#include "spm_style.h"
#include "vocab_tokenizer.h"

#include "llmc/support/error.h"

namespace llmc::tok {

namespace {

using namespace detail;

enum TokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};

const std::string kOrigin = "GGUF tokenizer";

/// The tokenizer.ggml.pre values llama.cpp gives one of our split patterns,
/// with no other change to how it tokenizes (src/llama-vocab.cpp at
/// llama.cpp 80fb11a: the names that map to LLAMA_VOCAB_PRE_TYPE_GPT2, MPT,
/// OLMO, JAIS / LLAMA3, DBRX, SMAUG / QWEN2 without extra flags). Empty,
/// "default" and "gpt2" are what llmc's own GGUF writer and older
/// converters leave.
struct PreTokenizerNames {
  const char *pattern;
  std::vector<std::string> names;
};
const std::vector<PreTokenizerNames> &preTokenizers() {
  static const std::vector<PreTokenizerNames> table = {
      {kGpt2Pattern,
       {"", "default", "gpt2", "gpt-2", "phi-2", "jina-es", "jina-de",
        "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
        "modern-bert", "mpt", "olmo", "jais"}},
      {kLlama3Pattern,
       {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
        "midm-2.0", "lfm2", "jina-v5-nano", "dbrx", "smaug-bpe"}},
      {kQwen2Pattern, {"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2"}}};
  return table;
}

const char *splitPatternOf(const std::string &pre) {
  for (const PreTokenizerNames &p : preTokenizers())
    for (const std::string &name : p.names)
      if (name == pre)
        return p.pattern;
  return nullptr;
}

std::string supportedPres() {
  std::string out;
  for (const PreTokenizerNames &p : preTokenizers())
    for (const std::string &name : p.names)
      if (!name.empty())
        out += (out.empty() ? "" : ", ") + name;
  return out;
}

class GGUFTokenizer : public VocabTokenizer {
public:
  explicit GGUFTokenizer(const GGUFVocab &v) {
    if (v.tokens.empty())
      throw Error(kOrigin + ": tokenizer.ggml.tokens is empty");
    if (!v.tokenTypes.empty() && v.tokenTypes.size() != v.tokens.size())
      throw Error(kOrigin + ": " + std::to_string(v.tokenTypes.size()) +
                  " token types for " + std::to_string(v.tokens.size()) +
                  " tokens");
    byteLevel_ = v.model == "gpt2";
    if (!byteLevel_ && v.model != "llama")
      throw Error(kOrigin + ": unsupported tokenizer model '" + v.model +
                  "'; supported: gpt2, llama");
    if (!byteLevel_ && v.scores.size() != v.tokens.size())
      throw Error(kOrigin + ": " + std::to_string(v.scores.size()) +
                  " scores for " + std::to_string(v.tokens.size()) + " tokens");
    int32_t count = static_cast<int32_t>(v.tokens.size());
    auto typeOf = [&](int32_t id) {
      return v.tokenTypes.empty() ? int32_t(kNormal) : v.tokenTypes[id];
    };
    TokenTableBuilder builder;
    for (int32_t id = 0; id < count; ++id) {
      int32_t type = typeOf(id);
      bool special = type == kControl || type == kUnknown;
      // The BPE looks its words up among the plain tokens only.
      builder.set(id, v.tokens[id], special,
                  !byteLevel_ || !(special || type == kUserDefined));
      kinds_.push_back(type == kByte                     ? PieceKind::Byte
                       : special || type == kUserDefined ? PieceKind::Verbatim
                                                         : PieceKind::Normal);
      // Control and user-defined tokens written in the text are matched
      // whole, as Hugging Face does for added tokens.
      if (type == kControl || type == kUserDefined)
        addAddedToken({id, v.tokens[id], special, false, false, false});
    }
    vocab_ = builder.build();
    auto checkId = [&](std::optional<int32_t> id, const char *what) {
      if (id && (*id < 0 || *id >= count))
        throw Error(kOrigin + ": " + what + " id " + std::to_string(*id) +
                    " is out of range");
      return id;
    };
    bos = checkId(v.bos, "bos");
    eos = checkId(v.eos, "eos");
    std::optional<int32_t> unk = checkId(v.unk, "unk");
    addBos = v.addBos;
    addSpacePrefix_ = v.addSpacePrefix;
    if (byteLevel_)
      buildByteLevel(v, unk);
    else
      buildScoreBpe(v, unk, typeOf);
  }

protected:
  void encodeText(std::string_view text, bool,
                  std::vector<int32_t> &out) const override {
    if (byteLevel_) {
      std::vector<std::string> words{std::string(text)};
      pre_->apply(words, true);
      for (const std::string &word : words)
        bpe_->encodeWord(word, out);
      return;
    }
    // llama.cpp adds the space prefix to every text fragment, also after
    // special tokens.
    std::string normalized = addSpacePrefix_ ? " " : "";
    normalized += text;
    score_.encode(replaceAll(normalized, " ", kSpmSpace), out);
  }

  std::string decodeKnown(const std::vector<int32_t> &ids,
                          bool atStart) const override {
    if (byteLevel_) {
      std::string out;
      for (int32_t id : ids)
        out += kinds_[id] == PieceKind::Verbatim
                   ? std::string(textOf(id))
                   : fromByteLevel(std::string(textOf(id)));
      return out;
    }
    std::vector<std::string_view> pieces;
    std::vector<PieceKind> kinds;
    for (int32_t id : ids) {
      pieces.push_back(textOf(id));
      kinds.push_back(kinds_[id]);
    }
    return decodeSpmPieces(pieces, kinds, atStart && addSpacePrefix_);
  }

private:
  void buildByteLevel(const GGUFVocab &v, std::optional<int32_t> unk) {
    const char *pattern = splitPatternOf(v.pre);
    if (!pattern)
      throw Error(kOrigin + ": unsupported pre-tokenizer '" + v.pre +
                  "' (tokenizer.ggml.pre); supported: " + supportedPres());
    pre_ =
        makeByteLevel(std::make_shared<Regex>(pattern, false, kOrigin), false);
    std::vector<std::array<int32_t, 3>> merges;
    for (size_t i = 0; i < v.merges.size(); ++i) {
      const std::string &m = v.merges[i];
      size_t space = m.find(' ', 1);
      if (space == std::string::npos)
        throw Error(kOrigin + ": merge " + std::to_string(i) + " '" + m +
                    "' is not \"a b\"");
      std::string a = m.substr(0, space), b = m.substr(space + 1);
      auto ia = vocab_.find(a), ib = vocab_.find(b), iab = vocab_.find(a + b);
      // llama.cpp skips merges whose parts are not tokens.
      if (ia && ib && iab)
        merges.push_back({*ia, *ib, *iab});
    }
    BpeOptions options;
    options.unk = unk;
    options.ignoreMerges = v.pre == "llama-bpe" || v.pre == "llama3";
    bpe_ =
        std::make_unique<BpeModel>(vocab_, MergeTable::build(merges), options);
  }

  template <typename TypeOf>
  void buildScoreBpe(const GGUFVocab &v, std::optional<int32_t> unk,
                     TypeOf typeOf) {
    for (int32_t id = 0; id < static_cast<int32_t>(v.tokens.size()); ++id) {
      int32_t type = typeOf(id);
      if (type == kByte) {
        int b = parseBytePiece(v.tokens[id]);
        if (b >= 0)
          score_.setByteToken(static_cast<uint8_t>(b), id);
      } else if (type == kNormal || type == kUserDefined || type == kUnused) {
        score_.addPiece(v.tokens[id], id, v.scores[id], type == kUnused);
      }
    }
    score_.setUnk(unk);
  }

  bool byteLevel_ = false;
  bool addSpacePrefix_ = true;
  std::vector<PieceKind> kinds_;
  std::unique_ptr<PreTokenizer> pre_;
  std::unique_ptr<BpeModel> bpe_;
  ScoreBpe score_;
};

} // namespace

std::unique_ptr<Tokenizer> tokenizerFromGGUF(const GGUFVocab &vocab) {
  return std::make_unique<GGUFTokenizer>(vocab);
}

} // namespace llmc::tok
