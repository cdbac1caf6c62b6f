// Jinja's built-in filters and tests, as of Jinja 3.1, for the values the
// interpreter models.
#include "builtins.h"
#include "json_format.h"
#include "parser.h"
#include "py_string.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>

namespace llmc::tmpl {

ArgBinder::ArgBinder(const CallArgs &args, std::string_view function,
                     std::initializer_list<const char *> params)
    : bound_(params.size(), nullptr) {
  if (args.positional.size() > params.size())
    throw EvalError(std::string(function) + "() takes at most " +
                    std::to_string(params.size()) + " arguments (" +
                    std::to_string(args.positional.size()) + " given)");
  for (std::size_t i = 0; i < args.positional.size(); ++i)
    bound_[i] = &args.positional[i];
  for (const auto &[key, value] : args.keyword) {
    std::size_t i = 0;
    for (const char *p : params) {
      if (key == p)
        break;
      ++i;
    }
    if (i == params.size())
      throw EvalError(std::string(function) +
                      "() got an unexpected keyword argument '" + key + "'");
    if (bound_[i])
      throw EvalError(std::string(function) +
                      "() got multiple values for argument '" + key + "'");
    bound_[i] = &value;
  }
}

const Value *ArgBinder::get(std::size_t index) const { return bound_[index]; }

Value ArgBinder::get(std::size_t index, Value fallback) const {
  return bound_[index] ? *bound_[index] : std::move(fallback);
}

namespace {

using FilterFn = std::function<Value(Interpreter &, const Value &, CallArgs &)>;
using TestFn = std::function<bool(Interpreter &, const Value &, CallArgs &)>;

std::int64_t intArg(const Value &v, const char *what) {
  if (v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Bool)
    return v.asInt();
  throw EvalError(std::string(what) + " must be an integer, not " +
                  typeName(v));
}

std::string strArg(const Value &v, const char *what) {
  if (v.isString())
    return v.str();
  throw EvalError(std::string(what) + " must be a string, not " + typeName(v));
}

std::int64_t length(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Undefined:
    return 0;
  case Value::Kind::String:
    return static_cast<std::int64_t>(py::length(v.str()));
  case Value::Kind::List:
    return static_cast<std::int64_t>(v.listRef().items.size());
  case Value::Kind::Dict:
    return static_cast<std::int64_t>(v.dictRef().entries.size());
  default:
    throw EvalError("object of type '" + typeName(v) + "' has no len()");
  }
}

// Jinja's attribute path for selectattr/map/sort: "a.b.0" looks up items.
Value lookupPath(Interpreter &in, Value v, const Value &path) {
  if (!path.isString()) {
    return in.getItem(v, path);
  }
  for (const auto &part : py::split(path.str(), std::string("."), -1)) {
    bool digits = !part.empty() &&
                  std::all_of(part.begin(), part.end(),
                              [](char c) { return c >= '0' && c <= '9'; });
    if (digits && part.size() < 18)
      v = in.getItem(v, Value::integer(std::stoll(part)));
    else
      v = in.getItem(v, Value::string(part));
  }
  return v;
}

// Sort key for sort/unique/min/max/dictsort: lower-cased unless case matters.
Value foldCase(const Value &v, bool caseSensitive) {
  if (!caseSensitive && v.isString())
    return Value::string(py::lower(v.str()));
  return v;
}

Value tupleOf(Value a, Value b) {
  std::vector<Value> items;
  items.push_back(std::move(a));
  items.push_back(std::move(b));
  return Value::list(std::move(items), true);
}

std::string htmlEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&#34;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

// Python's int(str): optional sign, underscores between digits, whitespace.
bool parseInt(const std::string &text, std::int64_t base, std::int64_t &out) {
  std::string s = py::strip(text, std::nullopt, true, true);
  std::string clean;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_' && i > 0 && i + 1 < s.size() && s[i - 1] != '_')
      continue;
    clean += s[i];
  }
  if (clean.empty() || base < 2 || base > 36)
    return false;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(clean.c_str(), &end, static_cast<int>(base));
  if (errno != 0 || end != clean.c_str() + clean.size())
    return false;
  out = v;
  return true;
}

bool parseFloat(const std::string &text, double &out) {
  std::string s = py::strip(text, std::nullopt, true, true);
  if (s.empty())
    return false;
  char *end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

std::vector<Value> sortedItems(Interpreter &in, std::vector<Value> items,
                               bool reverse, bool caseSensitive,
                               const Value *attribute) {
  in.step(items.size());
  std::vector<std::pair<Value, Value>> keyed;
  keyed.reserve(items.size());
  for (auto &item : items) {
    Value key = attribute ? lookupPath(in, item, *attribute) : item;
    keyed.emplace_back(foldCase(key, caseSensitive), std::move(item));
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [&](const auto &a, const auto &b) {
                     return reverse ? lessThan(b.first, a.first)
                                    : lessThan(a.first, b.first);
                   });
  std::vector<Value> out;
  out.reserve(keyed.size());
  for (auto &[k, v] : keyed)
    out.push_back(std::move(v));
  return out;
}

Value minMax(Interpreter &in, const Value &v, CallArgs &args, bool max) {
  ArgBinder a(args, max ? "max" : "min", {"case_sensitive", "attribute"});
  bool cs = truthy(a.get(0, Value::boolean(false)));
  std::vector<Value> items = in.iterate(v);
  in.step(items.size());
  if (items.empty())
    return Value::undefined("No aggregated item, sequence was empty.");
  const Value *attr = a.get(1);
  std::size_t best = 0;
  Value bestKey;
  for (std::size_t i = 0; i < items.size(); ++i) {
    Value key = foldCase(attr ? lookupPath(in, items[i], *attr) : items[i], cs);
    if (i == 0 || (max ? lessThan(bestKey, key) : lessThan(key, bestKey))) {
      best = i;
      bestKey = std::move(key);
    }
  }
  return items[best];
}

// select/reject/selectattr/rejectattr share one shape.
Value selectFilter(Interpreter &in, const Value &v, CallArgs &args, bool byAttr,
                   bool keep) {
  std::vector<Value> &pos = args.positional;
  std::size_t next = 0;
  Value attr;
  if (byAttr) {
    if (pos.empty())
      throw EvalError("selectattr/rejectattr need an attribute name");
    attr = pos[next++];
  }
  std::string test;
  if (next < pos.size())
    test = strArg(pos[next++], "test name");
  if (!test.empty() && !isKnownTest(test))
    throw EvalError("no test named '" + test + "'");
  CallArgs testArgs;
  testArgs.positional.assign(pos.begin() + static_cast<std::ptrdiff_t>(next),
                             pos.end());
  testArgs.keyword = args.keyword;
  std::vector<Value> out;
  for (const auto &item : in.iterate(v)) {
    in.step();
    Value subject = byAttr ? lookupPath(in, item, attr) : item;
    bool ok;
    if (test.empty()) {
      ok = truthy(subject);
    } else {
      CallArgs copy = testArgs;
      ok = in.applyTest(test, subject, copy);
    }
    if (ok == keep)
      out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value mapFilter(Interpreter &in, const Value &v, CallArgs &args) {
  std::vector<Value> out;
  const Value *attribute = nullptr;
  const Value *fallback = nullptr;
  for (const auto &[k, val] : args.keyword) {
    if (k == "attribute")
      attribute = &val;
    else if (k == "default")
      fallback = &val;
  }
  if (attribute) {
    for (const auto &item : in.iterate(v)) {
      in.step();
      Value r = lookupPath(in, item, *attribute);
      out.push_back(r.isUndefined() && fallback ? *fallback : r);
    }
    return Value::list(std::move(out));
  }
  if (args.positional.empty())
    throw EvalError("map requires a filter argument");
  std::string filter = strArg(args.positional[0], "filter name");
  if (!isKnownFilter(filter))
    throw EvalError("no filter named '" + filter + "'");
  for (const auto &item : in.iterate(v)) {
    in.step();
    CallArgs rest;
    rest.positional.assign(args.positional.begin() + 1, args.positional.end());
    rest.keyword = args.keyword;
    out.push_back(in.applyFilter(filter, item, rest));
  }
  return Value::list(std::move(out));
}

Value tojsonFilter(Interpreter &in, const Value &v, CallArgs &args) {
  // transformers' signature: tojson(x, ensure_ascii=False, indent=None,
  // separators=None, sort_keys=False).
  ArgBinder a(args, "tojson",
              {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonStyle style;
  style.ensureAscii = truthy(a.get(0, Value::boolean(false)));
  Value indent = a.get(1, Value::none());
  if (indent.isString()) {
    style.indent = indent.str();
  } else if (!indent.isNone()) {
    std::int64_t n = intArg(indent, "indent");
    in.checkSize(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
    style.indent = std::string(
        static_cast<std::size_t>(std::max<std::int64_t>(n, 0)), ' ');
  }
  if (style.indent)
    style.itemSeparator = ",";
  Value seps = a.get(2, Value::none());
  if (!seps.isNone()) {
    if (seps.kind() != Value::Kind::List || seps.listRef().items.size() != 2 ||
        !seps.listRef().items[0].isString() ||
        !seps.listRef().items[1].isString())
      throw EvalError("tojson separators must be a pair of strings");
    style.itemSeparator = seps.listRef().items[0].str();
    style.keySeparator = seps.listRef().items[1].str();
  }
  style.sortKeys = truthy(a.get(3, Value::boolean(false)));
  std::string out = toJson(v, style);
  in.checkSize(out.size());
  return Value::string(std::move(out));
}

Value indentFilter(Interpreter &in, const Value &v, CallArgs &args) {
  ArgBinder a(args, "indent", {"width", "first", "blank"});
  Value width = a.get(0, Value::integer(4));
  std::string indention;
  if (width.isString()) {
    indention = width.str();
  } else {
    std::int64_t n = std::max<std::int64_t>(intArg(width, "width"), 0);
    in.checkSize(static_cast<std::size_t>(n));
    indention.assign(static_cast<std::size_t>(n), ' ');
  }
  bool first = truthy(a.get(1, Value::boolean(false)));
  bool blank = truthy(a.get(2, Value::boolean(false)));
  std::string s = toStr(v) + "\n";
  auto lines = py::splitlines(s);
  in.checkSize(s.size() + lines.size() * indention.size());
  std::string rv;
  if (blank) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i)
        rv += "\n" + indention;
      rv += lines[i];
    }
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (std::size_t i = 1; i < lines.size(); ++i)
      rv += "\n" + (lines[i].empty() ? "" : indention + lines[i]);
  }
  if (first)
    rv = indention + rv;
  return Value::string(std::move(rv));
}

Value roundFilter(const Value &v, CallArgs &args) {
  ArgBinder a(args, "round", {"precision", "method"});
  std::int64_t precision = intArg(a.get(0, Value::integer(0)), "precision");
  std::string method = strArg(a.get(1, Value::string("common")), "method");
  if (!v.isNumber())
    throw EvalError("round() needs a number, not " + typeName(v));
  if (method != "common" && method != "floor" && method != "ceil")
    throw EvalError("method must be 'common', 'ceil' or 'floor'");
  if (v.kind() != Value::Kind::Float && method == "common")
    return Value::integer(v.asInt()); // round(int, n) stays an int
  double x = v.asDouble();
  precision = std::clamp<std::int64_t>(precision, -308, 308);
  if (method == "common") {
    if (precision >= 0 && std::isfinite(x)) {
      // printf rounds the exact binary value half-to-even, as Python's
      // round() does.
      char buf[512];
      std::snprintf(buf, sizeof buf, "%.*f",
                    static_cast<int>(std::min<std::int64_t>(precision, 300)),
                    x);
      return Value::real(std::strtod(buf, nullptr));
    }
    double m = std::pow(10.0, static_cast<double>(-precision));
    return Value::real(std::nearbyint(x / m) * m);
  }
  double m = std::pow(10.0, static_cast<double>(precision));
  double r = method == "floor" ? std::floor(x * m) : std::ceil(x * m);
  return Value::real(r / m);
}

const std::map<std::string, FilterFn, std::less<>> &filters() {
  static const std::map<std::string, FilterFn, std::less<>> table = [] {
    std::map<std::string, FilterFn, std::less<>> t;
    t["abs"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder(args, "abs", {});
      if (v.kind() == Value::Kind::Float)
        return Value::real(std::fabs(v.asDouble()));
      if (v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Bool) {
        if (v.asInt() == INT64_MIN)
          throw EvalError("integer overflow");
        return Value::integer(v.asInt() < 0 ? -v.asInt() : v.asInt());
      }
      throw EvalError("bad operand type for abs(): '" + typeName(v) + "'");
    };
    t["attr"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder a(args, "attr", {"name"});
      std::string name = strArg(a.get(0, Value::string("")), "name");
      if (v.kind() == Value::Kind::Dict) {
        if (auto m = boundMethod(v, name))
          return Value::callable(std::move(m));
        return Value::undefined("'dict object' has no attribute '" + name +
                                "'");
      }
      return in.getAttr(v, name);
    };
    t["capitalize"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder(args, "capitalize", {});
      return Value::string(py::capitalize(toStr(v)));
    };
    t["center"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder a(args, "center", {"width"});
      std::int64_t width = intArg(a.get(0, Value::integer(80)), "width");
      std::string s = toStr(v);
      auto len = static_cast<std::int64_t>(py::length(s));
      if (width <= len)
        return Value::string(s);
      in.checkSize(static_cast<std::size_t>(width));
      std::int64_t marg = width - len;
      std::int64_t left = marg / 2 + (marg & width & 1);
      return Value::string(
          std::string(static_cast<std::size_t>(left), ' ') + s +
          std::string(static_cast<std::size_t>(marg - left), ' '));
    };
    t["length"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder(args, "length", {});
      return Value::integer(length(v));
    };
    t["count"] = t["length"];
    t["default"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder a(args, "default", {"default_value", "boolean"});
      bool boolean = truthy(a.get(1, Value::boolean(false)));
      if (v.isUndefined() || (boolean && !truthy(v)))
        return a.get(0, Value::string(""));
      return v;
    };
    t["d"] = t["default"];
    t["dictsort"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder a(args, "dictsort", {"case_sensitive", "by", "reverse"});
      if (v.kind() != Value::Kind::Dict)
        throw EvalError("dictsort needs a mapping, not " + typeName(v));
      bool cs = truthy(a.get(0, Value::boolean(false)));
      std::string by = strArg(a.get(1, Value::string("key")), "by");
      if (by != "key" && by != "value")
        throw EvalError("You can only sort by either 'key' or 'value'");
      bool reverse = truthy(a.get(2, Value::boolean(false)));
      std::vector<Value> pairs;
      for (const auto &[k, val] : v.dictRef().entries)
        pairs.push_back(tupleOf(k, val));
      Value index = Value::integer(by == "key" ? 0 : 1);
      return Value::list(
          sortedItems(in, std::move(pairs), reverse, cs, &index));
    };
    t["escape"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder(args, "escape", {});
      return Value::string(htmlEscape(toStr(v)));
    };
    t["e"] = t["escape"];
    t["forceescape"] = t["escape"];
    t["first"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder(args, "first", {});
      if (v.kind() == Value::Kind::List)
        return v.listRef().items.empty()
                   ? Value::undefined("No first item, sequence was empty.")
                   : v.listRef().items.front();
      auto items = in.iterate(v);
      return items.empty()
                 ? Value::undefined("No first item, sequence was empty.")
                 : items.front();
    };
    t["last"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder(args, "last", {});
      auto items = in.iterate(v);
      return items.empty()
                 ? Value::undefined("No last item, sequence was empty.")
                 : items.back();
    };
    t["float"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder a(args, "float", {"default"});
      if (v.isNumber())
        return Value::real(v.asDouble());
      double d;
      if (v.isString() && parseFloat(v.str(), d))
        return Value::real(d);
      return a.get(0, Value::real(0.0));
    };
    t["int"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder a(args, "int", {"default", "base"});
      Value fallback = a.get(0, Value::integer(0));
      std::int64_t base = intArg(a.get(1, Value::integer(10)), "base");
      if (v.isBigInt())
        return v;
      if (v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Bool)
        return Value::integer(v.asInt());
      if (v.kind() == Value::Kind::Float) {
        double d = std::trunc(v.asDouble());
        if (!(d > -9.2e18 && d < 9.2e18))
          return fallback;
        return Value::integer(static_cast<std::int64_t>(d));
      }
      if (v.isString()) {
        std::int64_t i;
        if (parseInt(v.str(), base, i))
          return Value::integer(i);
        double d;
        if (parseFloat(v.str(), d) && d > -9.2e18 && d < 9.2e18)
          return Value::integer(static_cast<std::int64_t>(std::trunc(d)));
      }
      return fallback;
    };
    t["format"] = [](Interpreter &, const Value &v, CallArgs &args) {
      if (!args.positional.empty() && !args.keyword.empty())
        throw EvalError(
            "can't handle positional and keyword arguments at the same time");
      if (!args.keyword.empty()) {
        auto d = std::make_shared<Dict>();
        for (auto &[k, val] : args.keyword)
          d->entries.emplace_back(Value::string(k), val);
        return Value::string(
            percentFormat(toStr(v), Value::dict(std::move(d))));
      }
      return Value::string(
          percentFormat(toStr(v), Value::list(args.positional, true)));
    };
    t["indent"] = indentFilter;
    t["items"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder(args, "items", {});
      if (v.isUndefined())
        return Value::list({});
      if (v.kind() != Value::Kind::Dict)
        throw EvalError("Can only get item pairs from a mapping.");
      std::vector<Value> out;
      for (const auto &[k, val] : v.dictRef().entries)
        out.push_back(tupleOf(k, val));
      return Value::list(std::move(out));
    };
    t["join"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder a(args, "join", {"d", "attribute"});
      std::string sep = toStr(a.get(0, Value::string("")));
      const Value *attr = a.get(1);
      std::string out;
      bool first = true;
      for (const auto &item : in.iterate(v)) {
        in.step();
        if (!first)
          out += sep;
        first = false;
        out += toStr(attr ? lookupPath(in, item, *attr) : item);
        in.checkSize(out.size());
      }
      return Value::string(std::move(out));
    };
    t["list"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder(args, "list", {});
      return Value::list(in.iterate(v));
    };
    t["lower"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder(args, "lower", {});
      return Value::string(py::lower(toStr(v)));
    };
    t["upper"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder(args, "upper", {});
      return Value::string(py::upper(toStr(v)));
    };
    t["title"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder(args, "title", {});
      return Value::string(py::jinjaTitle(toStr(v)));
    };
    t["map"] = mapFilter;
    t["max"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      return minMax(in, v, args, true);
    };
    t["min"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      return minMax(in, v, args, false);
    };
    t["select"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      return selectFilter(in, v, args, false, true);
    };
    t["reject"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      return selectFilter(in, v, args, false, false);
    };
    t["selectattr"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      return selectFilter(in, v, args, true, true);
    };
    t["rejectattr"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      return selectFilter(in, v, args, true, false);
    };
    t["replace"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder a(args, "replace", {"old", "new", "count"});
      std::string s = toStr(v);
      std::string from = toStr(a.get(0, Value::string("")));
      std::string to = toStr(a.get(1, Value::string("")));
      Value count = a.get(2, Value::none());
      std::int64_t n = count.isNone() ? -1 : intArg(count, "count");
      std::int64_t hits = from.empty()
                              ? static_cast<std::int64_t>(py::length(s)) + 1
                              : py::count(s, from);
      if (n >= 0)
        hits = std::min(hits, n);
      in.checkSize(s.size() + static_cast<std::size_t>(hits) * to.size());
      return Value::string(py::replace(s, from, to, n));
    };
    t["reverse"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder(args, "reverse", {});
      if (v.isString())
        return sliceValue(in, v, Value::none(), Value::none(),
                          Value::integer(-1));
      auto items = in.iterate(v);
      std::reverse(items.begin(), items.end());
      return Value::list(std::move(items));
    };
    t["round"] = [](Interpreter &, const Value &v, CallArgs &args) {
      return roundFilter(v, args);
    };
    t["safe"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder(args, "safe", {});
      return v;
    };
    t["sort"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder a(args, "sort", {"reverse", "case_sensitive", "attribute"});
      return Value::list(sortedItems(
          in, in.iterate(v), truthy(a.get(0, Value::boolean(false))),
          truthy(a.get(1, Value::boolean(false))), a.get(2)));
    };
    t["string"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder(args, "string", {});
      return v.isString() ? v : Value::string(toStr(v));
    };
    t["sum"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder a(args, "sum", {"attribute", "start"});
      Value total = a.get(1, Value::integer(0));
      const Value *attr = a.get(0);
      for (const auto &item : in.iterate(v)) {
        in.step();
        total =
            binaryOp(in, "+", total, attr ? lookupPath(in, item, *attr) : item);
      }
      return total;
    };
    t["tojson"] = tojsonFilter;
    t["trim"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder a(args, "trim", {"chars"});
      Value chars = a.get(0, Value::none());
      std::optional<std::string> set;
      if (!chars.isNone())
        set = toStr(chars);
      return Value::string(py::strip(toStr(v), set, true, true));
    };
    t["unique"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder a(args, "unique", {"case_sensitive", "attribute"});
      bool cs = truthy(a.get(0, Value::boolean(false)));
      const Value *attr = a.get(1);
      std::vector<Value> seen, out;
      for (const auto &item : in.iterate(v)) {
        Value key = foldCase(attr ? lookupPath(in, item, *attr) : item, cs);
        in.step(seen.size() / 16 + 1);
        bool dup = false;
        for (const auto &s : seen)
          if (equals(s, key)) {
            dup = true;
            break;
          }
        if (!dup) {
          seen.push_back(std::move(key));
          out.push_back(item);
        }
      }
      return Value::list(std::move(out));
    };
    t["wordcount"] = [](Interpreter &, const Value &v, CallArgs &args) {
      ArgBinder(args, "wordcount", {});
      return Value::integer(static_cast<std::int64_t>(
          py::split(toStr(v), std::nullopt, -1).size()));
    };
    return t;
  }();
  return table;
}

bool isLower(const std::string &s) {
  return py::lower(s) == s && py::upper(s) != s;
}

bool isUpper(const std::string &s) {
  return py::upper(s) == s && py::lower(s) != s;
}

const std::map<std::string, TestFn, std::less<>> &tests() {
  static const std::map<std::string, TestFn, std::less<>> table = [] {
    std::map<std::string, TestFn, std::less<>> t;
    auto kindTest = [](std::function<bool(const Value &)> pred) {
      return
          [pred](Interpreter &, const Value &v, CallArgs &) { return pred(v); };
    };
    using K = Value::Kind;
    t["defined"] = kindTest([](const Value &v) { return !v.isUndefined(); });
    t["undefined"] = kindTest([](const Value &v) { return v.isUndefined(); });
    t["none"] = kindTest([](const Value &v) { return v.isNone(); });
    t["boolean"] = kindTest([](const Value &v) { return v.kind() == K::Bool; });
    t["true"] = kindTest(
        [](const Value &v) { return v.kind() == K::Bool && v.asBool(); });
    t["false"] = kindTest(
        [](const Value &v) { return v.kind() == K::Bool && !v.asBool(); });
    t["integer"] = kindTest([](const Value &v) { return v.kind() == K::Int; });
    t["float"] = kindTest([](const Value &v) { return v.kind() == K::Float; });
    t["number"] = kindTest([](const Value &v) { return v.isNumber(); });
    t["string"] = kindTest([](const Value &v) { return v.isString(); });
    t["mapping"] = kindTest([](const Value &v) { return v.kind() == K::Dict; });
    t["iterable"] = kindTest([](const Value &v) {
      return v.isUndefined() || v.isString() || v.kind() == K::List ||
             v.kind() == K::Dict;
    });
    t["sequence"] = kindTest([](const Value &v) {
      return v.isUndefined() || v.isString() || v.kind() == K::List ||
             v.kind() == K::Dict;
    });
    t["callable"] =
        kindTest([](const Value &v) { return v.kind() == K::Callable; });
    t["escaped"] = kindTest([](const Value &) { return false; });
    t["lower"] = kindTest([](const Value &v) { return isLower(toStr(v)); });
    t["upper"] = kindTest([](const Value &v) { return isUpper(toStr(v)); });
    auto binary = [](const char *name,
                     std::function<bool(const Value &, const Value &)> pred) {
      return [name, pred](Interpreter &, const Value &v, CallArgs &args) {
        ArgBinder a(args, name, {"other"});
        if (!a.get(0))
          throw EvalError(std::string("test '") + name + "' needs an argument");
        return pred(v, *a.get(0));
      };
    };
    auto eq = binary(
        "eq", [](const Value &a, const Value &b) { return equals(a, b); });
    t["eq"] = t["equalto"] = t["=="] = eq;
    auto ne = binary(
        "ne", [](const Value &a, const Value &b) { return !equals(a, b); });
    t["ne"] = t["!="] = ne;
    auto lt = binary(
        "lt", [](const Value &a, const Value &b) { return lessThan(a, b); });
    t["lt"] = t["lessthan"] = t["<"] = lt;
    auto le = binary(
        "le", [](const Value &a, const Value &b) { return !lessThan(b, a); });
    t["le"] = t["<="] = le;
    auto gt = binary(
        "gt", [](const Value &a, const Value &b) { return lessThan(b, a); });
    t["gt"] = t["greaterthan"] = t[">"] = gt;
    auto ge = binary(
        "ge", [](const Value &a, const Value &b) { return !lessThan(a, b); });
    t["ge"] = t[">="] = ge;
    t["in"] = binary(
        "in", [](const Value &a, const Value &b) { return contains(b, a); });
    t["sameas"] = binary("sameas", [](const Value &a, const Value &b) {
      if (a.kind() != b.kind())
        return false;
      switch (a.kind()) {
      case K::None:
      case K::Undefined:
        return true;
      case K::Bool:
        return a.asBool() == b.asBool();
      case K::List:
      case K::Dict:
      case K::Object:
      case K::Callable:
        return a.identity() == b.identity();
      default:
        return equals(a, b);
      }
    });
    t["divisibleby"] = [](Interpreter &in, const Value &v, CallArgs &args) {
      ArgBinder a(args, "divisibleby", {"num"});
      if (!a.get(0))
        throw EvalError("test 'divisibleby' needs an argument");
      return equals(binaryOp(in, "%", v, *a.get(0)), Value::integer(0));
    };
    auto parity = [](bool odd) {
      return [odd](Interpreter &in, const Value &v, CallArgs &args) {
        ArgBinder(args, odd ? "odd" : "even", {});
        Value r = binaryOp(in, "%", v, Value::integer(2));
        return equals(r, Value::integer(odd ? 1 : 0));
      };
    };
    t["odd"] = parity(true);
    t["even"] = parity(false);
    t["filter"] = kindTest(
        [](const Value &v) { return v.isString() && isKnownFilter(v.str()); });
    t["test"] = kindTest(
        [](const Value &v) { return v.isString() && isKnownTest(v.str()); });
    return t;
  }();
  return table;
}

} // namespace

bool isKnownFilter(std::string_view name) { return filters().count(name) != 0; }
bool isKnownTest(std::string_view name) { return tests().count(name) != 0; }

Value applyFilter(Interpreter &in, const std::string &name, const Value &input,
                  CallArgs &args) {
  auto it = filters().find(name);
  if (it == filters().end())
    throw EvalError("unsupported filter '" + name + "'");
  return it->second(in, input, args);
}

bool applyTest(Interpreter &in, const std::string &name, const Value &v,
               CallArgs &args) {
  auto it = tests().find(name);
  if (it == tests().end())
    throw EvalError("unsupported test '" + name + "'");
  return it->second(in, v, args);
}

} // namespace llmc::tmpl
