// Parses arbitrary GBNF; a grammar that parses is compiled over
// fuzz_vocabulary.h's tokens and walked along the input's own bytes (a
// byte's token is its id), each step's mask checked against asking every
// token. Only llmc::Error may escape; a mask that disagrees traps.
#include "fuzz_vocabulary.h"

#include "llmc/grammar/gbnf.h"
#include "llmc/support/error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data,
                                      std::size_t size) {
  if (size > 4096) // keeps each input fast: a{100000} is 100000 rules
    return 0;
  static const auto vocab = llmc::grammar::fuzz::vocabulary();
  const int32_t eos = vocab->size() - 1;
  const std::string text(reinterpret_cast<const char *>(data), size);
  try {
    auto g = std::make_shared<llmc::grammar::CompiledGrammar>(
        llmc::grammar::parseGbnf(text, "fuzz.gbnf"), vocab, 16);
    llmc::grammar::Matcher m(g, {eos});
    llmc::grammar::TokenMask mask(vocab->size());
    for (size_t i = 0; i < size && i < 64; ++i) {
      m.fillMask(mask);
      if (i < 16)
        llmc::grammar::fuzz::checkMaskIsExact(m, mask, eos);
      if (!m.accept(data[i]))
        break;
    }
    m.rollback(m.accepted());
  } catch (const llmc::Error &) {
  }
  return 0;
}
