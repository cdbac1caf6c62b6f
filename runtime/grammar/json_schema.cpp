//===- json_schema.cpp - JSON Schema -> grammar rules ---------------------===//
#include "llmc/grammar/json_schema.h"

#include "llmc/grammar/matcher.h"

#include "llmc/grammar/regex.h"
#include "llmc/grammar/response_format.h"
#include "llmc/support/error.h"
#include "llmc/support/utf8.h"

#include "pda.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace llmc::grammar {
namespace {

using Json = nlohmann::ordered_json;

// Keywords of the JSON Schema drafts (4 to 2020-12) that change which
// documents validate and that llmc does not generate: refused, naming them.
// Every other keyword llmc does not know (draft 4's `id`, vendor `x-...`,
// `readonly`, `example`, ...) is ignored, as the specification says.
const std::set<std::string> kUnsupportedValidation = {"uniqueItems",
                                                      "contains",
                                                      "minContains",
                                                      "maxContains",
                                                      "dependentSchemas",
                                                      "propertyNames",
                                                      "unevaluatedItems",
                                                      "unevaluatedProperties",
                                                      "not",
                                                      "if",
                                                      "then",
                                                      "else",
                                                      "$dynamicRef",
                                                      "$recursiveRef"};

// patternProperties every key matches (a search: ".*" matches the empty
// prefix; keys llmc writes hold no line breaks).
const std::set<std::string> kMatchAll = {"",     ".*",   "^.*",   ".*$",
                                         "^.*$", "(.*)", "^(.*)$"};

/// The literal a pattern of the form "^literal" (or "^literal.*") says a
/// key starts with; none for any other pattern.
std::optional<std::string> literalPrefix(const std::string &pattern) {
  if (pattern.empty() || pattern[0] != '^')
    return std::nullopt;
  std::string out;
  const std::string_view meta = ".[]()*+?{}|^$";
  size_t end = pattern.size();
  if (end >= 3 && pattern.compare(end - 2, 2, ".*") == 0 &&
      pattern[end - 3] != '\\')
    end -= 2;
  for (size_t i = 1; i < end; ++i) {
    char c = pattern[i];
    if (c == '\\') {
      if (i + 1 == end ||
          std::isalnum(static_cast<unsigned char>(pattern[i + 1])))
        return std::nullopt; // \d, \w, \u...: a class, not a literal
      c = pattern[++i];
    } else if (meta.find(c) != std::string_view::npos) {
      return std::nullopt;
    }
    out += c;
  }
  return out;
}

const std::set<std::string> kObjectKeywords = {
    "properties",        "required",
    "patternProperties", "minProperties",
    "maxProperties",     "dependencies",
    "dependentRequired", "additionalProperties"};
const std::set<std::string> kArrayKeywords = {
    "items", "prefixItems", "additionalItems", "minItems", "maxItems"};
const std::set<std::string> kNumberKeywords = {
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"};
const std::set<std::string> kStringKeywords = {"minLength", "maxLength",
                                               "pattern", "format"};

// Regexes of the formats we generate: each a subset of what ajv-formats
// accepts (February stops at the 28th, no leap seconds, ...).
const char *const kDate =
    "\\d{4}-((0[13578]|1[02])-(0[1-9]|[12]\\d|3[01])|"
    "(0[469]|11)-(0[1-9]|[12]\\d|30)|02-(0[1-9]|1\\d|2[0-8]))";
const char *const kTime = "([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,6})?"
                          "(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)";
// Up to four labels of up to 61 characters: always under 253.
const char *const kHost =
    "[a-zA-Z0-9]([a-zA-Z0-9-]{0,59}[a-zA-Z0-9])?"
    "(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,59}[a-zA-Z0-9])?){0,3}";
// RFC 3986's pieces (IPv6 literals left out), each of bounded length as the
// other formats: a model cannot wander off in a URI (at most ~300
// characters). A path's bound is on its whole length, not per segment
// (`/a/b` is `/` and `a/b`: RFC 3986 allows empty segments).
#define LLMC_PCT "%[0-9A-Fa-f]{2}"
#define LLMC_PCHAR "([A-Za-z0-9._~!$&'()*+,;=:@-]|" LLMC_PCT ")"
#define LLMC_PATH_CHARS "(" LLMC_PCHAR "|/)"
#define LLMC_AUTHORITY                                                         \
  "//(([A-Za-z0-9._~!$&'()*+,;=:-]|" LLMC_PCT "){0,16}@)?"                     \
  "([A-Za-z0-9._~!$&'()*+,;=-]|" LLMC_PCT "){0,48}(:[0-9]{0,5})?"              \
  "(/" LLMC_PATH_CHARS "{0,127})?"
#define LLMC_QUERY_FRAGMENT                                                    \
  "(\\?([A-Za-z0-9._~!$&'()*+,;=:@/?-]|" LLMC_PCT "){0,32})?"                  \
  "(#([A-Za-z0-9._~!$&'()*+,;=:@/?-]|" LLMC_PCT "){0,32})?"
// ajv-formats wants something after the scheme's colon.
const char *const kUri =
    "[A-Za-z][A-Za-z0-9+.-]{0,31}:(" LLMC_AUTHORITY
    "|/(" LLMC_PCHAR LLMC_PATH_CHARS "{0,126})?|" LLMC_PCHAR LLMC_PATH_CHARS
    "{0,127})" LLMC_QUERY_FRAGMENT;
// A relative reference's first segment holds no ':'.
const char *const kRelativeRef =
    "(" LLMC_AUTHORITY "|/(" LLMC_PCHAR LLMC_PATH_CHARS
    "{0,126})?|([A-Za-z0-9._~!$&'()*+,;=@-]|" LLMC_PCT
    "){1,32}(/" LLMC_PATH_CHARS "{0,95})?)?" LLMC_QUERY_FRAGMENT;
#undef LLMC_PCT
#undef LLMC_PCHAR
#undef LLMC_PATH_CHARS
#undef LLMC_AUTHORITY
#undef LLMC_QUERY_FRAGMENT
const std::map<std::string, std::string> kFormats = {
    {"date", std::string("^") + kDate + "$"},
    {"time", std::string("^") + kTime + "$"},
    {"date-time", std::string("^") + kDate + "T" + kTime + "$"},
    {"uuid", "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"},
    {"ipv4", "^((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}"
             "(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)$"},
    {"email", "^[a-zA-Z0-9_%+-]+(\\.[a-zA-Z0-9_%+-]+)*@"
              "([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,}$"},
    {"hostname", std::string("^") + kHost + "$"},
    {"ipv6", "^([0-9a-f]{1,4}:){7}[0-9a-f]{1,4}$"},
    {"uri", std::string("^") + kUri + "$"},
    {"uri-reference", std::string("^(") + kUri + "|" + kRelativeRef + ")$"},
};

// The formats of the JSON Schema specification: one llmc does not
// generate is an error; any other format name is a vendor's and, as the
// specification says, asserts nothing.
const std::set<std::string> kStandardFormats = {
    "date-time",    "date",          "time",
    "duration",     "email",         "idn-email",
    "hostname",     "idn-hostname",  "ipv4",
    "ipv6",         "uri",           "uri-reference",
    "iri",          "iri-reference", "uuid",
    "uri-template", "json-pointer",  "relative-json-pointer",
    "regex"};

/// "/properties/a~1b": a JSON pointer token escaped.
std::string pointerToken(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

/// A rule name from a pointer ("root-properties-name").
std::string ruleName(const std::string &path) {
  std::string out = "root";
  for (char c : path)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  while (out.find("--") != std::string::npos)
    out.replace(out.find("--"), 2, "-");
  while (out.size() > 1 && out.back() == '-')
    out.pop_back();
  return out;
}

class Converter {
public:
  Converter(const std::string &origin, const JsonSchemaOptions &options)
      : origin_(origin), options_(options) {
    buildShared();
  }

  Grammar schema(const Json &root) {
    root_ = &root;
    // Drafts 3 to 7 ignore what stands beside a $ref (the schema is the
    // reference's); 2019-09 on, and without $schema, it applies too.
    if (root.is_object() && root.contains("$schema") &&
        root["$schema"].is_string()) {
      const std::string draft = root["$schema"].get<std::string>();
      for (const char *d : {"draft-03", "draft-04", "draft-06", "draft-07"})
        refSiblingsIgnored_ =
            refSiblingsIgnored_ || draft.find(d) != std::string::npos;
    }
    const uint32_t r = g_.rule("root");
    g_.addAlternative(r, {value(root, "")});
    g_.root = r;
    g_.validate(origin_);
    return std::move(g_);
  }

  Grammar any(bool objectOnly) {
    const uint32_t r = g_.rule("root");
    g_.addAlternative(
        r, {objectOnly ? Grammar::ref(anyObject_) : Grammar::ref(anyValue_)});
    g_.root = r;
    g_.validate(origin_);
    return std::move(g_);
  }

private:
  [[noreturn]] void fail(const std::string &path,
                         const std::string &what) const {
    throw Error(origin_ + ": at " + (path.empty() ? "/" : path) + ": " + what);
  }

  /// A (sub)schema no value validates against: where it may be left out
  /// (an optional property, a branch, a type of several) it is.
  struct Unsatisfiable : Error {
    using Error::Error;
  };
  [[noreturn]] void nothing(const std::string &path,
                            const std::string &what) const {
    throw Unsatisfiable(origin_ + ": at " + (path.empty() ? "/" : path) + ": " +
                        what);
  }

  Element lit(const std::string &text) {
    Sequence s;
    g_.appendLiteral(s, text);
    if (s.size() == 1)
      return s[0];
    const uint32_t r = g_.freshRule("lit");
    g_.addAlternative(r, std::move(s));
    return Grammar::ref(r);
  }

  void appendLit(Sequence &s, const std::string &text) {
    g_.appendLiteral(s, text);
  }

  /// The rules every schema shares: whitespace, strings, numbers, any
  /// value.
  void buildShared() {
    // ws ::= " "? : compact. A model may not stall in whitespace (vLLM
    // #38696, #12744: llama.cpp's and XGrammar's looser rules let greedy
    // decoding spend the whole budget on newlines and indentation).
    ws_ = g_.rule("ws");
    g_.addAlternative(ws_, {});
    g_.addAlternative(ws_, {g_.byte(' ')});
    // char ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
    char_ = g_.rule("char");
    g_.addAlternative(
        char_, {g_.codepoints({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}, true)});
    ByteSet esc, hex;
    for (char c : std::string("\"\\/bfnrt"))
      esc.set(static_cast<unsigned char>(c));
    for (char c : std::string("0123456789abcdefABCDEF"))
      hex.set(static_cast<unsigned char>(c));
    g_.addAlternative(char_, {g_.byte('\\'), g_.bytes(esc)});
    g_.addAlternative(
        char_, {g_.byte('\\'), g_.byte('u'), g_.repeat(g_.bytes(hex), 4, 4)});
    string_ = g_.rule("string");
    g_.addAlternative(
        string_,
        {g_.byte('"'), g_.repeat(Grammar::ref(char_), 0, -1), g_.byte('"')});
    ByteSet digit, nonZero, sign, e;
    for (char c = '0'; c <= '9'; ++c)
      digit.set(static_cast<unsigned char>(c));
    nonZero = digit;
    nonZero.reset('0');
    sign.set('-');
    sign.set('+');
    e.set('e');
    e.set('E');
    const Element d = g_.bytes(digit);
    // integral ::= "-"? ( "0" | [1-9] [0-9]{0,19} ) (up to 20 digits: every
    // 64-bit integer)
    const uint32_t integral = g_.rule("integral");
    const uint32_t magnitude = g_.freshRule("magnitude");
    g_.addAlternative(magnitude, {g_.byte('0')});
    g_.addAlternative(magnitude, {g_.bytes(nonZero), g_.repeat(d, 0, 19)});
    g_.addAlternative(integral,
                      {g_.repeat(g_.byte('-'), 0, 1), Grammar::ref(magnitude)});
    integer_ = g_.rule("integer");
    g_.addAlternative(integer_, {Grammar::ref(integral)});
    // number ::= integral ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,2} )?
    // (two exponent digits: every such number is a finite double)
    const uint32_t fraction = fraction_ = g_.freshRule("fraction");
    g_.addAlternative(fraction, {g_.byte('.'), g_.repeat(d, 1, 16)});
    const uint32_t exponent = g_.freshRule("exponent");
    g_.addAlternative(exponent, {g_.bytes(e), g_.repeat(g_.bytes(sign), 0, 1),
                                 g_.repeat(d, 1, 2)});
    number_ = g_.rule("number");
    g_.addAlternative(number_, {Grammar::ref(integral),
                                g_.repeat(Grammar::ref(fraction), 0, 1),
                                g_.repeat(Grammar::ref(exponent), 0, 1)});
    boolean_ = g_.rule("boolean");
    g_.addAlternative(boolean_, {lit("true")});
    g_.addAlternative(boolean_, {lit("false")});
    null_ = g_.rule("null");
    g_.addAlternative(null_, {lit("null")});
    // value ::= object | array | string | number | boolean | null
    anyValue_ = g_.rule("value");
    anyObject_ = g_.rule("object");
    anyArray_ = g_.rule("array");
    for (uint32_t r :
         {anyObject_, anyArray_, string_, number_, boolean_, null_})
      g_.addAlternative(anyValue_, {Grammar::ref(r)});
    // object ::= "{" ws ( member ( "," ws member )* )? "}"
    const uint32_t member = g_.rule("member");
    g_.addAlternative(member, {Grammar::ref(string_), Grammar::ref(ws_),
                               g_.byte(':'), Grammar::ref(ws_),
                               Grammar::ref(anyValue_), Grammar::ref(ws_)});
    g_.addAlternative(anyObject_,
                      {g_.byte('{'), Grammar::ref(ws_),
                       separated(Grammar::ref(member), 0, -1), g_.byte('}')});
    const uint32_t item = g_.rule("item");
    g_.addAlternative(item, {Grammar::ref(anyValue_), Grammar::ref(ws_)});
    g_.addAlternative(anyArray_,
                      {g_.byte('['), Grammar::ref(ws_),
                       separated(Grammar::ref(item), 0, -1), g_.byte(']')});
  }

  /// min..max (max < 0: unbounded) of `e`, separated by "," ws.
  Element separated(Element e, int64_t min, int64_t max) {
    const uint32_t r = g_.freshRule("list");
    const uint32_t more = g_.freshRule("list-more");
    g_.addAlternative(more, {g_.byte(','), Grammar::ref(ws_), e});
    if (max != 0) {
      g_.addAlternative(
          r, {e, g_.repeat(Grammar::ref(more), std::max<int64_t>(min - 1, 0),
                           max < 0 ? -1 : max - 1)});
    }
    if (min == 0)
      g_.addAlternative(r, {});
    return Grammar::ref(r);
  }

  void checkKeywords(const Json &s, const std::string &path) const {
    static const std::set<std::string> kSupported = [] {
      std::set<std::string> k = {"type",  "enum",  "const", "anyOf",
                                 "oneOf", "allOf", "$ref"};
      for (const auto *set : {&kObjectKeywords, &kArrayKeywords,
                              &kStringKeywords, &kNumberKeywords})
        k.insert(set->begin(), set->end());
      return k;
    }();
    for (auto it = s.begin(); it != s.end(); ++it)
      if (it.key() == "not") // what withoutNot() did not say positively
        fail(path + "/not", "'not' is supported of types (but integer "
                            "alone), of one required property, of a 'not' "
                            "and of a schema every value matches");
      else if (kUnsupportedValidation.count(it.key()) &&
               !kSupported.count(it.key()))
        fail(path, "the keyword '" + it.key() + "' is not supported");
  }

  /// Whether a keyword constrains (else it is an annotation or unknown,
  /// and ignored).
  static bool constrains(const std::string &key) {
    static const std::set<std::string> kConstraining = [] {
      std::set<std::string> k = kUnsupportedValidation;
      for (const auto *set : {&kObjectKeywords, &kArrayKeywords,
                              &kStringKeywords, &kNumberKeywords})
        k.insert(set->begin(), set->end());
      for (const char *x :
           {"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref"})
        k.insert(x);
      return k;
    }();
    return kConstraining.count(key) != 0;
  }

  /// Keywords that constrain, other than `allowed`.
  std::vector<std::string>
  constraintsBeside(const Json &s, const std::set<std::string> &allowed) const {
    std::vector<std::string> out;
    for (auto it = s.begin(); it != s.end(); ++it)
      if (constrains(it.key()) && !allowed.count(it.key()))
        out.push_back(it.key());
    return out;
  }

  /// `s` with its `not` said positively, as one more schema of its allOf:
  /// `not` of a schema every value matches (nothing validates), of a `not`
  /// (the inner schema), of types (the other types), of one required
  /// property (an object, that property never written). nullopt for any
  /// other `not`, which stays refused.
  std::optional<Json> withoutNot(const Json &s, const std::string &path) {
    const Json &n = s["not"];
    const std::string at = path + "/not";
    Json positive;
    if (n.is_boolean()) {
      if (n.get<bool>())
        nothing(at, "'not' of true matches nothing");
      positive = true;
    } else if (!n.is_object()) {
      fail(at, "a schema must be an object or a boolean");
    } else {
      const std::vector<std::string> keys = constraintsBeside(n, {});
      if (keys.empty())
        nothing(at, "'not' of a schema every value matches: nothing "
                    "validates");
      if (keys.size() != 1)
        return std::nullopt;
      if (keys[0] == "not") {
        positive = n["not"];
      } else if (keys[0] == "type") {
        const std::vector<std::string> types = typesOf(n["type"]);
        auto has = [&](const char *t) {
          return std::find(types.begin(), types.end(), t) != types.end();
        };
        if (types.empty() || (has("integer") && !has("number")))
          return std::nullopt; // numbers but not integers: no grammar here
        Json others = Json::array();
        for (const char *t :
             {"null", "boolean", "object", "array", "string", "number"})
          if (!has(t))
            others.push_back(t);
        if (others.empty())
          nothing(at, "'not' of every type: nothing validates");
        positive = {{"type", others}};
      } else if (keys[0] == "required" && n["required"].is_array() &&
                 n["required"].size() == 1 && n["required"][0].is_string()) {
        // `required` holds for every value but objects: its `not` for
        // objects alone.
        positive = {
            {"type", "object"},
            {"properties", {{n["required"][0].get<std::string>(), false}}}};
      } else {
        return std::nullopt;
      }
    }
    Json out = s;
    out.erase("not");
    if (!out.contains("allOf"))
      out["allOf"] = Json::array();
    if (!out["allOf"].is_array())
      fail(path + "/allOf", "must be a non-empty array of schemas");
    out["allOf"].push_back(std::move(positive));
    return out;
  }

  Element value(const Json &s, const std::string &path) {
    if (s.is_boolean()) {
      if (!s.get<bool>())
        nothing(path, "the schema false matches nothing");
      return Grammar::ref(anyValue_);
    }
    if (!s.is_object())
      fail(path, "a schema must be an object or a boolean");
    if (s.contains("not"))
      if (std::optional<Json> positive = withoutNot(s, path))
        return value(*positive, path);
    checkKeywords(s, path);
    if (refSiblingsIgnored_ && s.contains("$ref"))
      return ref(s["$ref"], path + "/$ref");
    if (s.contains("allOf") || s.contains("anyOf") || s.contains("oneOf") ||
        s.contains("$ref")) {
      const Json merged = distributed(s, path);
      if (merged != s) {
        // A recursive schema whose reference has constraints beside it
        // would be merged forever.
        if (distributionDepth_ >= 16)
          fail(path, "constraints beside a recursive reference or "
                     "combinator are not supported");
        ++distributionDepth_;
        struct Restore {
          int &depth;
          ~Restore() { --depth; }
        } restore{distributionDepth_};
        return value(merged, path);
      }
    }
    if (s.contains("$ref"))
      return ref(s["$ref"], path + "/$ref");
    for (const char *k : {"anyOf", "oneOf"})
      if (s.contains(k)) {
        if (!s[k].is_array() || s[k].empty())
          fail(path + "/" + k, "must be a non-empty array of schemas");
        const Json branches =
            k[0] == 'o' ? exclusiveBranches(s[k], path) : s[k];
        std::vector<Element> kept;
        for (size_t i = 0; i < branches.size(); ++i)
          try {
            kept.push_back(
                value(branches[i], path + "/" + k + "/" + std::to_string(i)));
          } catch (const Unsatisfiable &) {
            // A branch nothing fits is no branch.
          }
        if (kept.empty())
          nothing(path + "/" + k, "no branch has a value");
        const uint32_t r = g_.freshRule(ruleName(path) + "-" + k);
        for (Element e : kept)
          g_.addAlternative(r, {e});
        return Grammar::ref(r);
      }
    if (s.contains("enum") || s.contains("const"))
      return literals(s, path);
    std::vector<std::string> types;
    if (s.contains("type")) {
      const Json &t = s["type"];
      if (t.is_string())
        types.push_back(t.get<std::string>());
      else if (t.is_array() && !t.empty())
        for (const Json &x : t) {
          if (!x.is_string())
            fail(path + "/type", "a type list must hold type names");
          types.push_back(x.get<std::string>());
        }
      else
        fail(path + "/type", "must be a type name or a list of them");
    } else {
      // No type: any value, each type under its own keywords (`format` on
      // a number asserts nothing, as JSON Schema says).
      if (impliedTypes(s).empty())
        return Grammar::ref(anyValue_);
      types = {"object", "array", "string", "number", "boolean", "null"};
    }
    if (types.size() == 1)
      return typed(s, types[0], path);
    std::vector<Element> kept;
    std::optional<Unsatisfiable> why;
    for (const std::string &t : types)
      try {
        kept.push_back(typed(s, t, path));
      } catch (const Unsatisfiable &e) {
        why = e; // no value of this type: the others may have some
      }
    if (kept.empty())
      throw *why;
    const uint32_t r = g_.freshRule(ruleName(path) + "-types");
    for (Element e : kept)
      g_.addAlternative(r, {e});
    return Grammar::ref(r);
  }

  Element typed(const Json &s, const std::string &type,
                const std::string &path) {
    if (type == "object")
      return object(s, path);
    if (type == "array")
      return array(s, path);
    if (type == "string")
      return string(s, path);
    if (type == "number" || type == "integer")
      return number(s, type == "integer", path);
    if (type == "boolean")
      return Grammar::ref(boolean_);
    if (type == "null")
      return Grammar::ref(null_);
    fail(path + "/type", "unknown type '" + type + "'");
  }

  static bool hasType(const Json &v, const std::string &t) {
    if (t == "object")
      return v.is_object();
    if (t == "array")
      return v.is_array();
    if (t == "string")
      return v.is_string();
    if (t == "number")
      return v.is_number();
    if (t == "integer")
      return v.is_number_integer() ||
             (v.is_number_float() &&
              v.get<double>() ==
                  static_cast<double>(static_cast<int64_t>(v.get<double>())));
    if (t == "boolean")
      return v.is_boolean();
    return t == "null" && v.is_null();
  }

  Element literals(const Json &s, const std::string &path) {
    std::vector<Json> values;
    if (s.contains("const"))
      values.push_back(s["const"]);
    if (s.contains("enum")) {
      if (!s["enum"].is_array() || s["enum"].empty())
        fail(path + "/enum", "must be a non-empty array");
      if (s.contains("const"))
        fail(path, "'enum' next to 'const' is not supported");
      for (const Json &v : s["enum"])
        values.push_back(v);
    }
    const auto beside = constraintsBeside(s, {"enum", "const", "type"});
    if (!beside.empty())
      fail(path, "'" + beside[0] + "' next to '" +
                     (s.contains("enum") ? "enum" : "const") +
                     "' is not supported");
    if (s.contains("type")) {
      std::vector<std::string> types;
      if (s["type"].is_string())
        types.push_back(s["type"].get<std::string>());
      else if (s["type"].is_array())
        for (const Json &t : s["type"])
          if (t.is_string())
            types.push_back(t.get<std::string>());
      std::erase_if(values, [&](const Json &v) {
        for (const std::string &t : types)
          if (hasType(v, t))
            return false;
        return true;
      });
      if (values.empty())
        nothing(path, "no value of 'enum'/'const' has the schema's type");
    }
    std::vector<std::string> texts;
    for (const Json &v : values) {
      texts.push_back(v.dump());
      // Numbers compare by value: enum [2.0] also takes the 2 a document
      // writes (an integer stays as written: [2] is answered 2, never 2.0).
      if (v.is_number_float() &&
          v.get<double>() == std::floor(v.get<double>()) &&
          std::fabs(v.get<double>()) < 1e15)
        texts.push_back(std::to_string(static_cast<int64_t>(v.get<double>())));
    }
    return g_.literals(std::move(texts));
  }

  Element ref(const Json &target, const std::string &path) {
    if (!target.is_string())
      fail(path, "must be a string");
    const std::string p = target.get<std::string>();
    if (auto it = refs_.find(p); it != refs_.end())
      return Grammar::ref(it->second);
    const Json *at = &resolve(p, path);
    // The rule exists before its body: a recursive reference finds it.
    const uint32_t r = g_.freshRule(ruleName(p.substr(1)) + "-ref");
    refs_[p] = r;
    try {
      g_.addAlternative(r, {value(*at, p.substr(1))});
    } catch (const Unsatisfiable &) {
      refs_.erase(p);
      throw;
    }
    return Grammar::ref(r);
  }

  /// The schema a reference "#/json/pointer" names.
  const Json &resolve(const std::string &p, const std::string &path) const {
    if (p.empty() || p[0] != '#')
      fail(path, "only references into this document (\"#...\") are "
                 "supported, not '" +
                     p + "'");
    const Json *at = root_;
    std::string pointer = p.substr(1);
    size_t i = 0;
    while (i < pointer.size()) {
      if (pointer[i] != '/')
        fail(path, "'" + p + "' is not a JSON pointer");
      size_t next = pointer.find('/', i + 1);
      std::string tok = pointer.substr(
          i + 1, next == std::string::npos ? std::string::npos : next - i - 1);
      for (size_t k = 0; (k = tok.find('~', k)) != std::string::npos; ++k)
        tok.replace(k, 2, tok.compare(k, 2, "~1") == 0 ? "/" : "~");
      if (at->is_object() && at->contains(tok))
        at = &(*at)[tok];
      else if (at->is_array() && !tok.empty() &&
               tok.find_first_not_of("0123456789") == std::string::npos &&
               std::stoul(tok) < at->size())
        at = &(*at)[std::stoul(tok)];
      else
        fail(path, "'" + p + "' points to nothing");
      i = next == std::string::npos ? pointer.size() : next;
    }
    return *at;
  }

  // allOf, and constraints beside $ref / anyOf / oneOf, are merged into one
  // schema per branch. Merging keeps what validates a subset of what the
  // schemas accept together, and refuses (naming the keyword) what it
  // cannot combine: never a dropped constraint.

  static std::vector<std::string> typesOf(const Json &t) {
    std::vector<std::string> out;
    if (t.is_string())
      out.push_back(t.get<std::string>());
    else if (t.is_array())
      for (const Json &x : t)
        if (x.is_string())
          out.push_back(x.get<std::string>());
    return out;
  }

  /// Both schemas at once; nullopt when nothing validates both (a branch
  /// to drop). `depth` bounds references merged into references.
  std::optional<Json> merge(const Json &a, const Json &b,
                            const std::string &path, int depth) const {
    if (depth > 32)
      fail(path, "references nest too deep to merge");
    if (a.is_boolean())
      return a.get<bool>() ? std::optional<Json>(b) : std::nullopt;
    if (b.is_boolean())
      return b.get<bool>() ? std::optional<Json>(a) : std::nullopt;
    if (!a.is_object() || !b.is_object())
      fail(path, "a schema must be an object or a boolean");
    // References and allOf inside a member are merged in first.
    for (const Json *x : {&a, &b})
      for (const char *k : {"$ref", "allOf"})
        if (x->contains(k)) {
          Json rest = *x;
          rest.erase(k);
          std::optional<Json> inner =
              k[0] == '$' ? merge(refSiblingsIgnored_ ? Json::object() : rest,
                                  resolve(requireString((*x)[k], path), path),
                                  path, depth + 1)
                          : mergeAll(rest, (*x)[k], path, depth + 1);
          if (!inner)
            return std::nullopt;
          return merge(x == &a ? *inner : a, x == &a ? b : *inner, path,
                       depth + 1);
        }
    Json out = a;
    for (auto it = b.begin(); it != b.end(); ++it) {
      const std::string &k = it.key();
      const Json &v = it.value();
      if (!out.contains(k)) {
        out[k] = v;
        continue;
      }
      Json &mine = out[k];
      if (mine == v || !constrains(k))
        continue;
      if (k == "type") {
        std::vector<std::string> both;
        for (const std::string &x : typesOf(mine))
          for (const std::string &y : typesOf(v))
            if (x == y || (x == "number" && y == "integer"))
              both.push_back(y);
            else if (x == "integer" && y == "number")
              both.push_back(x);
        if (both.empty())
          return std::nullopt;
        mine = both.size() == 1 ? Json(both[0]) : Json(both);
      } else if (k == "properties" && mine.is_object() && v.is_object()) {
        for (auto p = v.begin(); p != v.end(); ++p) {
          if (!mine.contains(p.key())) {
            mine[p.key()] = p.value();
            continue;
          }
          std::optional<Json> m =
              merge(mine[p.key()], p.value(),
                    path + "/properties/" + pointerToken(p.key()), depth);
          mine[p.key()] = m ? *m : Json(false);
        }
      } else if (k == "required" && mine.is_array() && v.is_array()) {
        for (const Json &r : v)
          if (std::find(mine.begin(), mine.end(), r) == mine.end())
            mine.push_back(r);
      } else if ((k == "minimum" || k == "minLength" || k == "minItems" ||
                  k == "exclusiveMinimum" || k == "minProperties") &&
                 mine.is_number() && v.is_number()) {
        if (v > mine)
          mine = v;
      } else if ((k == "maximum" || k == "maxLength" || k == "maxItems" ||
                  k == "exclusiveMaximum" || k == "maxProperties") &&
                 mine.is_number() && v.is_number()) {
        if (v < mine)
          mine = v;
      } else if (k == "enum" && mine.is_array() && v.is_array()) {
        Json both = Json::array();
        for (const Json &x : mine)
          if (std::find(v.begin(), v.end(), x) != v.end())
            both.push_back(x);
        if (both.empty())
          return std::nullopt;
        mine = both;
      } else if (k == "const") {
        return std::nullopt; // two different constants
      } else if (k == "items") {
        std::optional<Json> m = merge(mine, v, path + "/items", depth);
        mine = m ? *m : Json(false);
      } else {
        fail(path, "allOf: '" + k +
                       "' differs between the schemas and cannot be merged");
      }
    }
    // additionalProperties of one schema forbids the other's new keys.
    for (const Json *x : {&a, &b}) {
      const Json *other = x == &a ? &b : &a;
      if (!x->contains("additionalProperties") ||
          (*x)["additionalProperties"] == true ||
          !other->contains("properties"))
        continue;
      for (auto p = (*other)["properties"].begin();
           p != (*other)["properties"].end(); ++p)
        if (!x->contains("properties") || !(*x)["properties"].contains(p.key()))
          fail(path, "allOf: property '" + p.key() +
                         "' of one schema is an additional property of "
                         "another (not supported)");
    }
    return out;
  }

  /// `b` with top-level $ref and allOf merged in, for reasoning about
  /// which documents it takes (false: none; unchanged when unmergeable).
  Json shape(const Json &b, const std::string &path) const {
    if (!b.is_object() || (!b.contains("$ref") && !b.contains("allOf")))
      return b;
    try {
      std::optional<Json> m = merge(Json::object(), b, path, 0);
      return m ? *m : Json(false);
    } catch (const Error &) {
      return b;
    }
  }

  /// The types whose keywords `s` has (properties: object, ...).
  static std::vector<std::string> impliedTypes(const Json &s) {
    std::vector<std::string> out;
    for (const auto &[keys, type] : {std::pair{&kObjectKeywords, "object"},
                                     {&kArrayKeywords, "array"},
                                     {&kStringKeywords, "string"},
                                     {&kNumberKeywords, "number"}})
      for (const std::string &k : *keys)
        if (s.contains(k)) {
          out.push_back(type);
          break;
        }
    return out;
  }

  /// The types of the values `s` lets through (those of its constants, or
  /// its type); empty: any type.
  static std::vector<std::string> typesTaken(const Json &s) {
    if (s.contains("type"))
      return typesOf(s["type"]);
    std::vector<std::string> out;
    if (s.contains("const") || s.contains("enum")) {
      const Json values =
          s.contains("const") ? Json::array({s["const"]}) : s["enum"];
      for (const Json &v : values)
        for (const char *t : {"object", "array", "string", "integer", "number",
                              "boolean", "null"})
          if (hasType(v, t)) {
            out.push_back(t);
            break;
          }
      return out;
    }
    return out;
  }

  static bool typesMeet(const std::vector<std::string> &a,
                        const std::vector<std::string> &b) {
    if (a.empty() || b.empty())
      return true;
    for (const std::string &x : a)
      for (const std::string &y : b)
        if (x == y || (x == "number" && y == "integer") ||
            (x == "integer" && y == "number"))
          return true;
    return false;
  }

  /// Whether no document llmc writes for `a` validates against `b` (a
  /// proof from types, constants and object keys; false when unsure).
  bool excludes(const Json &a, const Json &b, const std::string &path,
                int depth = 0) const {
    if (a.is_boolean() || b.is_boolean())
      return (a.is_boolean() && !a.get<bool>()) ||
             (b.is_boolean() && !b.get<bool>());
    if (!a.is_object() || !b.is_object() || depth > 8)
      return false;
    const std::vector<std::string> ta = typesTaken(a);
    if (!typesMeet(ta, typesTaken(b)))
      return true;
    auto values = [](const Json &s) -> std::optional<Json> {
      if (s.contains("const"))
        return Json::array({s["const"]});
      if (s.contains("enum") && s["enum"].is_array())
        return s["enum"];
      return std::nullopt;
    };
    if (auto va = values(a), vb = values(b); va && vb) {
      bool apart = true;
      for (const Json &v : *va)
        apart = apart && std::find(vb->begin(), vb->end(), v) == vb->end();
      if (apart)
        return true;
    }
    // Keys: only when everything `a` writes is an object.
    for (const char *k : {"anyOf", "oneOf", "$ref", "allOf"})
      if (a.contains(k))
        return false;
    if (ta != std::vector<std::string>{"object"})
      return false;
    const Json none = Json::object();
    const Json &pa = a.value("properties", none),
               &pb = b.value("properties", none);
    auto writes = [&](const std::string &k) {
      if (pa.contains(k))
        return !(pa[k].is_boolean() && !pa[k].get<bool>());
      return allowsOtherKeys(a) || a.contains("patternProperties");
    };
    for (const Json &k : b.value("required", Json::array()))
      if (k.is_string() && !writes(k.get<std::string>()))
        return true;
    for (const Json &k : a.value("required", Json::array())) {
      if (!k.is_string() || !pa.contains(k.get<std::string>()))
        continue;
      const std::string key = k.get<std::string>();
      if (pb.contains(key)) {
        if (excludes(shape(pa[key], path), shape(pb[key], path), path,
                     depth + 1))
          return true;
      } else if (!allowsOtherKeys(b) && !b.contains("patternProperties")) {
        return true;
      }
    }
    return false;
  }

  /// oneOf's branches made exclusive: a document llmc writes for one
  /// validates against no other. Where no proof is found, a branch is
  /// kept from writing a key another requires; else refused.
  Json exclusiveBranches(const Json &branches, const std::string &path) {
    // What each branch validates, and what llmc writes for it (narrowed).
    std::vector<Json> valid, shapes;
    std::vector<bool> changed(branches.size(), false);
    for (const Json &b : branches)
      valid.push_back(shape(b, path));
    shapes = valid;
    // A branch without a type is written as the types its keywords imply
    // (a string fits {"required": ["a"]} and {"required": ["b"]} alike).
    for (size_t i = 0; i < shapes.size(); ++i)
      if (shapes[i].is_object() && !shapes[i].contains("type") &&
          !shapes[i].contains("enum") && !shapes[i].contains("const") &&
          !impliedTypes(shapes[i]).empty()) {
        const auto implied = impliedTypes(shapes[i]);
        shapes[i]["type"] =
            implied.size() == 1 ? Json(implied[0]) : Json(implied);
        changed[i] = true;
      }
    for (size_t i = 0; i < shapes.size(); ++i)
      for (size_t j = 0; j < shapes.size(); ++j) {
        if (i == j || excludes(shapes[i], valid[j], path))
          continue;
        Json &a = shapes[i];
        bool separated = false;
        if (a.is_object() &&
            typesTaken(a) == std::vector<std::string>{"object"} &&
            !a.contains("patternProperties") && valid[j].is_object())
          for (const Json &k : valid[j].value("required", Json::array())) {
            const Json mine = a.value("required", Json::array());
            if (k.is_string() &&
                std::find(mine.begin(), mine.end(), k) == mine.end()) {
              a["properties"][k.get<std::string>()] = false;
              changed[i] = separated = true;
              break;
            }
          }
        if (!separated || !excludes(shapes[i], valid[j], path))
          fail(path + "/oneOf",
               "branches " + std::to_string(i) + " and " + std::to_string(j) +
                   " may both match one document (oneOf is generated only "
                   "when its branches are disjoint: different types or "
                   "constants, or keys one requires that the other cannot "
                   "write)");
      }
    Json out = Json::array();
    for (size_t i = 0; i < shapes.size(); ++i)
      out.push_back(changed[i] ? shapes[i] : branches[i]);
    return out;
  }

  std::optional<Json> mergeAll(Json acc, const Json &members,
                               const std::string &path, int depth) const {
    if (!members.is_array() || members.empty())
      fail(path + "/allOf", "must be a non-empty array of schemas");
    for (const Json &m : members) {
      std::optional<Json> next = merge(acc, m, path + "/allOf", depth);
      if (!next)
        return std::nullopt;
      acc = std::move(*next);
    }
    return acc;
  }

  const std::string &requireString(const Json &v,
                                   const std::string &path) const {
    if (!v.is_string())
      fail(path, "must be a string");
    return v.get_ref<const std::string &>();
  }

  /// `s` with its constraints beside $ref / anyOf / oneOf / allOf moved into
  /// the branches, or unchanged.
  Json distributed(const Json &s, const std::string &path) {
    if (s.contains("allOf")) {
      Json rest = s;
      rest.erase("allOf");
      std::optional<Json> m = mergeAll(rest, s["allOf"], path, 0);
      if (!m)
        nothing(path + "/allOf", "no value validates against every schema");
      return *m;
    }
    for (const char *k : {"anyOf", "oneOf"})
      if (s.contains(k) && !constraintsBeside(s, {k}).empty()) {
        const Json &branches = s[k];
        if (!branches.is_array() || branches.empty())
          fail(path + "/" + k, "must be a non-empty array of schemas");
        Json rest = s;
        rest.erase(k);
        Json kept = Json::array();
        for (const Json &b : branches)
          if (std::optional<Json> m = merge(rest, b, path + "/" + k, 0))
            kept.push_back(std::move(*m));
        if (kept.empty())
          nothing(path, "no branch of '" + std::string(k) +
                            "' fits the constraints beside it");
        Json out = Json::object();
        for (auto it = s.begin(); it != s.end(); ++it)
          if (!constrains(it.key()))
            out[it.key()] = it.value(); // $defs stay reachable
        out[k] = std::move(kept);
        return out;
      }
    if (s.contains("$ref") && !constraintsBeside(s, {"$ref"}).empty()) {
      Json rest = refSiblingsIgnored_ ? Json::object() : s;
      rest.erase("$ref");
      std::optional<Json> m =
          merge(rest, resolve(requireString(s["$ref"], path + "/$ref"), path),
                path, 0);
      if (!m)
        nothing(path, "nothing validates against '$ref' and the constraints "
                      "beside it");
      return *m;
    }
    return s;
  }

  /// Whether a schema takes every value (true, or no constraint in it).
  bool anything(const Json &v) const {
    return v.is_boolean() ? v.get<bool>()
                          : v.is_object() && constraintsBeside(v, {}).empty();
  }

  /// Whether an object schema lets keys other than its listed ones be
  /// written: additionalProperties absent allows them unless the schema
  /// lists properties and the options ask for strict objects.
  bool allowsOtherKeys(const Json &s) const {
    if (!s.contains("additionalProperties"))
      return !(options_.strictObjects && s.contains("properties"));
    const Json &ap = s["additionalProperties"];
    return !(ap.is_boolean() && !ap.get<bool>());
  }

  /// "name": a string other than any of `names` and starting with none of
  /// `prefixes` (additional properties).
  Element otherKey(const std::vector<std::string> &names,
                   const std::vector<std::string> &prefixes = {}) {
    // A trie over the names' codepoints: at each node a key may end (unless
    // a name ends there), go on along a child, or leave the trie with any
    // other character and then anything. A prefix's last character is
    // never written.
    struct Node {
      std::map<uint32_t, size_t> next;
      bool name = false;
      bool prefix = false;
    };
    std::vector<Node> trie(1);
    std::vector<std::string> words = names;
    words.insert(words.end(), prefixes.begin(), prefixes.end());
    for (size_t w = 0; w < words.size(); ++w) {
      const std::string &n = words[w];
      size_t at = 0;
      for (size_t i = 0; i < n.size();) {
        // nlohmann checked the names are UTF-8; a stray byte stands alone.
        std::optional<uint32_t> next = utf8::nextCodePoint(n, i);
        const uint32_t cp = next ? *next : static_cast<unsigned char>(n[i++]);
        auto it = trie[at].next.find(cp);
        if (it == trie[at].next.end()) {
          trie.push_back({});
          it = trie[at].next.emplace(cp, trie.size() - 1).first;
        }
        at = it->second;
      }
      (w < names.size() ? trie[at].name : trie[at].prefix) = true;
    }
    // Within the trie keys are written without escapes, so that comparing
    // bytes with the names is comparing the decoded keys; once a key has
    // left it (it is no name), anything follows, escapes too. A short
    // escape leaves the trie where the character it stands for is no
    // child (\u never: it may spell one).
    const std::vector<CodepointRange> escaped = {
        {0, 0x1F}, {'"', '"'}, {'\\', '\\'}};
    const Element anyChars = g_.repeat(Grammar::ref(char_), 0, -1);
    const std::vector<std::pair<char, uint32_t>> shortEscapes = {
        {'"', '"'}, {'\\', '\\'}, {'/', '/'}, {'b', 8},
        {'f', 12},  {'n', 10},    {'r', 13},  {'t', 9}};
    std::vector<uint32_t> rules(trie.size());
    for (size_t i = 0; i < trie.size(); ++i)
      rules[i] = g_.freshRule("key");
    for (size_t i = 0; i < trie.size(); ++i) {
      if (trie[i].prefix)
        continue; // unreachable: its parent never writes its character
      if (!trie[i].name)
        g_.addAlternative(rules[i], {});
      std::vector<CodepointRange> taken = escaped;
      for (const auto &[cp, child] : trie[i].next) {
        if (cp <= 0x1F || cp == '"' || cp == '\\')
          continue; // never written in a key here
        taken.push_back({cp, cp});
        if (!trie[child].prefix)
          g_.addAlternative(rules[i], {g_.codepoints({{cp, cp}}, false),
                                       Grammar::ref(rules[child])});
      }
      g_.addAlternative(rules[i], {g_.codepoints(taken, true), anyChars});
      for (const auto &[c, cp] : shortEscapes)
        if (!trie[i].next.count(cp))
          g_.addAlternative(rules[i], {g_.byte('\\'), g_.byte(c), anyChars});
    }
    const uint32_t r = g_.freshRule("other-key");
    g_.addAlternative(r, {g_.byte('"'), Grammar::ref(rules[0]), g_.byte('"')});
    return Grammar::ref(r);
  }

  /// Whether `name` matches `pattern` (a search, as JSON Schema's); each
  /// pattern is compiled once per schema.
  bool patternMatches(const std::string &pattern, const std::string &name,
                      const std::string &path) {
    Matcher m(compiledPattern(pattern, path), {TokenVocabulary::kByteEos});
    const std::string escaped = Json(name).dump();
    for (size_t i = 1; i + 1 < escaped.size(); ++i)
      if (!m.accept(static_cast<unsigned char>(escaped[i])))
        return false;
    return m.canEnd();
  }

  /// `pattern` over a key's JSON text, compiled once per schema.
  std::shared_ptr<const CompiledGrammar>
  compiledPattern(const std::string &pattern, const std::string &path) {
    auto &compiled = patterns_[pattern];
    if (!compiled) {
      Grammar g;
      const uint32_t root = g.rule("root");
      g.root = root;
      g.addAlternative(root, {addRegex(g, pattern, CharEncoding::JsonString,
                                       origin_ + ": at " + path)});
      compiled = std::make_shared<CompiledGrammar>(
          std::move(g), TokenVocabulary::ofBytes(), 0);
    }
    return compiled;
  }

  /// Whether no key matches both patterns: each anchored at the start, no
  /// first byte in common, not both matching the empty key ("^/" and
  /// "^[^/]"). False when unsure.
  bool disjointPatterns(const std::string &a, const std::string &b,
                        const std::string &path) {
    auto start = [&](const std::string &pattern) -> const Pda::State & {
      auto [it, fresh] = patternStarts_.try_emplace(pattern);
      if (fresh) {
        Program program(compiledPattern(pattern, path)->grammar());
        Pda pda(program);
        it->second = pda.state(pda.start());
      }
      return it->second;
    };
    const Pda::State &x = start(a), &y = start(b);
    if (x.accepting && y.accepting)
      return false;
    for (unsigned w = 0; w < 4; ++w)
      if (x.bytes[w] & y.bytes[w])
        return false;
    return true;
  }

  struct Prop {
    std::string name;
    Element kv; // "name": value
    bool required;
  };

  /// ", " (a comma, then whitespace) into `q` before a member that is not
  /// an object's first.
  void separator(Sequence &q, bool needed) {
    if (needed) {
      q.push_back(g_.byte(','));
      q.push_back(Grammar::ref(ws_));
    }
  }

  /// The position of `name` in `props` (props.size() when absent).
  static size_t indexOf(const std::vector<Prop> &props,
                        const std::string &name) {
    return static_cast<size_t>(
        std::find_if(props.begin(), props.end(),
                     [&](const Prop &p) { return p.name == name; }) -
        props.begin());
  }

  Element object(const Json &schema, const std::string &path) {
    // patternProperties: a listed property whose name matches a pattern
    // takes that pattern's schema too. Other members are written only when
    // no listed name matches a pattern: a key matching any pattern, its
    // value valid under every pattern's schema (a key may match several).
    Json s = schema;
    std::vector<std::string> keyPatterns, otherPrefixes;
    std::vector<Json> keyValues; // by pattern
    bool matchAllKeys = false;
    // Patterns whose schemas take anything say nothing where other keys
    // take anything too.
    if (s.contains("patternProperties") && s["patternProperties"].is_object() &&
        allowsOtherKeys(s) &&
        anything(s.value("additionalProperties", Json(true))) &&
        std::all_of(s["patternProperties"].begin(),
                    s["patternProperties"].end(),
                    [&](const Json &v) { return anything(v); }))
      s.erase("patternProperties");
    if (s.contains("patternProperties")) {
      const Json &pp = s["patternProperties"];
      if (!pp.is_object())
        fail(path + "/patternProperties", "must be an object of schemas");
      std::set<std::string> matchListed; // patterns a listed name matches
      if (s.contains("properties") && s["properties"].is_object())
        for (auto it = s["properties"].begin(); it != s["properties"].end();
             ++it)
          for (auto p = pp.begin(); p != pp.end(); ++p)
            if (patternMatches(p.key(), it.key(),
                               path + "/patternProperties")) {
              matchListed.insert(p.key());
              std::optional<Json> m = merge(it.value(), p.value(), path, 0);
              it.value() = m ? *m : Json(false);
            }
      // A key that brings others is never written by a pattern (it would
      // come without them).
      for (const auto &[a, needs] : dependencies(s, path))
        for (auto p = pp.begin(); p != pp.end() && !needs.empty(); ++p)
          if (patternMatches(p.key(), a, path + "/patternProperties"))
            matchListed.insert(p.key());
      // Patterns every key matches (".*") leave the listed names to their
      // properties and take any other key.
      matchAllKeys = true;
      for (auto p = pp.begin(); p != pp.end(); ++p)
        matchAllKeys = matchAllKeys && kMatchAll.count(p.key());
      // Each pattern no listed name matches writes members: its value
      // valid under its schema and that of every pattern a key may match
      // beside it. A pattern whose schemas do not merge writes none.
      for (auto p = pp.begin(); p != pp.end(); ++p) {
        if (!matchAllKeys && matchListed.count(p.key()))
          continue; // its keys would have to differ from the listed names
        std::optional<Json> all = p.value();
        try {
          for (auto q = pp.begin(); q != pp.end() && all; ++q)
            if (q != p && (matchAllKeys ||
                           !disjointPatterns(p.key(), q.key(),
                                             path + "/patternProperties")))
              all = merge(*all, q.value(), path + "/patternProperties", 0);
        } catch (const Error &) {
          all.reset();
        }
        if (all) {
          keyPatterns.push_back(p.key());
          keyValues.push_back(std::move(*all));
        }
        if (matchAllKeys)
          break; // every key matches every pattern: one merged schema
      }
      // Other keys stay where every pattern is a literal prefix ("^x-"):
      // a key is then other exactly when it starts with none of them.
      if (allowsOtherKeys(s) && !matchAllKeys)
        for (auto p = pp.begin(); p != pp.end(); ++p) {
          std::optional<std::string> prefix = literalPrefix(p.key());
          if (!prefix || prefix->empty()) {
            otherPrefixes.clear();
            break;
          }
          otherPrefixes.push_back(*prefix);
        }
      // A required key that is not listed takes additionalProperties'
      // schema alone: never one a pattern may match.
      if (s.contains("required") && s["required"].is_array())
        for (const Json &r : s["required"])
          for (const std::string &prefix : otherPrefixes)
            if (r.is_string() && r.get<std::string>().starts_with(prefix) &&
                !(s.contains("properties") && s["properties"].is_object() &&
                  s["properties"].contains(r.get<std::string>())))
              otherPrefixes.clear();
      s.erase("patternProperties");
      if (otherPrefixes.empty())
        s["additionalProperties"] = false; // only the pattern's members
    }
    std::vector<Prop> props;
    std::set<std::string> required;
    std::vector<std::string> requiredInOrder;
    if (s.contains("required")) {
      if (!s["required"].is_array())
        fail(path + "/required", "must be an array of property names");
      for (const Json &r : s["required"]) {
        if (!r.is_string())
          fail(path + "/required", "must be an array of property names");
        if (required.insert(r.get<std::string>()).second)
          requiredInOrder.push_back(r.get<std::string>());
      }
    }
    std::vector<std::string> names;
    const bool hasProperties = s.contains("properties");
    if (hasProperties) {
      const Json &ps = s["properties"];
      if (!ps.is_object())
        fail(path + "/properties", "must be an object of schemas");
      for (auto it = ps.begin(); it != ps.end(); ++it) {
        const std::string &name = it.key();
        const std::string at = path + "/properties/" + pointerToken(name);
        names.push_back(name);
        const bool req = required.count(name) != 0;
        if (it.value().is_boolean() && !it.value().get<bool>()) {
          if (req)
            nothing(at, "a required property whose schema is false");
          continue; // may never appear
        }
        try {
          props.push_back({name, member(name, it.value(), at, false), req});
        } catch (const Unsatisfiable &) {
          if (req)
            throw;
          // An optional property no value fits is never written.
        }
      }
    }
    // A required key that is not listed is an other key, written last with
    // additionalProperties' schema.
    for (const std::string &r : requiredInOrder) {
      if (std::find(names.begin(), names.end(), r) != names.end())
        continue;
      if (!allowsOtherKeys(s))
        fail(path + "/required", "the required property '" + r +
                                     "' may not be written: it is not in "
                                     "'properties' and other keys are not "
                                     "allowed");
      const Json &ap = s.value("additionalProperties", Json(true));
      const std::string at = path + "/required";
      names.push_back(r);
      props.push_back({r, member(r, ap, at, ap.is_boolean()), true});
    }
    // A key that brings others is never written as an other key.
    for (const auto &[a, needs] : dependencies(s, path))
      if (!needs.empty() &&
          std::find(names.begin(), names.end(), a) == names.end())
        names.push_back(a);
    std::optional<Element> extra;
    const Json *ap = s.contains("additionalProperties")
                         ? &s["additionalProperties"]
                         : nullptr;
    if (allowsOtherKeys(s)) {
      const Element v = ap && !ap->is_boolean()
                            ? value(*ap, path + "/additionalProperties")
                            : Grammar::ref(anyValue_);
      const uint32_t kv = g_.freshRule(ruleName(path) + "-extra-kv");
      g_.addAlternative(kv, {names.empty() && otherPrefixes.empty()
                                 ? Grammar::ref(string_)
                                 : otherKey(names, otherPrefixes),
                             Grammar::ref(ws_), g_.byte(':'), Grammar::ref(ws_),
                             v, Grammar::ref(ws_)});
      extra = Grammar::ref(kv);
    }
    if (!keyPatterns.empty()) {
      const std::string at = path + "/patternProperties";
      const uint32_t kv = g_.freshRule(ruleName(path) + "-pattern-kv");
      for (size_t i = 0; i < keyPatterns.size(); ++i) {
        const std::string &p = keyPatterns[i];
        Element key = names.empty() ? Grammar::ref(string_) : otherKey(names);
        if (!matchAllKeys) {
          const uint32_t k = g_.freshRule(ruleName(at) + "-key");
          g_.addAlternative(
              k, {g_.byte('"'),
                  addRegex(g_, p, CharEncoding::JsonString,
                           origin_ + ": at " + at + "/" + pointerToken(p)),
                  g_.byte('"')});
          key = Grammar::ref(k);
        }
        g_.addAlternative(kv, {key, Grammar::ref(ws_), g_.byte(':'),
                               Grammar::ref(ws_),
                               value(keyValues[i], at + "/" + pointerToken(p)),
                               Grammar::ref(ws_)});
      }
      if (extra) // other keys beside the patterns' (literal prefixes)
        g_.addAlternative(kv, {*extra});
      extra = Grammar::ref(kv);
    }
    const int64_t minP = count(s, "minProperties", path, 0);
    const int64_t maxP = count(s, "maxProperties", path, -1);
    if (maxP >= 0 && maxP < minP)
      nothing(path, "maxProperties is below minProperties: nothing validates");
    const std::string base = ruleName(path);
    // Counts: members written, capped at maxProperties (never more than
    // the distinct keys, so a key written twice is safe); minProperties
    // only where the required keys already make it.
    size_t requiredCount = 0;
    for (const Prop &p : props)
      requiredCount += p.required ? 1 : 0;
    auto countable = [&](size_t tracked) {
      return minP <= static_cast<int64_t>(requiredCount) &&
             (maxP < 0 || maxP >= static_cast<int64_t>(requiredCount)) &&
             (int64_t(1) << tracked) * (std::max<int64_t>(maxP, 0) + 1) <=
                 kMaxCountedRules;
    };
    // Strict objects keep the schema's order, as OpenAI's strict mode
    // promises (a "reasoning" property before the "answer").
    const bool anyOrdered = !options_.strictObjects && props.size() >= 2 &&
                            props.size() <= kAnyOrderProperties &&
                            countable(props.size());
    // Dependencies: listed keys that bring others, checked where the object
    // may end (any order) or as keys are passed by (fixed order, tracking
    // up to 16 properties; beyond, a key that brings others is left out).
    // A key 'properties' does not list is never written.
    std::vector<std::pair<uint32_t, uint32_t>> masks; // (key, keys it needs)
    Dependencies fixedDeps;
    auto at = [&](const std::string &n) { return indexOf(props, n); };
    Dependencies deps;
    std::set<std::string> involved;
    for (auto &[a, needs] : dependencies(s, path))
      if (at(a) < props.size() && !needs.empty()) {
        const bool listed =
            std::all_of(needs.begin(), needs.end(),
                        [&](auto &n) { return at(n) < props.size(); });
        if (!listed && props[at(a)].required)
          fail(path + "/dependencies", "the required property '" + a +
                                           "' needs keys 'properties' does "
                                           "not list (not supported)");
        deps.emplace_back(a, listed ? needs : std::vector<std::string>{});
        involved.insert(a);
        involved.insert(needs.begin(), needs.end());
      }
    const bool track =
        anyOrdered || (involved.size() <= 16 && props.size() <= 64);
    for (const auto &[a, needs] : deps) {
      if (needs.empty() || (!track && !props[at(a)].required)) {
        // Unlisted needs, or too many to track: never written.
        props.erase(props.begin() + static_cast<std::ptrdiff_t>(at(a)));
      } else if (!track) {
        for (const std::string &n : needs) // always written: so are these
          props[at(n)].required = true;
      }
    }
    for (const auto &[a, needs] : deps) {
      if (at(a) == props.size() || !track)
        continue;
      if (!anyOrdered) {
        fixedDeps.emplace_back(a, needs);
        continue;
      }
      uint32_t need = 0;
      for (const std::string &n : needs)
        need |= 1u << at(n);
      masks.emplace_back(1u << at(a), need);
    }
    if (anyOrdered)
      return anyOrder(props, extra, masks, maxP, base, path);
    // Larger objects: still any order, the required keys
    // and those in dependencies tracked (each once, all required ones, a
    // key's needs), the others free; one may then be written twice (JSON
    // parsers keep the last, and each value fits its schema). Every key's
    // masks then stay the same after each member (no position in a chain
    // of 100 properties).
    std::set<std::string> inDeps;
    for (const auto &[a, needs] : fixedDeps) {
      inDeps.insert(a);
      inDeps.insert(needs.begin(), needs.end());
    }
    std::vector<Prop> tracked;
    for (const Prop &p : props)
      if (p.required || inDeps.count(p.name))
        tracked.push_back(p);
    // More required keys than sets can track: they come in the schema's
    // order or in `required`'s, the others anywhere between.
    const bool chained = tracked.size() > kAnyOrderProperties &&
                         fixedDeps.empty() && maxP < 0 &&
                         minP <= static_cast<int64_t>(requiredCount);
    if (!options_.strictObjects && props.size() > kAnyOrderProperties &&
        (chained || (tracked.size() <= kAnyOrderProperties &&
                     countable(tracked.size())))) {
      const uint32_t free = g_.freshRule(base + "-free");
      for (const Prop &p : props)
        if (!p.required && !inDeps.count(p.name))
          g_.addAlternative(free, {p.kv});
      if (extra)
        g_.addAlternative(free, {*extra});
      const std::optional<Element> others =
          g_.rules[free].alternatives.empty()
              ? std::nullopt
              : std::optional<Element>(Grammar::ref(free));
      if (chained) {
        std::vector<Prop> given;
        for (const std::string &n : requiredInOrder)
          if (indexOf(tracked, n) < tracked.size())
            given.push_back(tracked[indexOf(tracked, n)]);
        return requiredChains({tracked, given}, others, base);
      }
      std::vector<std::pair<uint32_t, uint32_t>> needMasks;
      for (const auto &[a, needs] : fixedDeps) {
        uint32_t need = 0;
        for (const std::string &n : needs)
          need |= 1u << indexOf(tracked, n);
        needMasks.emplace_back(1u << indexOf(tracked, a), need);
      }
      return anyOrder(tracked, others, needMasks, maxP, base, path);
    }
    // Larger objects: the schema's order, or the required properties first
    // (in `required`'s order) and then the others (the order LLGuidance
    // writes, which documents written for it follow).
    std::vector<Prop> requiredFirst;
    for (bool req : {true, false})
      for (const Prop &p : props)
        if (p.required == req)
          requiredFirst.push_back(p);
    const uint32_t r = g_.freshRule(base + "-object");
    bool same = true;
    for (size_t i = 0; i < props.size(); ++i)
      same = same && requiredFirst[i].name == props[i].name;
    for (const std::vector<Prop> *order : {&props, &requiredFirst}) {
      if (order == &requiredFirst && (same || options_.strictObjects))
        break;
      g_.addAlternative(
          r, {g_.byte('{'), Grammar::ref(ws_),
              members(*order, extra, fixedDeps, minP, maxP, base, path),
              g_.byte('}')});
    }
    return Grammar::ref(r);
  }

  /// The members of an object in the order of `props` (optional ones may
  /// be left out; other keys anywhere), their count within minP..maxP.
  using Dependencies =
      std::vector<std::pair<std::string, std::vector<std::string>>>;

  Element members(const std::vector<Prop> &props,
                  const std::optional<Element> &extra, const Dependencies &deps,
                  int64_t minP, int64_t maxP, const std::string &base,
                  const std::string &path) {
    std::vector<int64_t> requiredFrom(props.size() + 1, 0);
    for (size_t i = props.size(); i-- > 0;)
      requiredFrom[i] = requiredFrom[i + 1] + (props[i].required ? 1 : 0);
    // Dependencies as (key, needs) positions in this order; `m` below has
    // bit i set when property i was written.
    std::vector<std::pair<size_t, std::vector<size_t>>> at;
    auto index = [&](const std::string &n) { return indexOf(props, n); };
    uint64_t tracked = 0; // the properties whose presence matters
    for (const auto &[a, needs] : deps) {
      at.emplace_back(index(a), std::vector<size_t>{});
      tracked |= uint64_t(1) << at.back().first;
      for (const std::string &n : needs) {
        at.back().second.push_back(index(n));
        tracked |= uint64_t(1) << index(n);
      }
    }
    auto viable = [&](size_t i, int64_t c, uint64_t m) {
      if (maxP >= 0 && c + requiredFrom[i] > maxP)
        return false;
      for (const auto &[a, needs] : at)
        if (m >> a & 1)
          for (size_t b : needs)
            if (b < i && !(m >> b & 1))
              return false; // a needed key was passed by
      return extra || c + static_cast<int64_t>(props.size() - i) >= minP;
    };
    // rest(i, c): the members from property i on, c written so far (no
    // comma before the first). minProperties / maxProperties bound c; a
    // state that cannot reach the bounds is never referenced.
    // Counts past the bounds behave alike (1 keeps "written" apart).
    const int64_t cap = std::max<int64_t>(maxP >= 0 ? maxP : minP, 1);
    std::map<std::tuple<size_t, int64_t, uint64_t>, uint32_t> rest;
    std::function<Element(size_t, int64_t, uint64_t)> restFrom =
        [&](size_t i, int64_t c, uint64_t m) -> Element {
      c = std::min(c, cap);
      auto key = std::make_tuple(i, c, m);
      if (auto it = rest.find(key); it != rest.end())
        return Grammar::ref(it->second);
      const uint32_t r = g_.freshRule(base + "-rest");
      rest[key] = r;
      auto sep = [&](Sequence &q) { separator(q, c > 0); };
      const bool room = maxP < 0 || c < maxP;
      if (i == props.size()) {
        if (extra && room) {
          Sequence q;
          sep(q);
          q.push_back(*extra);
          q.push_back(restFrom(i, c + 1, m));
          g_.addAlternative(r, std::move(q));
        }
        if (c >= minP)
          g_.addAlternative(r, {});
        return Grammar::ref(r);
      }
      const uint64_t written = m | (tracked & (uint64_t(1) << i));
      if (room && viable(i + 1, c + 1, written)) {
        Sequence q;
        sep(q);
        q.push_back(props[i].kv);
        q.push_back(restFrom(i + 1, c + 1, written));
        g_.addAlternative(r, std::move(q));
      }
      // Other keys may come before the next listed one (they never equal
      // a listed name, so each member has one reading).
      if (extra && room && viable(i, c + 1, m)) {
        Sequence q;
        sep(q);
        q.push_back(*extra);
        q.push_back(restFrom(i, c + 1, m));
        g_.addAlternative(r, std::move(q));
      }
      if (!props[i].required && viable(i + 1, c, m))
        g_.addAlternative(r, {restFrom(i + 1, c, m)});
      return Grammar::ref(r);
    };
    if (!viable(0, 0, 0))
      nothing(path, "no object with the required properties fits "
                    "minProperties / maxProperties");
    return restFrom(0, 0, 0);
  }

  /// Objects with at most this many listed properties take them in any
  /// order, each at most once (one rule per set of members written: 2^n
  /// rules); larger ones track this many required ones.
  static constexpr size_t kAnyOrderProperties = 8;
  /// At most this many (written set, count) rules for maxProperties.
  static constexpr int64_t kMaxCountedRules = 4096;

  /// The members of an object in any order: each of `props` at most once,
  /// every required one, `extra` (other keys, or all that are not
  /// tracked) anywhere.
  Element anyOrder(const std::vector<Prop> &props,
                   const std::optional<Element> &extra,
                   const std::vector<std::pair<uint32_t, uint32_t>> &needs,
                   int64_t maxP, const std::string &base,
                   const std::string &path) {
    uint32_t requiredMask = 0;
    for (size_t p = 0; p < props.size(); ++p)
      if (props[p].required)
        requiredMask |= 1u << p;
    // c: the members written so far, up to maxP (without one, 0 or 1:
    // whether a comma comes first). A state is viable when the keys it
    // still needs (required ones, those its keys bring) fit in the count.
    auto viable = [&](uint32_t written, int64_t c) {
      if (maxP < 0)
        return true;
      uint32_t needed = requiredMask, before;
      do {
        before = needed;
        for (const auto &[key, keys] : needs)
          if ((written | needed) & key)
            needed |= keys;
      } while (needed != before);
      return std::popcount(needed & ~written) <= maxP - c;
    };
    std::map<std::pair<uint32_t, int64_t>, uint32_t> rules;
    std::function<Element(uint32_t, int64_t)> rest = [&](uint32_t written,
                                                         int64_t c) -> Element {
      if (auto it = rules.find({written, c}); it != rules.end())
        return Grammar::ref(it->second);
      const uint32_t r = g_.freshRule(base + "-members");
      rules[{written, c}] = r;
      auto member = [&](Element kv, uint32_t next) {
        if (maxP >= 0 && (c >= maxP || !viable(next, c + 1)))
          return;
        Sequence q;
        separator(q, c > 0);
        q.push_back(kv);
        q.push_back(rest(next, maxP < 0 ? 1 : c + 1));
        g_.addAlternative(r, std::move(q));
      };
      for (size_t p = 0; p < props.size(); ++p)
        if (!(written & (1u << p)))
          member(props[p].kv, written | (1u << p));
      if (extra)
        member(*extra, written);
      bool complete = (written & requiredMask) == requiredMask;
      for (const auto &[key, keys] : needs)
        complete = complete && (!(written & key) || (written & keys) == keys);
      if (complete)
        g_.addAlternative(r, {});
      return Grammar::ref(r);
    };
    if (!viable(0, 0))
      nothing(path, "the keys the object needs exceed maxProperties");
    const uint32_t r = g_.freshRule(base + "-object");
    g_.addAlternative(
        r, {g_.byte('{'), Grammar::ref(ws_), rest(0, 0), g_.byte('}')});
    return Grammar::ref(r);
  }

  /// An object whose required keys come in one of `orders`, `free`
  /// members (the others, if any) anywhere between them.
  Element requiredChains(const std::vector<std::vector<Prop>> &orders,
                         const std::optional<Element> &free,
                         const std::string &base) {
    const uint32_t r = g_.freshRule(base + "-object");
    std::set<std::vector<std::string>> seen;
    for (const std::vector<Prop> &order : orders) {
      std::vector<std::string> names;
      for (const Prop &p : order)
        names.push_back(p.name);
      if (!seen.insert(names).second)
        continue;
      // chain[i][c]: from the i-th required key on, c: a comma first
      // (always past the first).
      std::vector<std::array<uint32_t, 2>> chain(order.size() + 1);
      for (size_t i = 0; i < chain.size(); ++i)
        chain[i] = {i == 0 ? g_.freshRule(base + "-chain") : 0,
                    g_.freshRule(base + "-chain")};
      for (size_t i = 0; i <= order.size(); ++i)
        for (int c = i == 0 ? 0 : 1; c < 2; ++c) {
          if (free) {
            Sequence q;
            separator(q, c);
            q.push_back(*free);
            q.push_back(Grammar::ref(chain[i][1]));
            g_.addAlternative(chain[i][c], std::move(q));
          }
          if (i == order.size()) {
            g_.addAlternative(chain[i][c], {});
            continue;
          }
          Sequence k;
          separator(k, c);
          k.push_back(order[i].kv);
          k.push_back(Grammar::ref(chain[i + 1][1]));
          g_.addAlternative(chain[i][c], std::move(k));
        }
      g_.addAlternative(r, {g_.byte('{'), Grammar::ref(ws_),
                            Grammar::ref(chain[0][0]), g_.byte('}')});
    }
    return Grammar::ref(r);
  }

  /// `dependencies` (draft 4 to 7: a list of names, or a schema of
  /// `required` only) and `dependentRequired`: each key with the keys it
  /// brings.
  std::vector<std::pair<std::string, std::vector<std::string>>>
  dependencies(const Json &s, const std::string &path) const {
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    for (const char *k : {"dependencies", "dependentRequired"}) {
      if (!s.contains(k))
        continue;
      const std::string at = path + "/" + k;
      if (!s[k].is_object())
        fail(at, "must be an object");
      for (auto it = s[k].begin(); it != s[k].end(); ++it) {
        Json names = it.value();
        if (names.is_object()) {
          if (!constraintsBeside(names, {"required"}).empty())
            fail(at + "/" + pointerToken(it.key()),
                 "a schema dependency is supported with 'required' only");
          names = names.value("required", Json::array());
        }
        std::vector<std::string> needs;
        if (!names.is_array())
          fail(at + "/" + pointerToken(it.key()),
               "must be a list of property names");
        for (const Json &n : names) {
          if (!n.is_string())
            fail(at + "/" + pointerToken(it.key()),
                 "must be a list of property names");
          needs.push_back(n.get<std::string>());
        }
        out.emplace_back(it.key(), std::move(needs));
      }
    }
    return out;
  }

  /// `"name": value` (then whitespace); anyValue: any value, whatever
  /// `schema` says.
  Element member(const std::string &name, const Json &schema,
                 const std::string &at, bool anyValue) {
    // The quoted name is a rule of its own: a mask's key ends at its
    // closing quote (shared by every object with that name), not at the
    // end of the member's value.
    const uint32_t key = g_.freshRule(ruleName(at) + "-key");
    Sequence quoted;
    appendLit(quoted, Json(name).dump());
    g_.addAlternative(key, std::move(quoted));
    const uint32_t kv = g_.freshRule(ruleName(at) + "-kv");
    Sequence seq;
    seq.push_back(Grammar::ref(key));
    seq.push_back(Grammar::ref(ws_));
    seq.push_back(g_.byte(':'));
    seq.push_back(Grammar::ref(ws_));
    seq.push_back(anyValue ? Grammar::ref(anyValue_) : value(schema, at));
    seq.push_back(Grammar::ref(ws_));
    g_.addAlternative(kv, std::move(seq));
    return Grammar::ref(kv);
  }

  int64_t count(const Json &s, const char *key, const std::string &path,
                int64_t absent) const {
    if (!s.contains(key))
      return absent;
    const Json &v = s[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      fail(path + "/" + key, "must be a non-negative integer");
    if (v.get<int64_t>() > 100000)
      fail(path + "/" + key, "above 100000 is not supported");
    return v.get<int64_t>();
  }

  Element array(const Json &schema, const std::string &path) {
    // Draft 4 to 7's tuples: `items` a list, `additionalItems` the rest
    // (ignored beside a single `items` schema, as the specification says).
    Json s = schema;
    if (s.contains("items") && s["items"].is_array()) {
      s["prefixItems"] = s["items"];
      s.erase("items");
      if (s.contains("additionalItems"))
        s["items"] = s["additionalItems"];
    }
    s.erase("additionalItems");
    const int64_t min = count(s, "minItems", path, 0);
    const int64_t max = count(s, "maxItems", path, -1);
    if (max >= 0 && max < min)
      nothing(path, "maxItems is below minItems: nothing validates");
    std::vector<Element> prefix;
    if (s.contains("prefixItems")) {
      const Json &p = s["prefixItems"];
      if (!p.is_array())
        fail(path + "/prefixItems", "must be an array of schemas");
      for (size_t i = 0; i < p.size(); ++i)
        prefix.push_back(
            item(value(p[i], path + "/prefixItems/" + std::to_string(i))));
    }
    std::optional<Element> items;
    if (!s.contains("items"))
      items = item(Grammar::ref(anyValue_));
    else if (!(s["items"].is_boolean() && !s["items"].get<bool>()))
      try {
        items = item(value(s["items"], path + "/items"));
      } catch (const Unsatisfiable &) {
        // No item fits: the array ends after its prefix.
      }
    const int64_t k = static_cast<int64_t>(prefix.size());
    if (!items && min > k)
      nothing(path, "minItems " + std::to_string(min) + " with " +
                        std::to_string(k) +
                        " prefixItems and items false: nothing validates");
    const std::string base = ruleName(path);
    const Element comma = [&] {
      const uint32_t c = g_.freshRule("comma");
      g_.addAlternative(c, {g_.byte(','), Grammar::ref(ws_)});
      return Grammar::ref(c);
    }();
    // from(i): the items from index i on (i already written).
    std::vector<uint32_t> from(static_cast<size_t>(k) + 1);
    for (int64_t i = k; i >= 0; --i) {
      const uint32_t r = g_.freshRule(base + "-items");
      from[static_cast<size_t>(i)] = r;
      const bool canStop = i >= min;
      const bool full = max >= 0 && i >= max;
      if (i < k) {
        if (!full) {
          Sequence q;
          if (i > 0)
            q.push_back(comma);
          q.push_back(prefix[static_cast<size_t>(i)]);
          q.push_back(Grammar::ref(from[static_cast<size_t>(i) + 1]));
          g_.addAlternative(r, std::move(q));
        }
        if (canStop || full)
          g_.addAlternative(r, {});
        continue;
      }
      // Past the prefix: `items` repeated for the counts still allowed.
      const int64_t need = std::max<int64_t>(min - i, 0);
      const int64_t room = max < 0 ? -1 : max - i;
      if (!items || room == 0) {
        g_.addAlternative(r, {});
        continue;
      }
      const uint32_t one = g_.freshRule(base + "-item");
      Sequence q;
      if (i > 0)
        q.push_back(comma);
      q.push_back(*items);
      g_.addAlternative(one, std::move(q));
      const uint32_t more = g_.freshRule(base + "-more");
      g_.addAlternative(more, {comma, *items});
      // one more^(need-1 .. room-1), or nothing when none is needed.
      g_.addAlternative(
          r, {Grammar::ref(one),
              g_.repeat(Grammar::ref(more), std::max<int64_t>(need - 1, 0),
                        room < 0 ? -1 : room - 1)});
      if (need == 0)
        g_.addAlternative(r, {});
    }
    const uint32_t r = g_.freshRule(base + "-array");
    g_.addAlternative(r, {g_.byte('['), Grammar::ref(ws_),
                          Grammar::ref(from[0]), g_.byte(']')});
    return Grammar::ref(r);
  }

  /// An array item: the value then whitespace.
  Element item(Element v) {
    const uint32_t r = g_.freshRule("item");
    g_.addAlternative(r, {v, Grammar::ref(ws_)});
    return Grammar::ref(r);
  }

  /// minLength / maxLength beside a pattern or format, where they can be
  /// folded in: a format whose strings all have lengths within them, or a
  /// pattern of one repeated character class ("^[a-z0-9_-]+$") whose
  /// repetition takes the bounds. Otherwise they stay (and are refused).
  void lengthsIntoPattern(Json &s, const std::string &path) {
    if (!s.contains("minLength") && !s.contains("maxLength"))
      return;
    const int64_t min = count(s, "minLength", path, 0);
    const int64_t max = count(s, "maxLength", path, -1);
    // Characters in the formats' strings.
    static const std::map<std::string, std::pair<int64_t, int64_t>> kLengths = {
        {"date", {10, 10}},    {"time", {9, 21}}, {"date-time", {20, 32}},
        {"uuid", {36, 36}},    {"ipv4", {7, 15}}, {"ipv6", {15, 39}},
        {"hostname", {1, 247}}};
    if (s.contains("format") && s["format"].is_string()) {
      auto it = kLengths.find(s["format"].get<std::string>());
      if (it != kLengths.end() && it->second.first >= min &&
          (max < 0 || it->second.second <= max)) {
        s.erase("minLength");
        s.erase("maxLength");
      }
      return;
    }
    if (!s.contains("pattern") || !s["pattern"].is_string())
      return;
    // ^ATOM QUANT$ with ATOM a class or a class escape, QUANT + * {m,} {m,n}.
    const std::string p = s["pattern"].get<std::string>();
    if (p.size() < 4 || p.front() != '^' || p.back() != '$')
      return;
    size_t end = 1;
    if (p[1] == '[') {
      end = 2;
      if (end < p.size() && p[end] == '^')
        ++end;
      if (end < p.size() && p[end] == ']')
        ++end;
      while (end < p.size() && p[end] != ']')
        end += p[end] == '\\' ? 2 : 1;
      if (end >= p.size())
        return;
      ++end;
    } else if (p[1] == '\\' && p.size() > 3 &&
               std::string("wdsWDS").find(p[2]) != std::string::npos) {
      end = 3;
    } else if (p[1] == '.') {
      end = 2;
    } else {
      return;
    }
    const std::string atom = p.substr(1, end - 1);
    const std::string quant = p.substr(end, p.size() - 1 - end);
    int64_t qmin = 0, qmax = -1;
    if (quant == "+")
      qmin = 1;
    else if (quant != "*") {
      size_t comma = quant.find(',');
      if (quant.size() < 3 || quant.front() != '{' || quant.back() != '}' ||
          comma == std::string::npos ||
          quant.find_first_not_of("0123456789,", 1) != quant.size() - 1)
        return;
      const std::string lo = quant.substr(1, comma - 1),
                        hi = quant.substr(comma + 1, quant.size() - comma - 2);
      if (lo.empty() || lo.size() > 6 || hi.size() > 6)
        return;
      qmin = std::stoll(lo);
      qmax = hi.empty() ? -1 : std::stoll(hi);
    }
    const int64_t lo = std::max(qmin, min);
    const int64_t hi = max < 0 ? qmax : qmax < 0 ? max : std::min(qmax, max);
    if (hi >= 0 && hi < lo)
      nothing(path, "no string of the pattern's lengths fits minLength / "
                    "maxLength");
    s["pattern"] = "^" + atom + "{" + std::to_string(lo) + "," +
                   (hi < 0 ? "" : std::to_string(hi)) + "}$";
    s.erase("minLength");
    s.erase("maxLength");
  }

  Element string(const Json &schema, const std::string &path) {
    Json s = schema;
    if (s.contains("format") && s["format"].is_string() &&
        !kStandardFormats.count(s["format"].get<std::string>()))
      s.erase("format"); // a vendor's format
    if (s.contains("pattern") && s.contains("format"))
      fail(path, "'pattern' together with 'format' is not supported");
    lengthsIntoPattern(s, path);
    const bool lengths = s.contains("minLength") || s.contains("maxLength");
    if (lengths && (s.contains("pattern") || s.contains("format")))
      fail(path, std::string("'minLength'/'maxLength' together with '") +
                     (s.contains("pattern") ? "pattern" : "format") +
                     "' is not supported");
    std::string regex;
    if (s.contains("pattern")) {
      if (!s["pattern"].is_string())
        fail(path + "/pattern", "must be a string");
      regex = s["pattern"].get<std::string>();
    } else if (s.contains("format")) {
      if (!s["format"].is_string())
        fail(path + "/format", "must be a string");
      const std::string f = s["format"].get<std::string>();
      auto it = kFormats.find(f);
      if (it == kFormats.end()) {
        std::string known;
        for (const auto &[name, _] : kFormats)
          known += (known.empty() ? "" : ", ") + name;
        fail(path + "/format",
             "the format '" + f + "' is not supported (known: " + known + ")");
      }
      regex = it->second;
    }
    if (!regex.empty() || s.contains("pattern")) {
      const uint32_t r = g_.freshRule(ruleName(path) + "-pattern");
      g_.addAlternative(
          r, {g_.byte('"'),
              addRegex(g_, regex, CharEncoding::JsonString,
                       origin_ + ": at " + path +
                           (s.contains("pattern") ? "/pattern" : "/format")),
              g_.byte('"')});
      return Grammar::ref(r);
    }
    if (!lengths)
      return Grammar::ref(string_);
    const int64_t min = count(s, "minLength", path, 0);
    const int64_t max = count(s, "maxLength", path, -1);
    if (max >= 0 && max < min)
      nothing(path, "maxLength is below minLength: nothing validates");
    const uint32_t r = g_.freshRule(ruleName(path) + "-string");
    g_.addAlternative(
        r,
        {g_.byte('"'), g_.repeat(Grammar::ref(char_), min, max), g_.byte('"')});
    return Grammar::ref(r);
  }

  /// A number, or an integer within the schema's bounds. A number's bounds
  /// must be whole (0, 100, -90, ...): the numbers written are those
  /// without an exponent that lie in range (a subset of what validates:
  /// 5.0 for maximum 5 is never written, nor 1e2 for minimum 0).
  Element number(const Json &schema, bool integer, const std::string &path) {
    // Draft 4's boolean exclusiveMinimum / exclusiveMaximum modify the
    // bound beside them.
    Json s = schema;
    for (const auto &[flag, bound] : {std::pair{"exclusiveMinimum", "minimum"},
                                      {"exclusiveMaximum", "maximum"}})
      if (s.contains(flag) && s[flag].is_boolean()) {
        if (s[flag].get<bool>() && s.contains(bound)) {
          s[flag] = s[bound];
          s.erase(bound);
        } else {
          s.erase(flag);
        }
      }
    // multipleOf: 0.1, 0.01, ... keep a number to that many fraction
    // digits; a whole k up to 100 makes an integer (k = 1) or, without
    // bounds, the multiples of k; other steps are an error.
    int fractionDigits = 16;
    int64_t step = 1;
    if (s.contains("multipleOf")) {
      const Json &m = s["multipleOf"];
      if (!m.is_number() || !(m.get<double>() > 0))
        fail(path + "/multipleOf", "must be a number above 0");
      const double k = m.get<double>();
      int tenth = 0;
      for (int d = 1; d <= 8 && !tenth; ++d)
        if (std::fabs(k * std::pow(10.0, d) - 1) < 1e-9)
          tenth = d;
      if (std::floor(k) == k && k <= 100) {
        integer = true;
        step = static_cast<int64_t>(k);
      } else if (tenth) {
        fractionDigits = integer ? 0 : tenth;
      } else {
        fail(path + "/multipleOf", "only whole steps up to 100 and 0.1, "
                                   "0.01, ... are supported");
      }
      s.erase("multipleOf");
    }
    bool bounded = false;
    for (const std::string &k : kNumberKeywords)
      if (s.contains(k)) {
        if (!s[k].is_number())
          fail(path + "/" + k, "must be a number");
        const double v = s[k].get<double>();
        if (!integer && (std::floor(v) != v || std::fabs(v) > 1e15))
          fail(path + "/" + k, "'" + k +
                                   "' on a number must be a whole number "
                                   "(other bounds are supported on integers "
                                   "only)");
        bounded = true;
      }
    if (step > 1) {
      if (bounded)
        fail(path + "/multipleOf", "a whole step above 1 together with "
                                   "minimum / maximum is not supported");
      return multiples(step, path);
    }
    if (!bounded && (integer || fractionDigits == 16))
      return Grammar::ref(integer ? integer_ : number_);
    if (!integer)
      return realRange(s, fractionDigits, path);
    // The integer grammar's own limit: 16 digits.
    constexpr double kLimit = 9999999999999999.0;
    double lo = -kLimit, hi = kLimit;
    auto at = [&](const char *k) { return s[k].get<double>(); };
    if (s.contains("minimum"))
      lo = std::max(lo, std::ceil(at("minimum")));
    if (s.contains("exclusiveMinimum"))
      lo = std::max(lo, std::floor(at("exclusiveMinimum")) + 1);
    if (s.contains("maximum"))
      hi = std::min(hi, std::floor(at("maximum")));
    if (s.contains("exclusiveMaximum"))
      hi = std::min(hi, std::ceil(at("exclusiveMaximum")) - 1);
    if (lo > hi)
      nothing(path, "no integer lies within its minimum and maximum");
    const auto L = static_cast<int64_t>(std::max(lo, -kLimit)),
               H = static_cast<int64_t>(std::min(hi, kLimit));
    const uint32_t r = g_.freshRule(ruleName(path) + "-range");
    if (L < 0) { // "-" then magnitudes max(1, -H) .. -L
      const uint32_t neg = g_.freshRule(ruleName(path) + "-negative");
      digitRange(neg, std::to_string(std::max<int64_t>(1, -H)),
                 std::to_string(-L));
      g_.addAlternative(r, {g_.byte('-'), Grammar::ref(neg)});
    }
    if (L <= 0 && H >= 0)
      g_.addAlternative(r, {g_.byte('0')});
    if (H > 0)
      digitRange(r, std::to_string(std::max<int64_t>(1, L)), std::to_string(H));
    return Grammar::ref(r);
  }

  /// The multiples of k (2..100) with at most 15 digits, as integers (below
  /// 2^53: validators that divide in doubles agree).
  Element multiples(int64_t k, const std::string &path) {
    // rest(r, left): digits after a prefix whose value is r modulo k, at
    // most `left` more; it may end where r is 0. Only states that can end
    // are referenced.
    std::map<std::pair<int64_t, int>, std::optional<uint32_t>> rules;
    std::function<std::optional<uint32_t>(int64_t, int)> rest =
        [&](int64_t r, int left) -> std::optional<uint32_t> {
      auto key = std::make_pair(r, left);
      if (auto it = rules.find(key); it != rules.end())
        return it->second;
      // Digits grouped by the remainder they lead to.
      std::map<int64_t, ByteSet> next;
      if (left > 0)
        for (int d = 0; d <= 9; ++d)
          next[(10 * r + d) % k].set(static_cast<size_t>('0' + d));
      std::vector<Sequence> alts;
      if (r == 0)
        alts.push_back({});
      for (const auto &[to, set] : next)
        if (auto t = rest(to, left - 1))
          alts.push_back({g_.bytes(set), Grammar::ref(*t)});
      std::optional<uint32_t> rule;
      if (!alts.empty()) {
        rule = g_.freshRule(ruleName(path) + "-multiple");
        for (Sequence &a : alts)
          g_.addAlternative(*rule, std::move(a));
      }
      rules[key] = rule;
      return rule;
    };
    const uint32_t magnitude = g_.freshRule(ruleName(path) + "-multiples");
    for (int d = 1; d <= 9; ++d)
      if (auto t = rest(d % k, 14))
        g_.addAlternative(magnitude, {g_.byte(static_cast<uint8_t>('0' + d)),
                                      Grammar::ref(*t)});
    const uint32_t r = g_.freshRule(ruleName(path) + "-multiple-of");
    g_.addAlternative(r, {g_.byte('0')});
    g_.addAlternative(r,
                      {g_.repeat(g_.byte('-'), 0, 1), Grammar::ref(magnitude)});
    return Grammar::ref(r);
  }

  /// Integer parts lo..hi (0 <= lo <= hi) as alternatives of a new rule.
  Element integerPart(int64_t lo, int64_t hi, const std::string &name) {
    const uint32_t r = g_.freshRule(name);
    if (lo == 0)
      g_.addAlternative(r, {g_.byte('0')});
    if (hi > 0)
      digitRange(r, std::to_string(std::max<int64_t>(1, lo)),
                 std::to_string(hi));
    return Grammar::ref(r);
  }

  /// Numbers between whole bounds (number()).
  Element realRange(const Json &s, int fractionDigits,
                    const std::string &path) {
    constexpr int64_t kMax = 9999999999999999; // 16 digits
    auto bound = [&](const char *k) {
      return static_cast<int64_t>(s[k].get<double>());
    };
    // Lower and upper bounds with their strictness; none: the 16 digits.
    bool hasLo = false, loStrict = false, hasHi = false, hiStrict = false;
    int64_t lo = -kMax, hi = kMax;
    if (s.contains("minimum"))
      hasLo = true, lo = bound("minimum");
    if (s.contains("exclusiveMinimum") && s["exclusiveMinimum"].is_number() &&
        (!hasLo || bound("exclusiveMinimum") >= lo))
      hasLo = loStrict = true, lo = bound("exclusiveMinimum");
    if (s.contains("maximum"))
      hasHi = true, hi = bound("maximum");
    if (s.contains("exclusiveMaximum") && s["exclusiveMaximum"].is_number() &&
        (!hasHi || bound("exclusiveMaximum") <= hi))
      hasHi = hiStrict = true, hi = bound("exclusiveMaximum");
    const uint32_t r = g_.freshRule(ruleName(path) + "-real");
    // "." then up to fractionDigits digits; and a fraction above zero, its
    // last digit not 0 (none without fraction digits).
    const uint32_t fraction = g_.freshRule("fraction");
    const uint32_t positive = g_.freshRule("fraction-positive");
    const uint32_t zero = g_.freshRule("fraction-zero"); // 10.0 at most 10
    g_.addAlternative(fraction, {});
    g_.addAlternative(zero, {});
    if (fractionDigits > 0) {
      g_.addAlternative(
          zero, {g_.byte('.'), g_.repeat(g_.byte('0'), 1, fractionDigits)});
      g_.addAlternative(
          fraction, {g_.byte('.'),
                     g_.repeat(g_.bytes(digits('0', '9')), 1, fractionDigits)});
      g_.addAlternative(positive, {g_.byte('.'),
                                   g_.repeat(g_.bytes(digits('0', '9')), 0,
                                             fractionDigits - 1),
                                   g_.bytes(digits('1', '9'))});
    }
    const Element frac = Grammar::ref(fraction);
    auto piece = [&](bool negative, int64_t a, int64_t b, Element tail,
                     bool hasTail) {
      if (a > b)
        return;
      Sequence seq;
      if (negative)
        seq.push_back(g_.byte('-'));
      seq.push_back(integerPart(a, std::min(b, kMax), ruleName(path) + "-int"));
      if (hasTail)
        seq.push_back(tail);
      g_.addAlternative(r, std::move(seq));
    };
    // Magnitudes u = I.F with lo <= u <= hi (0 <= lo; either bound strict):
    // integer parts strictly inside with any fraction, I = lo with a
    // fraction above zero when lo is strict, I = hi with a zero fraction.
    auto magnitudes = [&](bool negative, int64_t lo, bool loStrict, int64_t hi,
                          bool hiStrict) {
      const int64_t from = loStrict ? lo + 1 : lo;
      piece(negative, from, hi - 1, frac, true);
      if (loStrict && lo < hi && fractionDigits > 0)
        piece(negative, lo, lo, Grammar::ref(positive), true);
      if (!hiStrict)
        piece(negative, std::max(from, hi), hi, Grammar::ref(zero), true);
    };
    if (hi > 0 || (hi == 0 && !hiStrict))
      magnitudes(false, std::max<int64_t>(lo, 0), lo >= 0 && loStrict, hi,
                 hiStrict);
    // x < 0, written as -u: u within -hi..-lo, and above zero.
    if (lo < 0)
      magnitudes(true, hi >= 0 ? 0 : -hi, hi >= 0 || hiStrict, -lo, loStrict);
    if (g_.rules[r].alternatives.empty())
      nothing(path, "no number this grammar writes lies within its minimum and "
                    "maximum");
    return Grammar::ref(r);
  }

  /// Alternatives into rule r for the decimals lo..hi (both positive, no
  /// leading zeros): one length at a time, then digit by digit.
  void digitRange(uint32_t r, const std::string &lo, const std::string &hi) {
    for (size_t n = lo.size(); n <= hi.size(); ++n) {
      const std::string a = n == lo.size() ? lo : "1" + std::string(n - 1, '0');
      const std::string b = n == hi.size() ? hi : std::string(n, '9');
      sameLength(r, a, b, {});
    }
  }

  ByteSet digits(char from, char to) {
    ByteSet set;
    for (char c = from; c <= to; ++c)
      set.set(static_cast<unsigned char>(c));
    return set;
  }

  /// prefix then every string of a's length between a and b.
  void sameLength(uint32_t r, const std::string &a, const std::string &b,
                  Sequence prefix) {
    if (a.empty()) {
      g_.addAlternative(r, std::move(prefix));
      return;
    }
    const std::string ra = a.substr(1), rb = b.substr(1);
    if (a[0] == b[0]) {
      prefix.push_back(g_.byte(static_cast<uint8_t>(a[0])));
      sameLength(r, ra, rb, std::move(prefix));
      return;
    }
    const std::string zeros(ra.size(), '0'), nines(ra.size(), '9');
    auto any = [&](Sequence s, size_t count) {
      for (size_t i = 0; i < count; ++i)
        s.push_back(g_.bytes(digits('0', '9')));
      return s;
    };
    // a[0] followed by ra..99, the digits strictly between with anything,
    // b[0] followed by 00..rb (merged into the middle when they are full).
    char first = a[0], last = b[0];
    if (ra == zeros)
      --first; // a[0] joins the middle
    else {
      Sequence s = prefix;
      s.push_back(g_.byte(static_cast<uint8_t>(a[0])));
      sameLength(r, ra, nines, std::move(s));
    }
    if (rb == nines)
      ++last;
    else {
      Sequence s = prefix;
      s.push_back(g_.byte(static_cast<uint8_t>(b[0])));
      sameLength(r, zeros, rb, std::move(s));
    }
    if (first + 1 <= last - 1) {
      Sequence s = prefix;
      s.push_back(g_.bytes(
          digits(static_cast<char>(first + 1), static_cast<char>(last - 1))));
      g_.addAlternative(r, any(std::move(s), ra.size()));
    }
  }

  std::string origin_;
  JsonSchemaOptions options_;
  Grammar g_;
  const Json *root_ = nullptr;
  bool refSiblingsIgnored_ = false;
  int distributionDepth_ = 0;
  std::map<std::string, std::shared_ptr<const CompiledGrammar>> patterns_;
  std::map<std::string, Pda::State> patternStarts_; // where each may begin
  std::map<std::string, uint32_t> refs_;
  uint32_t fraction_ = 0;
  uint32_t ws_ = 0, char_ = 0, string_ = 0, number_ = 0, integer_ = 0,
           boolean_ = 0, null_ = 0, anyValue_ = 0, anyObject_ = 0,
           anyArray_ = 0;
};

} // namespace

Grammar grammarFromJsonSchema(std::string_view schemaJson,
                              const std::string &origin,
                              const JsonSchemaOptions &options) {
  Json schema;
  try {
    schema = Json::parse(schemaJson);
  } catch (const Json::exception &e) {
    throw Error(origin + ": not valid JSON: " + e.what());
  }
  checkNesting(schema, origin);
  try {
    return Converter(origin, options).schema(schema);
  } catch (const Json::exception &e) { // e.g. a string that is not UTF-8
    throw Error(origin + ": " + e.what());
  }
}

Grammar grammarForJson(bool objectOnly) {
  return Converter(objectOnly ? "json_object" : "json", {}).any(objectOnly);
}

} // namespace llmc::grammar
