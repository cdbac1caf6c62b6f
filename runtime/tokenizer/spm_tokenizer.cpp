#include "spm_tokenizer.h"

#include "config.h"
#include "spm_style.h"
#include "vocab_tokenizer.h"

#include "llmc/support/error.h"

#include <sentencepiece_processor.h>

namespace llmc::tok::detail {

namespace {

class SpmTokenizer : public VocabTokenizer {
public:
  void load(std::string_view modelBytes, const TokenizerConfig &config,
            const std::string &origin) {
    auto status = processor_.LoadFromSerializedProto(
        absl::string_view(modelBytes.data(), modelBytes.size()));
    if (!status.ok())
      throw Error(origin +
                  ": not a valid SentencePiece model: " + status.ToString());
    int n = processor_.GetPieceSize();
    TokenTableBuilder builder;
    for (int id = 0; id < n; ++id) {
      bool special = processor_.IsControl(id) || processor_.IsUnknown(id);
      builder.set(id, processor_.IdToPiece(id), special, true);
      kinds_.push_back(processor_.IsByte(id) ? PieceKind::Byte
                       : special             ? PieceKind::Verbatim
                                             : PieceKind::Normal);
    }
    vocab_ = builder.build();
    // The dummy prefix setting lives in the model's normalizer spec, which
    // this library version does not expose; its effect is observable.
    std::vector<std::string> pieces;
    if (processor_.Encode("a", &pieces).ok() && !pieces.empty())
      dummyPrefix_ = pieces[0].rfind(kSpmSpace, 0) == 0;

    const int64_t maxId = 2 * static_cast<int64_t>(n) + 1024;
    for (const AddedToken &t : config.addedTokens) {
      if (t.id >= maxId)
        throw Error(origin + ": added token id " + std::to_string(t.id) +
                    " is out of range");
      addAddedToken(t);
      if (static_cast<size_t>(t.id) >= kinds_.size())
        kinds_.resize(t.id + 1, PieceKind::Verbatim);
      kinds_[t.id] = PieceKind::Verbatim;
    }
    setBosEos(config.bosToken, config.eosToken);
    if (!bos && processor_.bos_id() >= 0)
      bos = processor_.bos_id();
    if (!eos && processor_.eos_id() >= 0)
      eos = processor_.eos_id();
    // LlamaTokenizer adds BOS unless told otherwise.
    addBos = config.addBos.value_or(true);
    addEos = config.addEos.value_or(false);
  }

protected:
  void encodeText(std::string_view text, bool,
                  std::vector<int32_t> &out) const override {
    std::vector<int> ids;
    if (!processor_.Encode(absl::string_view(text.data(), text.size()), &ids)
             .ok())
      return;
    out.insert(out.end(), ids.begin(), ids.end());
  }

  std::string decodeKnown(const std::vector<int32_t> &ids,
                          bool atStart) const override {
    std::vector<std::string_view> pieces;
    std::vector<PieceKind> kinds;
    for (int32_t id : ids) {
      pieces.push_back(textOf(id));
      kinds.push_back(kinds_[id]);
    }
    return decodeSpmPieces(pieces, kinds, atStart && dummyPrefix_);
  }

private:
  sentencepiece::SentencePieceProcessor processor_;
  std::vector<PieceKind> kinds_;
  bool dummyPrefix_ = true;
};

} // namespace

std::unique_ptr<Tokenizer> loadSentencePiece(std::string_view modelBytes,
                                             std::string_view configText,
                                             const std::string &origin,
                                             const std::string &configOrigin) {
  TokenizerConfig config = parseTokenizerConfig(configText, configOrigin);
  auto tokenizer = std::make_unique<SpmTokenizer>();
  tokenizer->load(modelBytes, config, origin);
  return tokenizer;
}

} // namespace llmc::tok::detail
