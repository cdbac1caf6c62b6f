// Parses arbitrary GBNF; a grammar that parses is compiled over a byte
// vocabulary and walked along the input's own bytes, masks included. Only
// llmc::Error may escape.
#include "llmc/grammar/gbnf.h"
#include "llmc/grammar/matcher.h"
#include "llmc/support/error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  if (size > 4096) // keeps each input fast: a{100000} is 100000 rules
    return 0;
  static const auto vocab = [] {
    std::vector<std::string> bytes;
    for (int b = 0; b < 256; ++b)
      bytes.emplace_back(1, static_cast<char>(b));
    bytes.push_back("ab");
    bytes.push_back("\"}");
    bytes.emplace_back(); // EOS
    return std::make_shared<llmc::grammar::TokenVocabulary>(bytes);
  }();
  const std::string text(reinterpret_cast<const char *>(data), size);
  try {
    auto g = std::make_shared<llmc::grammar::CompiledGrammar>(
        llmc::grammar::parseGbnf(text, "fuzz.gbnf"), vocab, 16);
    llmc::grammar::Matcher m(g, {vocab->size() - 1});
    llmc::grammar::TokenMask mask(vocab->size());
    for (size_t i = 0; i < size && i < 64; ++i) {
      m.fillMask(mask);
      if (!m.accept(data[i]))
        break;
    }
    m.rollback(m.accepted());
  } catch (const llmc::Error &) {
  }
  return 0;
}
