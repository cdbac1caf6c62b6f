#include "llmc/text/stream_decoder.h"

#include "llmc/support/utf8.h"

namespace llmc::text {

StreamDecoder::StreamDecoder(const Tokenizer &tokenizer, bool skipSpecial)
    : tokenizer_(tokenizer), skipSpecial_(skipSpecial) {}

std::string StreamDecoder::push(int32_t id) {
  if (skipSpecial_ && tokenizer_.isSpecial(id))
    return {};
  // The first token decodes as the start of a text (e.g. SentencePiece drops
  // its dummy-prefix space); later ones contribute their plain bytes.
  std::string bytes = atStart_ ? tokenizer_.decodeBytes({id}, false)
                               : tokenizer_.tokenBytes(id);
  // Ids decode drops (unknown ones) leave the start where it is.
  if (!tokenizer_.tokenText(id).empty())
    atStart_ = false;
  pending_ += bytes;
  size_t ready = utf8::emittablePrefix(pending_);
  std::string out =
      utf8::sanitizeUtf8(std::string_view(pending_).substr(0, ready));
  pending_.erase(0, ready);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out = utf8::sanitizeUtf8(pending_);
  pending_.clear();
  atStart_ = true;
  return out;
}

} // namespace llmc::text
