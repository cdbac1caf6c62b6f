#include "json_format.h"

#include "py_string.h"

#include "llmc/template/jinja.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace llmc::tmpl {

namespace {

// The binary subtype parseContextJson tags an integer's digits with.
constexpr std::uint64_t kBigIntegerSubtype = 0x6b6967; // "big"

std::optional<std::string> bigIntegerDigits(const nlohmann::ordered_json &j) {
  const auto &b = j.get_binary();
  if (!b.has_subtype() || b.subtype() != kBigIntegerSubtype)
    return std::nullopt;
  return std::string(b.begin(), b.end());
}

bool isIntegerLexeme(const std::string &s) {
  size_t i = !s.empty() && s[0] == '-';
  return i < s.size() &&
         s.find_first_not_of("0123456789", i) == std::string::npos;
}

// nlohmann's own DOM builder, except that a number too big for 64 bits
// whose text is an integer becomes its digits instead of a double.
class ContextSax {
  using J = nlohmann::ordered_json;

public:
  explicit ContextSax(J &root) : dom_(root, false) {}
  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(J::number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(J::number_unsigned_t v) {
    return dom_.number_unsigned(v);
  }
  bool number_float(J::number_float_t v, const std::string &text) {
    if (!isIntegerLexeme(text))
      return dom_.number_float(v, text);
    J::binary_t digits(std::vector<std::uint8_t>(text.begin(), text.end()),
                       kBigIntegerSubtype);
    return dom_.binary(digits);
  }
  bool string(std::string &v) { return dom_.string(v); }
  bool binary(J::binary_t &v) { return dom_.binary(v); }
  bool start_object(std::size_t n) { return dom_.start_object(n); }
  bool key(std::string &k) { return dom_.key(k); }
  bool end_object() { return dom_.end_object(); }
  bool start_array(std::size_t n) { return dom_.start_array(n); }
  bool end_array() { return dom_.end_array(); }
  bool parse_error(std::size_t pos, const std::string &token,
                   const nlohmann::detail::exception &e) {
    return dom_.parse_error(pos, token, e);
  }
  bool is_errored() const { return dom_.is_errored(); }

private:
  nlohmann::detail::json_sax_dom_parser<J> dom_;
};

} // namespace

nlohmann::ordered_json parseContextJson(std::string_view text) {
  nlohmann::ordered_json root;
  ContextSax sax(root);
  if (!nlohmann::ordered_json::sax_parse(text.begin(), text.end(), &sax) ||
      sax.is_errored())
    return nlohmann::ordered_json(nlohmann::ordered_json::value_t::discarded);
  return root;
}

bool mayHoldBigIntegers(std::string_view text) {
  size_t run = 0;
  for (char c : text)
    if ((run = c >= '0' && c <= '9' ? run + 1 : 0) >= 20)
      return true;
  return false;
}

namespace {

// Deeper JSON would only fail later, when printed; refusing it here keeps
// the recursion below bounded.
constexpr int kMaxContextDepth = 512;

Value fromJsonAt(const nlohmann::ordered_json &j, int depth) {
  if (depth > kMaxContextDepth)
    throw TemplateError("chat template context nested deeper than " +
                        std::to_string(kMaxContextDepth) + " levels");
  using T = nlohmann::ordered_json::value_t;
  switch (j.type()) {
  case T::null:
    return Value::none();
  case T::boolean:
    return Value::boolean(j.get<bool>());
  case T::number_integer:
    return Value::integer(j.get<std::int64_t>());
  case T::number_unsigned: {
    auto u = j.get<std::uint64_t>();
    if (u >
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return Value::bigInteger(std::to_string(u));
    return Value::integer(static_cast<std::int64_t>(u));
  }
  case T::binary:
    if (auto digits = bigIntegerDigits(j))
      return Value::bigInteger(*digits);
    return Value::none();
  case T::number_float:
    return Value::real(j.get<double>());
  case T::string:
    return Value::string(j.get<std::string>());
  case T::array: {
    std::vector<Value> items;
    items.reserve(j.size());
    for (const auto &e : j)
      items.push_back(fromJsonAt(e, depth + 1));
    return Value::list(std::move(items));
  }
  case T::object: {
    auto d = std::make_shared<Dict>();
    d->entries.reserve(j.size());
    for (auto it = j.begin(); it != j.end(); ++it)
      d->entries.emplace_back(Value::string(it.key()),
                              fromJsonAt(it.value(), depth + 1));
    return Value::dict(std::move(d));
  }
  default:
    return Value::none();
  }
}

} // namespace

Value fromJson(const nlohmann::ordered_json &j) { return fromJsonAt(j, 0); }

namespace {

constexpr int kMaxJsonDepth = 200;

void appendHex4(std::string &out, unsigned v) {
  static const char *hex = "0123456789abcdef";
  out += "\\u";
  for (int k = 3; k >= 0; --k)
    out += hex[(v >> (4 * k)) & 0xF];
}

void appendString(std::string &out, std::string_view s, bool ensureAscii) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      std::size_t b = i;
      std::uint32_t cp = py::decodeAt(s, i);
      if (!ensureAscii) {
        out.append(s.substr(b, i - b));
      } else if (cp >= 0x10000) {
        cp -= 0x10000;
        appendHex4(out, 0xD800 + (cp >> 10));
        appendHex4(out, 0xDC00 + (cp & 0x3FF));
      } else {
        appendHex4(out, cp);
      }
      continue;
    }
    ++i;
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (c < 0x20 || (ensureAscii && c == 0x7F))
        appendHex4(out, c);
      else
        out += static_cast<char>(c);
    }
  }
  out += '"';
}

std::string floatJson(double d) {
  if (std::isnan(d))
    return "NaN";
  if (std::isinf(d))
    return d < 0 ? "-Infinity" : "Infinity";
  return py::formatFloat(d);
}

std::string keyString(const Value &k) {
  switch (k.kind()) {
  case Value::Kind::String:
    return k.str();
  case Value::Kind::Int:
    return k.isBigInt() ? k.bigDigits() : std::to_string(k.asInt());
  case Value::Kind::Float:
    return floatJson(k.asDouble());
  case Value::Kind::Bool:
    return k.asBool() ? "true" : "false";
  case Value::Kind::None:
    return "null";
  default:
    throw EvalError("keys must be str, int, float, bool or None, not " +
                    typeName(k));
  }
}

class Writer {
public:
  Writer(std::string &out, const JsonStyle &style) : out_(out), style_(style) {}

  void write(const Value &v, int depth) {
    if (depth > kMaxJsonDepth)
      throw EvalError("maximum recursion depth exceeded in tojson");
    ScopedTextLimit::check(out_.size());
    switch (v.kind()) {
    case Value::Kind::None:
      out_ += "null";
      return;
    case Value::Kind::Bool:
      out_ += v.asBool() ? "true" : "false";
      return;
    case Value::Kind::Int:
      out_ += v.isBigInt() ? v.bigDigits() : std::to_string(v.asInt());
      return;
    case Value::Kind::Float:
      out_ += floatJson(v.asDouble());
      return;
    case Value::Kind::String:
      appendString(out_, v.str(), style_.ensureAscii);
      return;
    case Value::Kind::List: {
      const auto &items = v.listRef().items;
      if (items.empty()) {
        out_ += "[]";
        return;
      }
      out_ += '[';
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i)
          out_ += style_.itemSeparator;
        newline(depth + 1);
        write(items[i], depth + 1);
      }
      newline(depth);
      out_ += ']';
      return;
    }
    case Value::Kind::Dict: {
      const auto &entries = v.dictRef().entries;
      if (entries.empty()) {
        out_ += "{}";
        return;
      }
      std::vector<std::pair<std::string, const Value *>> items;
      items.reserve(entries.size());
      for (const auto &[k, val] : entries)
        items.emplace_back(keyString(k), &val);
      if (style_.sortKeys)
        std::stable_sort(
            items.begin(), items.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
      out_ += '{';
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i)
          out_ += style_.itemSeparator;
        newline(depth + 1);
        appendString(out_, items[i].first, style_.ensureAscii);
        out_ += style_.keySeparator;
        write(*items[i].second, depth + 1);
      }
      newline(depth);
      out_ += '}';
      return;
    }
    default:
      throw EvalError("Object of type " + typeName(v) +
                      " is not JSON serializable");
    }
  }

private:
  void newline(int depth) {
    if (!style_.indent)
      return;
    out_ += '\n';
    for (int i = 0; i < depth; ++i)
      out_ += *style_.indent;
  }

  std::string &out_;
  const JsonStyle &style_;
};

} // namespace

std::string toJson(const Value &v, const JsonStyle &style) {
  std::string out;
  Writer(out, style).write(v, 0);
  return out;
}

} // namespace llmc::tmpl
