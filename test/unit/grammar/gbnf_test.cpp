// GBNF: the language each construct accepts (checked byte by byte through
// the matcher), llama.cpp's own grammars, and every kind of bad grammar.
#include "grammar_test_util.h"

#include "llmc/grammar/gbnf.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include <gtest/gtest.h>

namespace llmc::grammar {
namespace {

using test::compileForBytes;
using test::matches;

std::shared_ptr<const CompiledGrammar> gbnf(const std::string &text) {
  return compileForBytes(parseGbnf(text, "test.gbnf"));
}

std::string errorOf(const std::string &text) {
  try {
    parseGbnf(text, "test.gbnf");
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Gbnf, SequencesAlternativesAndGroups) {
  auto g = gbnf(R"(root ::= "a" [b-d]+ ("x" | "yz")?)");
  for (const char *ok : {"abx", "abdyz", "ab", "acccb"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char *bad : {"a", "abxy", "ax", "abe", "", "abxx"})
    EXPECT_FALSE(matches(g, bad)) << bad;
}

TEST(Gbnf, BoundedRepetitions) {
  auto g = gbnf("root ::= [0-9]{2,4} \"-\" [a]{3} [b]{1,}\n");
  EXPECT_TRUE(matches(g, "12-aaab"));
  EXPECT_TRUE(matches(g, "1234-aaabbbb"));
  EXPECT_FALSE(matches(g, "1-aaab"));
  EXPECT_FALSE(matches(g, "12345-aaab"));
  EXPECT_FALSE(matches(g, "12-aab"));
  EXPECT_FALSE(matches(g, "12-aaa"));
}

// Stacked loops combine: 60 of them made states of millions of stacks.
TEST(Gbnf, StackedRepetitionsCombine) {
  auto g = gbnf("root ::= \"ab\"" + std::string(60, '+') + " \"c\"?+?");
  EXPECT_TRUE(matches(g, "ab"));
  EXPECT_TRUE(matches(g, "ababccc"));
  EXPECT_FALSE(matches(g, "aba"));
  // Also through groups: ((x)+)+ is x+.
  std::string nested = "\"ab\"";
  for (int i = 0; i < 40; ++i)
    nested = "(" + nested + ")" + (i % 3 == 2 ? "*" : "+");
  auto grouped = gbnf("root ::= " + nested + " \"c\"");
  EXPECT_TRUE(matches(grouped, "c"));
  EXPECT_TRUE(matches(grouped, "abababc"));
  EXPECT_FALSE(matches(grouped, "abac"));
  auto opt = gbnf("root ::= \"x\"?? \"y\"");
  EXPECT_TRUE(matches(opt, "y"));
  EXPECT_TRUE(matches(opt, "xy"));
  EXPECT_FALSE(matches(opt, "xxy"));
}

TEST(Gbnf, RulesRecursionAndContinuationLines) {
  auto g = gbnf(R"g(# balanced parentheses
root ::= pair*
pair ::= "(" root ")"
       | "[]"
)g");
  for (const char *ok : {"", "()", "(())[]", "([]())"})
    EXPECT_TRUE(matches(g, ok)) << ok;
  for (const char *bad : {"(", ")", "(()", "[", "(])"})
    EXPECT_FALSE(matches(g, bad)) << bad;
}

TEST(Gbnf, Utf8ClassesAndAnyCharacter) {
  auto greek = gbnf("root ::= [α-ω]+");
  EXPECT_TRUE(matches(greek, "αβγω"));
  EXPECT_FALSE(matches(greek, "a"));
  EXPECT_FALSE(matches(greek, "αa"));
  auto notA = gbnf("root ::= [^a]");
  EXPECT_TRUE(matches(notA, "é"));
  EXPECT_TRUE(matches(notA, "日"));
  EXPECT_TRUE(matches(notA, "\U0001F600"));
  EXPECT_FALSE(matches(notA, "a"));
  EXPECT_FALSE(matches(notA, "\xC3"));         // cut off
  EXPECT_FALSE(matches(notA, "\xFF"));         // never UTF-8
  EXPECT_FALSE(matches(notA, "\xED\xA0\x80")); // a surrogate
  EXPECT_FALSE(matches(notA, "\xC0\x80"));     // overlong
  auto dot = gbnf("root ::= . .");
  EXPECT_TRUE(matches(dot, "a日"));
  EXPECT_FALSE(matches(dot, "a"));
}

TEST(Gbnf, EscapesInLiteralsAndClasses) {
  auto g =
      gbnf(R"(root ::= "\"\n\t\\" [\x41-\x42] "\u00e9" [\]] "\U0001F600")");
  EXPECT_TRUE(matches(g, "\"\n\t\\Aé]\U0001F600"));
  EXPECT_FALSE(matches(g, "\"\n\t\\Cé]\U0001F600"));
}

TEST(Gbnf, LlamaCppGrammars) {
  const std::string dir = std::string(LLMC_DATA_DIR) + "/grammars/";
  auto json =
      compileForBytes(parseGbnf(readFile(dir + "json.gbnf"), "json.gbnf"), 256);
  EXPECT_TRUE(
      matches(json, R"({"a": [1, 2.5e3, "x\u00e9"], "b": {"c": null}})"));
  EXPECT_TRUE(matches(json, "{\n  \"k\": true\n}"));
  EXPECT_FALSE(matches(json, R"({"a":})"));
  EXPECT_FALSE(matches(json, R"([1, 2])")); // root is an object
  auto arr = compileForBytes(
      parseGbnf(readFile(dir + "json_arr.gbnf"), "json_arr.gbnf"));
  EXPECT_TRUE(matches(arr, "[\n{\"a\": 1},\n{\"b\": \"c\"}\n]"));
  auto arith = compileForBytes(
      parseGbnf(readFile(dir + "arithmetic.gbnf"), "arithmetic.gbnf"));
  EXPECT_TRUE(matches(arith, "x+1=(y*2)\n"));
  EXPECT_FALSE(matches(arith, "x+=1\n"));
  auto list =
      compileForBytes(parseGbnf(readFile(dir + "list.gbnf"), "list.gbnf"));
  EXPECT_TRUE(matches(list, "- one\n- two things\n"));
  EXPECT_FALSE(matches(list, "- one\n-two\n"));
  EXPECT_FALSE(matches(list, "- \n"));
}

TEST(Gbnf, SyntaxErrorsNameLineAndColumn) {
  EXPECT_EQ(errorOf("root ::= \"a\" )"), "test.gbnf:1:14: unexpected ')'");
  EXPECT_EQ(errorOf("root ::= \"a\"\nx := \"b\""),
            "test.gbnf:2:3: expected '::=' after rule name 'x'");
  EXPECT_EQ(errorOf("root ::= \"abc"),
            "test.gbnf:1:14: unterminated string literal");
  EXPECT_EQ(errorOf("root ::= [a-"),
            "test.gbnf:1:13: unterminated character class");
  EXPECT_EQ(errorOf("root ::= \"\\q\""),
            "test.gbnf:1:11: unknown escape '\\q'");
  EXPECT_EQ(errorOf("root ::= [z-a]"),
            "test.gbnf:1:14: a character range goes backwards");
  EXPECT_EQ(
      errorOf("root ::= \"a\"{3,1}"),
      "test.gbnf:1:18: a repetition's maximum (1) is below its minimum (3)");
  EXPECT_EQ(errorOf("root ::= (\"a\""), "test.gbnf:1:14: expected ')'");
  EXPECT_EQ(errorOf("root ::= \"a\"\nroot ::= \"b\""),
            "test.gbnf:2:9: rule 'root' is defined twice");
}

TEST(Gbnf, GrammarsThatCannotRun) {
  EXPECT_EQ(errorOf("start ::= \"a\""),
            "test.gbnf: the grammar has no 'root' rule");
  EXPECT_EQ(errorOf("root ::= item\n"),
            "test.gbnf: rule 'item' is used but not defined");
  EXPECT_EQ(errorOf("root ::= root \"a\" | \"a\""),
            "test.gbnf: left recursion: root -> root (a rule may not start "
            "with itself)");
  EXPECT_EQ(errorOf("root ::= x\nx ::= \"a\" x"),
            "test.gbnf: the root rule 'root' matches no text at all");
  EXPECT_EQ(errorOf("root ::= [^\\x00-\\U0010FFFF]"),
            "test.gbnf: the root rule 'root' matches no text at all");
}

TEST(Gbnf, EmptyLanguageButTheEmptyString) {
  // A grammar of "" alone is fine: the only thing allowed is the end.
  auto g = gbnf("root ::= \"\"");
  Matcher m(g, {test::kByteEos});
  EXPECT_TRUE(m.mustEnd());
  TokenMask mask(257);
  m.fillMask(mask);
  EXPECT_EQ(mask.count(), 1);
  EXPECT_TRUE(mask.test(test::kByteEos));
}

} // namespace
} // namespace llmc::grammar
