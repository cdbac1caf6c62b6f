#include "llmc/tokenizer/tokenizer.h"

namespace llmc::tok {

Tokenizer::~Tokenizer() = default;

std::string Tokenizer::decodeBytes(const std::vector<int32_t> &ids,
                                   bool skipSpecial) const {
  return decode(ids, skipSpecial);
}

bool Tokenizer::isSpecial(int32_t) const { return false; }

} // namespace llmc::tok
