// Python str and dict methods callable from templates, and the global
// functions transformers and Jinja provide.
#include "builtins.h"
#include "py_string.h"

#include <cstdio>

namespace llmc::tmpl {

namespace {

std::optional<std::string> optionalStr(const Value *v, const char *what) {
  if (!v || v->isNone())
    return std::nullopt;
  if (!v->isString())
    throw EvalError(std::string(what) + " must be None or a string, not " +
                    typeName(*v));
  return v->str();
}

std::int64_t optionalInt(const Value *v, std::int64_t fallback) {
  if (!v)
    return fallback;
  if (v->kind() != Value::Kind::Int && v->kind() != Value::Kind::Bool)
    throw EvalError("an integer is required, not " + typeName(*v));
  return v->asInt();
}

Value stringList(std::vector<std::string> parts) {
  std::vector<Value> items;
  items.reserve(parts.size());
  for (auto &p : parts)
    items.push_back(Value::string(std::move(p)));
  return Value::list(std::move(items));
}

// startswith/endswith accept a string or a tuple of strings.
bool affixMatch(const std::string &s, const Value &affix, bool prefix) {
  auto one = [&](const Value &a) {
    if (!a.isString())
      throw EvalError(std::string(prefix ? "startswith" : "endswith") +
                      " first arg must be str or a tuple of str, not " +
                      typeName(a));
    const std::string &x = a.str();
    if (x.size() > s.size())
      return false;
    return prefix ? s.compare(0, x.size(), x) == 0
                  : s.compare(s.size() - x.size(), x.size(), x) == 0;
  };
  if (affix.kind() == Value::Kind::List) {
    for (const auto &a : affix.listRef().items)
      if (one(a))
        return true;
    return false;
  }
  return one(affix);
}

bool allChars(const std::string &s, bool (*pred)(std::uint32_t)) {
  if (s.empty())
    return false;
  for (std::size_t i = 0; i < s.size();)
    if (!pred(py::decodeAt(s, i)))
      return false;
  return true;
}

// str.format with positional ({} / {0}) and named ({name}) fields, no specs.
std::string strFormat(const std::string &fmt, const CallArgs &args) {
  std::string out;
  std::size_t auto_ = 0;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    char c = fmt[i];
    if (c == '}') {
      if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
        out += '}';
        ++i;
        continue;
      }
      throw EvalError("Single '}' encountered in format string");
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    std::size_t close = fmt.find('}', i);
    if (close == std::string::npos)
      throw EvalError("Single '{' encountered in format string");
    std::string field = fmt.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!.[") != std::string::npos)
      throw EvalError("unsupported format field '{" + field + "}'");
    const Value *arg = nullptr;
    if (field.empty()) {
      if (auto_ >= args.positional.size())
        throw EvalError("Replacement index out of range");
      arg = &args.positional[auto_++];
    } else if (field.find_first_not_of("0123456789") == std::string::npos) {
      std::size_t k = field.size() < 10 ? std::stoul(field) : SIZE_MAX;
      if (k >= args.positional.size())
        throw EvalError("Replacement index out of range");
      arg = &args.positional[k];
    } else {
      for (const auto &[key, v] : args.keyword)
        if (key == field)
          arg = &v;
      if (!arg)
        throw EvalError("KeyError: '" + field + "'");
    }
    out += toStr(*arg);
    i = close;
  }
  return out;
}

Value callStrMethod(Interpreter &in, const std::string &s,
                    const std::string &name, CallArgs &args) {
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    ArgBinder a(args, name, {"chars"});
    return Value::string(py::strip(s, optionalStr(a.get(0), "chars"),
                                   name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit") {
    ArgBinder a(args, name, {"sep", "maxsplit"});
    auto sep = optionalStr(a.get(0), "sep");
    if (sep && sep->empty())
      throw EvalError("empty separator");
    auto parts = py::split(s, sep, optionalInt(a.get(1), -1), name == "rsplit");
    in.step(parts.size() / 16);
    return stringList(std::move(parts));
  }
  if (name == "splitlines") {
    ArgBinder a(args, name, {"keepends"});
    return stringList(py::splitlines(s, a.get(0) && truthy(*a.get(0))));
  }
  if (name == "startswith" || name == "endswith") {
    ArgBinder a(args, name, {"prefix"});
    if (!a.get(0))
      throw EvalError(name + "() takes at least 1 argument (0 given)");
    return Value::boolean(affixMatch(s, *a.get(0), name == "startswith"));
  }
  if (name == "upper" || name == "lower" || name == "title" ||
      name == "capitalize" || name == "swapcase") {
    ArgBinder(args, name, {});
    if (name == "upper")
      return Value::string(py::upper(s));
    if (name == "lower")
      return Value::string(py::lower(s));
    if (name == "title")
      return Value::string(py::title(s));
    if (name == "capitalize")
      return Value::string(py::capitalize(s));
  }
  if (name == "replace") {
    ArgBinder a(args, name, {"old", "new", "count"});
    if (!a.get(0) || !a.get(1) || !a.get(0)->isString() ||
        !a.get(1)->isString())
      throw EvalError("replace() needs two string arguments");
    const std::string &from = a.get(0)->str(), &to = a.get(1)->str();
    std::int64_t n = optionalInt(a.get(2), -1);
    std::int64_t hits = from.empty()
                            ? static_cast<std::int64_t>(py::length(s)) + 1
                            : py::count(s, from);
    if (n >= 0 && n < hits)
      hits = n;
    in.checkSize(s.size() + static_cast<std::size_t>(hits) * to.size());
    return Value::string(py::replace(s, from, to, n));
  }
  if (name == "find" || name == "rfind" || name == "index" ||
      name == "rindex" || name == "count") {
    ArgBinder a(args, name, {"sub"});
    if (!a.get(0) || !a.get(0)->isString())
      throw EvalError(name + "() needs a string argument");
    const std::string &sub = a.get(0)->str();
    if (name == "count")
      return Value::integer(py::count(s, sub));
    std::int64_t at = py::find(s, sub, name[0] == 'r');
    if (at < 0 && name.find("index") != std::string::npos)
      throw EvalError("substring not found");
    return Value::integer(at);
  }
  if (name == "join") {
    ArgBinder a(args, name, {"iterable"});
    if (!a.get(0))
      throw EvalError("join() takes exactly one argument (0 given)");
    std::string out;
    bool first = true;
    for (const auto &item : in.iterate(*a.get(0))) {
      if (!item.isString())
        throw EvalError("sequence item: expected str instance, " +
                        typeName(item) + " found");
      if (!first)
        out += s;
      first = false;
      out += item.str();
      in.checkSize(out.size());
    }
    return Value::string(std::move(out));
  }
  if (name == "format") {
    std::string out = strFormat(s, args);
    in.checkSize(out.size());
    return Value::string(std::move(out));
  }
  if (name == "removeprefix" || name == "removesuffix") {
    ArgBinder a(args, name, {"affix"});
    if (!a.get(0) || !a.get(0)->isString())
      throw EvalError(name + "() needs a string argument");
    const std::string &x = a.get(0)->str();
    bool prefix = name == "removeprefix";
    if (!affixMatch(s, *a.get(0), prefix))
      return Value::string(s);
    return Value::string(prefix ? s.substr(x.size())
                                : s.substr(0, s.size() - x.size()));
  }
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal") {
    ArgBinder(args, name, {});
    return Value::boolean(
        allChars(s, [](std::uint32_t c) { return c >= '0' && c <= '9'; }));
  }
  if (name == "isalpha") {
    ArgBinder(args, name, {});
    return Value::boolean(allChars(s, [](std::uint32_t c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0xC0;
    }));
  }
  if (name == "isalnum") {
    ArgBinder(args, name, {});
    return Value::boolean(allChars(s, [](std::uint32_t c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9') || c >= 0xC0;
    }));
  }
  if (name == "isspace") {
    ArgBinder(args, name, {});
    return Value::boolean(allChars(s, py::isSpace));
  }
  if (name == "islower" || name == "isupper") {
    ArgBinder(args, name, {});
    std::string lo = py::lower(s), up = py::upper(s);
    return Value::boolean(name == "islower" ? (lo == s && up != s)
                                            : (up == s && lo != s));
  }
  throw EvalError("'str' object has no attribute '" + name + "'");
}

Value callDictMethod(const Value &self, const std::string &name,
                     CallArgs &args) {
  const Dict &d = self.dictRef();
  if (name == "items" || name == "keys" || name == "values") {
    ArgBinder(args, name, {});
    std::vector<Value> out;
    out.reserve(d.entries.size());
    for (const auto &[k, v] : d.entries) {
      if (name == "items")
        out.push_back(Value::list({k, v}, true));
      else
        out.push_back(name == "keys" ? k : v);
    }
    return Value::list(std::move(out));
  }
  if (name == "get") {
    ArgBinder a(args, name, {"key", "default"});
    if (!a.get(0))
      throw EvalError("get expected at least 1 argument, got 0");
    const Value *v = d.find(*a.get(0));
    return v ? *v : a.get(1, Value::none());
  }
  if (name == "copy") {
    ArgBinder(args, name, {});
    return Value::dict(std::make_shared<Dict>(d));
  }
  throw EvalError("'dict object' has no attribute '" + name + "'");
}

bool isStrMethod(const std::string &n) {
  static const char *const names[] = {
      "strip",        "lstrip",       "rstrip",   "split",     "rsplit",
      "splitlines",   "startswith",   "endswith", "upper",     "lower",
      "title",        "capitalize",   "replace",  "find",      "rfind",
      "index",        "rindex",       "count",    "join",      "format",
      "removeprefix", "removesuffix", "isdigit",  "isnumeric", "isdecimal",
      "isalpha",      "isalnum",      "isspace",  "islower",   "isupper"};
  for (const char *m : names)
    if (n == m)
      return true;
  return false;
}

// C-locale strftime over the fixed "now" of RenderOptions.
std::string strftimeFixed(const std::string &iso, const std::string &fmt) {
  int Y = 1970, M = 1, D = 1, h = 0, m = 0, s = 0;
  if (std::sscanf(iso.c_str(), "%d-%d-%d%*c%d:%d:%d", &Y, &M, &D, &h, &m, &s) <
          3 ||
      M < 1 || M > 12 || D < 1 || D > 31)
    throw EvalError("invalid strftimeNow '" + iso + "'");
  // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
  int y = Y - (M <= 2);
  int era = (y >= 0 ? y : y - 399) / 400;
  int yoe = y - era * 400;
  int doy = (153 * (M + (M > 2 ? -3 : 9)) + 2) / 5 + D - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  long days = static_cast<long>(era) * 146097 + doe - 719468;
  int wday = static_cast<int>(((days % 7) + 11) % 7); // 0 = Sunday
  static const int cum[] = {0,   31,  59,  90,  120, 151,
                            181, 212, 243, 273, 304, 334};
  bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
  int yday = cum[M - 1] + D + (leap && M > 2 ? 1 : 0); // 1-based
  static const char *const wdays[] = {"Sunday",    "Monday",   "Tuesday",
                                      "Wednesday", "Thursday", "Friday",
                                      "Saturday"};
  static const char *const months[] = {
      "January", "February", "March",     "April",   "May",      "June",
      "July",    "August",   "September", "October", "November", "December"};
  std::string out;
  auto num = [&](int v, int width, bool pad, char fill = '0') {
    std::string t = std::to_string(v);
    if (pad)
      while (static_cast<int>(t.size()) < width)
        t.insert(t.begin(), fill);
    out += t;
  };
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%' || i + 1 >= fmt.size()) {
      out += fmt[i];
      continue;
    }
    bool pad = true;
    char c = fmt[++i];
    if (c == '-' && i + 1 < fmt.size()) {
      pad = false;
      c = fmt[++i];
    }
    int h12 = h % 12 == 0 ? 12 : h % 12;
    switch (c) {
    case 'a':
      out += std::string(wdays[wday]).substr(0, 3);
      break;
    case 'A':
      out += wdays[wday];
      break;
    case 'b':
    case 'h':
      out += std::string(months[M - 1]).substr(0, 3);
      break;
    case 'B':
      out += months[M - 1];
      break;
    case 'd':
      num(D, 2, pad);
      break;
    case 'e':
      num(D, 2, pad, ' ');
      break;
    case 'm':
      num(M, 2, pad);
      break;
    case 'y':
      num(Y % 100, 2, pad);
      break;
    case 'Y':
      num(Y, 4, false);
      break;
    case 'H':
      num(h, 2, pad);
      break;
    case 'I':
      num(h12, 2, pad);
      break;
    case 'M':
      num(m, 2, pad);
      break;
    case 'S':
      num(s, 2, pad);
      break;
    case 'j':
      num(yday, 3, pad);
      break;
    case 'p':
      out += h < 12 ? "AM" : "PM";
      break;
    case 'u':
      num(wday == 0 ? 7 : wday, 1, false);
      break;
    case 'w':
      num(wday, 1, false);
      break;
    case 'F':
      out += strftimeFixed(iso, "%Y-%m-%d");
      break;
    case 'D':
    case 'x':
      out += strftimeFixed(iso, "%m/%d/%y");
      break;
    case 'T':
    case 'X':
      out += strftimeFixed(iso, "%H:%M:%S");
      break;
    case 'c':
      out += strftimeFixed(iso, "%a %b %e %H:%M:%S %Y");
      break;
    case 'Z':
    case 'z':
      break;
    case '%':
      out += '%';
      break;
    default:
      out += '%';
      if (!pad)
        out += '-';
      out += c;
    }
  }
  return out;
}

std::shared_ptr<Callable>
builtin(std::string name, std::function<Value(Interpreter &, CallArgs &)> fn) {
  auto c = std::make_shared<Callable>();
  c->name = std::move(name);
  c->fn = std::move(fn);
  return c;
}

} // namespace

std::shared_ptr<Callable> boundMethod(const Value &self,
                                      const std::string &name) {
  if (self.isString() && isStrMethod(name)) {
    std::string s = self.str();
    return builtin(name, [s, name](Interpreter &in, CallArgs &args) {
      return callStrMethod(in, s, name, args);
    });
  }
  if (self.kind() == Value::Kind::Dict &&
      (name == "items" || name == "keys" || name == "values" || name == "get" ||
       name == "copy")) {
    return builtin(name, [self, name](Interpreter &, CallArgs &args) {
      return callDictMethod(self, name, args);
    });
  }
  return nullptr;
}

std::vector<std::pair<std::string, Value>> globalFunctions() {
  std::vector<std::pair<std::string, Value>> g;
  g.emplace_back(
      "range",
      Value::callable(builtin("range", [](Interpreter &in, CallArgs &args) {
        ArgBinder a(args, "range", {"start", "stop", "step"});
        auto intOf = [](const Value *v) {
          if (v->kind() != Value::Kind::Int && v->kind() != Value::Kind::Bool)
            throw EvalError("range() arguments must be integers, not " +
                            typeName(*v));
          return v->asInt();
        };
        if (!a.get(0))
          throw EvalError("range expected at least 1 argument, got 0");
        std::int64_t start = 0, stop, step = 1;
        if (!a.get(1)) {
          stop = intOf(a.get(0));
        } else {
          start = intOf(a.get(0));
          stop = intOf(a.get(1));
          if (a.get(2))
            step = intOf(a.get(2));
        }
        if (step == 0)
          throw EvalError("range() arg 3 must not be zero");
        long double count =
            step > 0
                ? (static_cast<long double>(stop) - start + step - 1) / step
                : (static_cast<long double>(start) - stop - step - 1) / -step;
        if (count < 0)
          count = 0;
        if (count > static_cast<long double>(in.options().maxSteps))
          in.step(in.options().maxSteps + 1);
        auto n = static_cast<std::uint64_t>(count);
        in.step(n);
        in.checkSize(n);
        std::vector<Value> items;
        items.reserve(n);
        for (std::uint64_t i = 0; i < n; ++i)
          items.push_back(
              Value::integer(start + static_cast<std::int64_t>(i) * step));
        return Value::list(std::move(items));
      })));
  g.emplace_back(
      "namespace",
      Value::callable(builtin("namespace", [](Interpreter &in, CallArgs &args) {
        auto ns = in.makeNamespace();
        for (const auto &p : args.positional) {
          if (p.kind() != Value::Kind::Dict)
            throw EvalError(
                "namespace() takes a mapping as positional argument");
          for (const auto &[k, v] : p.dictRef().entries)
            ns->set(toStr(k), v);
        }
        for (auto &[k, v] : args.keyword)
          ns->set(k, v);
        return Value::object(ns);
      })));
  g.emplace_back(
      "dict",
      Value::callable(builtin("dict", [](Interpreter &, CallArgs &args) {
        auto d = std::make_shared<Dict>();
        for (const auto &p : args.positional) {
          if (p.kind() != Value::Kind::Dict)
            throw EvalError("dict() takes a mapping as positional argument");
          for (const auto &[k, v] : p.dictRef().entries)
            d->set(k, v);
        }
        for (auto &[k, v] : args.keyword)
          d->set(Value::string(k), v);
        return Value::dict(std::move(d));
      })));
  g.emplace_back(
      "raise_exception",
      Value::callable(builtin(
          "raise_exception", [](Interpreter &, CallArgs &args) -> Value {
            ArgBinder a(args, "raise_exception", {"message"});
            throw RaisedException(a.get(0) ? toStr(*a.get(0)) : std::string());
          })));
  g.emplace_back("strftime_now",
                 Value::callable(builtin("strftime_now", [](Interpreter &in,
                                                            CallArgs &args) {
                   ArgBinder a(args, "strftime_now", {"format"});
                   if (!a.get(0) || !a.get(0)->isString())
                     throw EvalError("strftime_now() needs a format string");
                   return Value::string(strftimeFixed(in.options().strftimeNow,
                                                      a.get(0)->str()));
                 })));
  g.emplace_back(
      "joiner",
      Value::callable(builtin("joiner", [](Interpreter &, CallArgs &args) {
        ArgBinder a(args, "joiner", {"sep"});
        std::string sep = toStr(a.get(0, Value::string(", ")));
        auto used = std::make_shared<bool>(false);
        return Value::callable(
            builtin("joiner", [sep, used](Interpreter &, CallArgs &) {
              if (!*used) {
                *used = true;
                return Value::string("");
              }
              return Value::string(sep);
            }));
      })));
  return g;
}

} // namespace llmc::tmpl
