// Token masks: the precomputed mask of every state equals asking each token
// (multi-byte tokens that cross rule boundaries included), per tokenizer
// kind: byte-level BPE (GPT-2), SentencePiece with byte fallback, special
// and EOS tokens; rollback.
#include "grammar_test_util.h"

#include "llmc/grammar/gbnf.h"
#include "llmc/grammar/json_schema.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"
#include "llmc/tokenizer/tokenizer.h"

#include <gtest/gtest.h>

namespace llmc::grammar {
namespace {

using test::expectMaskIsExact;

std::string tokenizerDir(const std::string &name) {
  return std::string(LLMC_DATA_DIR) + "/models/tokenizers/" + name;
}

/// Tokens cut from sample texts at random, every single byte, and a few
/// pieces of UTF-8 characters: a vocabulary whose tokens straddle every
/// boundary a grammar has.
std::shared_ptr<const TokenVocabulary> randomVocabulary(uint64_t seed) {
  const std::vector<std::string> samples = {
      R"({"name": "Ada", "tags": ["x", "y"], "n": -12.5e3, "ok": true})",
      "{\n  \"k\": null,\n  \"v\": [1, 2, {\"é\": \"日本\"}]\n}",
      R"(["a\"b", "\\", "\u00e9", 0, false])", "x+1=(y*2)\n- item\n"};
  sample::Rng rng(seed);
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b)
    tokens.emplace_back(1, static_cast<char>(b));
  for (int i = 0; i < 600; ++i) {
    const std::string &s = samples[rng.next() % samples.size()];
    const size_t at = rng.next() % s.size();
    const size_t len = 2 + rng.next() % 6;
    tokens.push_back(s.substr(at, len));
  }
  tokens.emplace_back(); // the EOS id: no bytes
  return std::make_shared<TokenVocabulary>(std::move(tokens));
}

/// Walks `text` with the longest matching tokens, checking the mask of
/// every state on the way against allows() and that the next token is in
/// it.
void walkChecking(const std::shared_ptr<const CompiledGrammar> &g,
                  const std::string &text, int32_t eos) {
  const TokenVocabulary &v = g->vocabulary();
  Matcher m(g, {eos});
  TokenMask mask(v.size());
  size_t at = 0;
  while (at < text.size()) {
    expectMaskIsExact(m,
                      "at byte " + std::to_string(at) + " of '" + text + "'");
    int32_t best = -1;
    for (int32_t id = 0; id < v.size(); ++id) {
      const std::string &b = v.bytes(id);
      if (!b.empty() && text.compare(at, b.size(), b) == 0 &&
          (best < 0 || b.size() > v.bytes(best).size()) && m.allows(id))
        best = id;
    }
    ASSERT_GE(best, 0) << "no token continues '" << text.substr(0, at) << "'";
    m.fillMask(mask);
    EXPECT_TRUE(mask.test(best));
    ASSERT_TRUE(m.accept(best));
    at += v.bytes(best).size();
  }
  expectMaskIsExact(m, "at the end of '" + text + "'");
  EXPECT_TRUE(m.canEnd());
  EXPECT_TRUE(m.allows(eos));
}

TEST(Mask, EqualsBruteForceAlongTextsAndRandomWalks) {
  const std::string dir = std::string(LLMC_DATA_DIR) + "/grammars/";
  for (uint64_t seed : {1u, 2u, 3u}) {
    auto vocab = randomVocabulary(seed);
    const int32_t eos = vocab->size() - 1;
    auto json = std::make_shared<CompiledGrammar>(
        parseGbnf(readFile(dir + "json.gbnf"), "json.gbnf"), vocab, 128);
    walkChecking(json, R"({"name": "Ada", "tags": ["x", "y"], "n": -12.5e3})",
                 eos);
    walkChecking(json, "{\n  \"v\": [1, 2, {\"é\": \"日本\"}]\n}", eos);
    auto schema = std::make_shared<CompiledGrammar>(
        grammarFromJsonSchema(
            R"({"type": "object", "properties": {
                  "name": {"type": "string", "maxLength": 8},
                  "tags": {"type": "array", "items": {"enum": ["x", "y"]}},
                  "n": {"type": "number"}},
                "required": ["name"]})",
            "schema"),
        vocab, 0); // nothing precomputed: keys are met at run time
    walkChecking(schema, R"({"name": "Ada", "tags": ["x", "y"], "n": -12.5e3})",
                 eos);
    walkChecking(schema, R"({"name": "日本"})", eos);
    // The walks went through the uncertain tokens' path, not only the
    // precomputed accepts.
    EXPECT_GT(schema->stats().keys, 10);
    EXPECT_GT(schema->stats().uncertainTokens, 0);
    sample::Rng rng(seed);
    for (int walk = 0; walk < 4; ++walk) {
      bool finished;
      test::randomWalk(Matcher(schema, {eos}), rng, eos, 60, &finished, true);
      test::randomWalk(Matcher(json, {eos}), rng, eos, 60, &finished, true);
    }
  }
}

TEST(Mask, ByteLevelBpe) {
  auto tokenizer = tok::loadTokenizer(tokenizerDir("gpt2"));
  auto vocab =
      std::make_shared<TokenVocabulary>(*tokenizer, tokenizer->vocabSize());
  const int32_t eos = *tokenizer->tokenId("<|endoftext|>");
  auto id = [&](const std::string &text) {
    auto ids = tokenizer->encode(text);
    EXPECT_EQ(ids.size(), 1u) << text;
    return ids.at(0);
  };
  auto g = std::make_shared<CompiledGrammar>(
      grammarFromJsonSchema(R"({"type": "object", "properties": {
          "a": {"type": "string"}, "b": {"type": "integer"}},
          "required": ["a", "b"]})",
                            "schema"),
      vocab);
  Matcher m(g, {eos});
  for (const char *piece : {"{\"", "a", "\":", " \"", "x"})
    ASSERT_TRUE(m.accept(id(piece))) << piece;
  TokenMask mask(vocab->size());
  m.fillMask(mask);
  // A token that closes the string and goes on into the object.
  EXPECT_TRUE(mask.test(id("\",")));
  EXPECT_FALSE(mask.test(id("\"}"))); // "b" is required
  EXPECT_TRUE(mask.test(id(" world")));
  EXPECT_FALSE(mask.test(eos)); // not done yet
  expectMaskIsExact(m, "inside a string");
  // A character split across byte tokens: "é" is C3 A9.
  Matcher e(std::make_shared<CompiledGrammar>(parseGbnf("root ::= \"é\"", "g"),
                                              vocab),
            {eos});
  int32_t c3 = -1, a9 = -1;
  for (int32_t t = 0; t < vocab->size(); ++t) {
    if (vocab->bytes(t) == "\xC3")
      c3 = t;
    if (vocab->bytes(t) == "\xA9")
      a9 = t;
  }
  ASSERT_GE(c3, 0);
  ASSERT_GE(a9, 0);
  EXPECT_TRUE(e.allows(c3));
  EXPECT_FALSE(e.allows(a9));
  ASSERT_TRUE(e.accept(c3));
  e.fillMask(mask);
  EXPECT_EQ(mask.count(), 1);
  EXPECT_TRUE(mask.test(a9));
  ASSERT_TRUE(e.accept(a9));
  EXPECT_TRUE(e.mustEnd());
  e.fillMask(mask);
  EXPECT_EQ(mask.count(), 1);
  EXPECT_TRUE(mask.test(eos)); // the end, and only the end
}

// A real vocabulary's subtrees are big enough for the walk's shortcuts: a
// string's content (bounded lengths), a URI's or a pattern's letters and
// digits followed as a chain of states, whole
// subtrees kept alive, the other keys' masks filtered by first byte.
TEST(Mask, LengthBoundedStringsAndOtherKeysWithARealVocabulary) {
  auto tokenizer = tok::loadTokenizer(tokenizerDir("gpt2"));
  auto vocab =
      std::make_shared<TokenVocabulary>(*tokenizer, tokenizer->vocabSize());
  const int32_t eos = *tokenizer->tokenId("<|endoftext|>");
  auto g = std::make_shared<CompiledGrammar>(
      grammarFromJsonSchema(R"({"type": "object", "properties": {
          "name": {"type": "string", "minLength": 3, "maxLength": 9},
          "code": {"type": "string", "maxLength": 2},
          "note": {"type": "string", "minLength": 12},
          "site": {"type": "string", "format": "uri"},
          "ref": {"type": "string", "pattern": "^[A-Z]{2}-[a-z0-9]{2,6}$"}},
          "required": ["name"]})",
                            "schema"),
      vocab, 0);
  walkChecking(g, R"({"name":"Ada L","code":"x","note":"a longer note, é"})",
               eos);
  walkChecking(g, R"({"name":"abcdefghi","other":"free text","code":""})", eos);
  walkChecking(g, R"({"nam":1,"name":"日本語"})", eos);
  // Letters and digits along a chain; punctuation walked.
  walkChecking(
      g,
      R"({"name":"abc","site":"https://example.com/a/b2?q=1#top","ref":"AB-x9"})",
      eos);
  walkChecking(g, R"({"name":"abc","ref":"QQ-abcdef","site":"mailto:x@y.z"})",
               eos);
}

TEST(Mask, SentencePieceWithByteFallback) {
  auto tokenizer = tok::loadTokenizer(tokenizerDir("spm-2k"));
  auto vocab =
      std::make_shared<TokenVocabulary>(*tokenizer, tokenizer->vocabSize());
  const int32_t bos = *tokenizer->tokenId("<s>"),
                eos = *tokenizer->tokenId("</s>");
  auto g = std::make_shared<CompiledGrammar>(
      parseGbnf("root ::= \" é日\" [a-z]+", "g"), vocab);
  Matcher m(g, {eos});
  // "▁" is a space; é and 日 only exist as byte-fallback tokens.
  const int32_t space = *tokenizer->tokenId("▁");
  EXPECT_EQ(vocab->bytes(space), " ");
  EXPECT_TRUE(vocab->bytes(bos).empty()); // a control token: never allowed
  EXPECT_FALSE(m.allows(bos));
  ASSERT_TRUE(m.accept(space));
  for (const char *piece : {"<0xC3>", "<0xA9>", "<0xE6>", "<0x97>"}) {
    const int32_t t = *tokenizer->tokenId(piece);
    expectMaskIsExact(m, std::string("before ") + piece);
    ASSERT_TRUE(m.accept(t)) << piece;
  }
  // 日 = E6 97 A5: only A5 may follow now.
  TokenMask mask(vocab->size());
  m.fillMask(mask);
  EXPECT_EQ(mask.count(), 1);
  ASSERT_TRUE(m.accept(*tokenizer->tokenId("<0xA5>")));
  EXPECT_FALSE(m.allows(eos)); // [a-z]+ needs a letter
  expectMaskIsExact(m, "after 日");
  const int32_t ro = *tokenizer->tokenId("ro");
  ASSERT_TRUE(m.accept(ro));
  EXPECT_TRUE(m.allows(eos));
  EXPECT_FALSE(m.allows(space));
}

TEST(Mask, RollbackRestoresEveryState) {
  auto vocab = test::byteVocabulary();
  auto g = std::make_shared<CompiledGrammar>(
      parseGbnf("root ::= \"ab\" [0-9]+ \"c\"", "g"), vocab);
  Matcher m(g, {test::kByteEos});
  for (char c : std::string("ab12c"))
    ASSERT_TRUE(m.accept(static_cast<unsigned char>(c)));
  ASSERT_TRUE(m.accept(test::kByteEos));
  EXPECT_TRUE(m.ended());
  EXPECT_FALSE(m.allows('a'));
  m.rollback(1); // the EOS
  EXPECT_FALSE(m.ended());
  EXPECT_TRUE(m.mustEnd());
  m.rollback(3); // "12c"
  EXPECT_EQ(m.accepted(), 2u);
  EXPECT_TRUE(m.allows('7'));
  EXPECT_FALSE(m.allows('c'));
  EXPECT_FALSE(m.accept('x')); // refused, and nothing changed
  EXPECT_EQ(m.accepted(), 2u);
  EXPECT_THROW(m.rollback(3), Error);
  // A copy goes its own way; the original stays.
  Matcher copy = m;
  ASSERT_TRUE(copy.accept('5'));
  EXPECT_TRUE(copy.allows('c'));
  EXPECT_FALSE(m.allows('c'));
}

} // namespace
} // namespace llmc::grammar
