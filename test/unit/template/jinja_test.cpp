// Interpreter behaviour beyond the fixture templates: reference renderings
// from Jinja2, error reporting and resource limits.
#include "llmc/template/jinja.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace llmc::tmpl {
namespace {

using nlohmann::ordered_json;
using ::testing::HasSubstr;

struct RenderCase {
  const char *source;
  const char *context; // JSON object
  const char *expected;
};

#include "jinja2_reference_cases.inc"

std::string render(const std::string &source,
                   const ordered_json &ctx = ordered_json::object(),
                   const RenderOptions &options = {}) {
  return Template(source).render(ctx, options);
}

template <std::size_t N> void expectAll(const RenderCase (&cases)[N]) {
  for (const auto &c : cases) {
    SCOPED_TRACE(c.source);
    try {
      EXPECT_EQ(render(c.source, parseContextJson(c.context)), c.expected);
    } catch (const TemplateError &e) {
      ADD_FAILURE() << "threw: " << e.what();
    }
  }
}

// What a template fails with; "" when it renders.
std::string errorOf(const std::string &source,
                    const ordered_json &ctx = ordered_json::object(),
                    const RenderOptions &options = {}) {
  try {
    render(source, ctx, options);
  } catch (const TemplateError &e) {
    return e.what();
  }
  return "";
}

TEST(JinjaReference, WhitespaceControl) { expectAll(kWhitespaceCases); }
TEST(JinjaReference, LoopVariables) { expectAll(kLoopsCases); }
TEST(JinjaReference, NamespaceAndSet) { expectAll(kNamespaceCases); }
TEST(JinjaReference, Macros) { expectAll(kMacrosCases); }
TEST(JinjaReference, Filters) { expectAll(kFiltersCases); }
TEST(JinjaReference, Tojson) { expectAll(kTojsonCases); }
TEST(JinjaReference, Slicing) { expectAll(kSlicingCases); }
TEST(JinjaReference, PythonSemantics) { expectAll(kPythonCases); }
TEST(JinjaReference, StringAndDictMethods) { expectAll(kMethodsCases); }
TEST(JinjaReference, Undefined) { expectAll(kUndefinedCases); }
TEST(JinjaReference, IntegersBeyond64BitsKeepTheirDigits) {
  expectAll(kBigIntegersCases);
}

TEST(Jinja, ArithmeticOnABigIntegerFailsNamingIt) {
  const ordered_json ctx =
      parseContextJson(R"({"n": 123456789012345678901234567890})");
  EXPECT_NE(errorOf("{{ n + 1 }}", ctx)
                .find("integer "
                      "123456789012345678901234567890 "
                      "does not fit in 64 bits"),
            std::string::npos);
}

TEST(Jinja, ContextJsonParsesLikeNlohmannOtherwise) {
  EXPECT_TRUE(parseContextJson("{\"a\": ").is_discarded());
  EXPECT_TRUE(parseContextJson("[1, 2] x").is_discarded());
  EXPECT_TRUE(parseContextJson("1e400").is_discarded()); // as nlohmann
  const char *plain = R"({"a": [1, -2, 3.5, -0, "99999"],)"
                      R"( "b": {"c": null, "d": true}})";
  EXPECT_EQ(parseContextJson(plain), ordered_json::parse(plain));
  EXPECT_FALSE(mayHoldBigIntegers(plain));
  EXPECT_TRUE(mayHoldBigIntegers("[123456789012345678901]"));
}

TEST(Jinja, DropsOnlyOneTrailingNewline) {
  EXPECT_EQ(render("a\n"), "a");
  EXPECT_EQ(render("a\n\n"), "a\n");
  EXPECT_EQ(render(""), "");
}

TEST(Jinja, GenerationTagRendersItsBody) {
  EXPECT_EQ(render("{% generation %}x{{ 1 }}{% endgeneration %}y"), "x1y");
}

TEST(Jinja, NullIsNoneMissingIsUndefined) {
  ordered_json ctx = {{"a", nullptr}};
  EXPECT_EQ(render("{{ a is defined }}{{ a is none }}{{ b is defined }}", ctx),
            "TrueTrueFalse");
}

TEST(Jinja, RaiseExceptionCarriesTheMessageExactly) {
  try {
    render("{{ raise_exception('Roles must alternate ' ~ 2) }}");
    FAIL() << "expected RaisedException";
  } catch (const RaisedException &e) {
    EXPECT_STREQ(e.what(), "Roles must alternate 2");
  }
}

TEST(Jinja, StrftimeNowUsesTheFixedDate) {
  EXPECT_EQ(
      render("{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%B %d, %Y') }}"),
      "26 Jul 2024|July 26, 2024");
  EXPECT_EQ(render("{{ strftime_now('%A %a %j %H:%M:%S %p %I %-d %y') }}"),
            "Friday Fri 208 00:00:00 AM 12 26 24");
  RenderOptions options;
  options.strftimeNow = "2025-01-05T13:07:09";
  EXPECT_EQ(render("{{ strftime_now('%Y-%m-%d %a %I:%M %p') }}", {}, options),
            "2025-01-05 Sun 01:07 PM");
}

TEST(JinjaErrors, UnsupportedConstructsNameLineAndColumn) {
  EXPECT_EQ(errorOf("ab\n  {{ x | wordwrap }}"),
            "chat template line 2:10: unsupported filter 'wordwrap'");
  EXPECT_EQ(errorOf("{% include 'x.jinja' %}"),
            "chat template line 1:4: unknown tag 'include'");
  EXPECT_EQ(errorOf("{% extends 'base' %}"),
            "chat template line 1:4: unknown tag 'extends'");
  EXPECT_EQ(errorOf("{{ x is prime }}"),
            "chat template line 1:9: unsupported test 'prime'");
  EXPECT_EQ(errorOf("{% for x in xs recursive %}{% endfor %}"),
            "chat template line 1:16: recursive for loops are unsupported");
}

TEST(JinjaErrors, SyntaxErrors) {
  EXPECT_THAT(
      errorOf("{% if x %}never closed"),
      HasSubstr(
          "unexpected end of template, expected 'elif' or 'else' or 'endif'"));
  EXPECT_THAT(errorOf("{{ 'unterminated }}"),
              HasSubstr("line 1:4: unterminated string"));
  EXPECT_THAT(errorOf("{{ (1 }}"), HasSubstr("unexpected '}'"));
  EXPECT_THAT(errorOf("{{ 1 +* 2 }}"),
              HasSubstr("expected an expression, got '*'"));
  EXPECT_THAT(errorOf("{% break %}"), HasSubstr("'break' outside of a loop"));
  EXPECT_THAT(errorOf("{# open comment"),
              HasSubstr("missing end of comment tag"));
  EXPECT_THAT(errorOf("{{ x }"), HasSubstr("line 1:6: unexpected '}'"));
  EXPECT_THAT(errorOf("{{ x "),
              HasSubstr("line 1:1: unexpected end of template"));
  EXPECT_THAT(errorOf("{% endfor %}"), HasSubstr("unknown tag 'endfor'"));
}

TEST(JinjaErrors, RuntimeErrorsArePositioned) {
  ordered_json ctx = {{"messages", {{{"role", "user"}}}}};
  EXPECT_EQ(
      errorOf("{{ messages[0].content.foo }}", ctx),
      "chat template line 1:23: 'dict object' has no attribute 'content'");
  EXPECT_EQ(
      errorOf("\n{{ 'a' + 1 }}"),
      "chat template line 2:8: can only concatenate str (not \"int\") to str");
  EXPECT_EQ(errorOf("{% for t in tools %}{% endfor %}", {{"tools", nullptr}}),
            "chat template line 1:4: 'NoneType' object is not iterable");
  EXPECT_THAT(errorOf("{{ x + 1 }}"), HasSubstr("'x' is undefined"));
  EXPECT_THAT(errorOf("{{ 1 // 0 }}"), HasSubstr("division or modulo by zero"));
  EXPECT_THAT(errorOf("{{ undefined_var|tojson }}"),
              HasSubstr("not JSON serializable"));
  EXPECT_THAT(errorOf("{% set x = 1 %}{% set x.a = 2 %}"),
              HasSubstr("cannot assign attribute on non-namespace object"));
  EXPECT_THAT(errorOf("{% set a, b = [1, 2, 3] %}"),
              HasSubstr("too many values to unpack"));
  EXPECT_THAT(errorOf("{{ 9223372036854775807 + 1 }}"),
              HasSubstr("integer overflow"));
}

TEST(JinjaErrors, ContextMustBeAnObject) {
  EXPECT_THROW(Template("x").render(ordered_json::array()), TemplateError);
  ordered_json deep = 1;
  for (int i = 0; i < 2000; ++i)
    deep = ordered_json::array({deep});
  EXPECT_THROW(Template("x").render({{"deep", deep}}), TemplateError);
}

TEST(JinjaLimits, DeepMacroRecursionIsAnErrorNotACrash) {
  std::string err =
      errorOf("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_THAT(err, HasSubstr("maximum recursion depth exceeded"));
}

TEST(JinjaLimits, DeeplyNestedSourceIsRejected) {
  std::string deep =
      "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  EXPECT_THAT(errorOf(deep), HasSubstr("nested too deeply"));
  std::string blocks;
  for (int i = 0; i < 1000; ++i)
    blocks += "{% if true %}";
  EXPECT_THAT(errorOf(blocks), HasSubstr("nested too deeply"));
  std::string nots = "{{ " + std::string(20000, '-') + "1 }}";
  EXPECT_THAT(errorOf(nots), HasSubstr("nested too deeply"));
}

TEST(JinjaLimits, HugeLoopsHitTheStepLimit) {
  RenderOptions options;
  options.maxSteps = 10000;
  EXPECT_THAT(
      errorOf("{% for i in range(1000000000) %}{% endfor %}", {}, options),
      HasSubstr("step limit"));
  EXPECT_THAT(
      errorOf("{% for i in range(100) %}{% for j in range(100) %}{% for k in "
              "range(100) %}{% endfor %}{% endfor %}{% endfor %}",
              {}, options),
      HasSubstr("step limit"));
  // Exponential macro fan-out is bounded by the same budget.
  EXPECT_THAT(
      errorOf("{% macro f(n) %}{% if n %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}"
              "{% endmacro %}{{ f(60) }}",
              {}, options),
      HasSubstr("step limit"));
}

TEST(JinjaLimits, OutputAndValueSizesAreBounded) {
  RenderOptions options;
  options.maxOutputBytes = 1 << 16;
  EXPECT_THAT(errorOf("{{ 'x' * 100000000000 }}", {}, options),
              HasSubstr("exceeds"));
  EXPECT_THAT(errorOf("{% set ns = namespace(s='ab') %}{% for i in range(40) %}"
                      "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
                      {}, options),
              HasSubstr("exceeds"));
  EXPECT_THAT(errorOf("{% for i in range(100000) %}0123456789{% endfor %}", {},
                      options),
              HasSubstr("exceeds"));
}

TEST(JinjaLimits, SelfReferencingNamespaceNeitherLeaksNorOverflows) {
  EXPECT_THAT(errorOf("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}"),
              HasSubstr("maximum recursion depth"));
  EXPECT_EQ(
      render("{% set ns = namespace() %}{% set ns.me = ns %}{% macro m() %}"
             "{{ ns.me.me is defined }}{% endmacro %}{% set ns.m = m %}{{ "
             "ns.m() }}"),
      "True");
}

TEST(Jinja, TemplatesAreCopyableAndReusable) {
  Template a("{{ x }}");
  Template b = a;
  EXPECT_EQ(a.render({{"x", 1}}), "1");
  EXPECT_EQ(b.render({{"x", "two"}}), "two");
}

} // namespace
} // namespace llmc::tmpl
