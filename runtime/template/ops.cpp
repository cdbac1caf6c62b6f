// Python operators on template values: arithmetic, `in`, slicing and
// printf-style `%` formatting.
#include "builtins.h"
#include "py_string.h"

#include <cmath>
#include <cstdio>

namespace llmc::tmpl {

namespace {

[[noreturn]] void unsupported(const std::string &op, const Value &a,
                              const Value &b) {
  if (a.isUndefined())
    throw EvalError(a.undefinedName());
  if (b.isUndefined())
    throw EvalError(b.undefinedName());
  if (op == "+" && a.isString())
    throw EvalError("can only concatenate str (not \"" + typeName(b) +
                    "\") to str");
  if (op == "+" && a.kind() == Value::Kind::List)
    throw EvalError("can only concatenate " + typeName(a) + " (not \"" +
                    typeName(b) + "\") to " + typeName(a));
  throw EvalError("unsupported operand type(s) for " + op + ": '" +
                  typeName(a) + "' and '" + typeName(b) + "'");
}

bool isIntLike(const Value &v) {
  return v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Bool;
}

Value repeat(Interpreter &in, const Value &seq, std::int64_t times) {
  if (times < 0)
    times = 0;
  if (seq.isString()) {
    const std::string &s = seq.str();
    if (!s.empty() && static_cast<std::uint64_t>(times) >
                          in.options().maxOutputBytes / s.size())
      in.checkSize(in.options().maxOutputBytes + 1);
    std::string out;
    out.reserve(s.size() * static_cast<std::size_t>(times));
    for (std::int64_t i = 0; i < times; ++i)
      out += s;
    return Value::string(std::move(out));
  }
  const List &l = seq.listRef();
  if (!l.items.empty() && static_cast<std::uint64_t>(times) >
                              in.options().maxOutputBytes / l.items.size())
    in.checkSize(in.options().maxOutputBytes + 1);
  std::vector<Value> out;
  out.reserve(l.items.size() * static_cast<std::size_t>(times));
  for (std::int64_t i = 0; i < times; ++i)
    out.insert(out.end(), l.items.begin(), l.items.end());
  return Value::list(std::move(out), l.tuple);
}

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  if (b == 0)
    throw EvalError("integer division or modulo by zero");
  if (a == INT64_MIN && b == -1)
    throw EvalError("integer overflow");
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

std::int64_t floorMod(std::int64_t a, std::int64_t b) {
  if (b == 0)
    throw EvalError("integer division or modulo by zero");
  if (b == -1)
    return 0;
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

Value intPow(std::int64_t base, std::int64_t exp) {
  if (exp < 0) {
    if (base == 0)
      throw EvalError("0.0 cannot be raised to a negative power");
    return Value::real(
        std::pow(static_cast<double>(base), static_cast<double>(exp)));
  }
  std::int64_t result = 1;
  while (exp > 0) {
    if (exp & 1)
      if (__builtin_mul_overflow(result, base, &result))
        throw EvalError("integer overflow");
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base))
      throw EvalError("integer overflow");
  }
  return Value::integer(result);
}

} // namespace

Value binaryOp(Interpreter &in, const std::string &op, const Value &a,
               const Value &b) {
  if (op == "~") {
    std::string s = toStr(a);
    std::string t = toStr(b);
    in.checkSize(s.size() + t.size());
    return Value::string(s + t);
  }
  bool numbers = a.isNumber() && b.isNumber();
  bool ints = numbers && isIntLike(a) && isIntLike(b);
  if (op == "+") {
    if (ints) {
      std::int64_t r;
      if (__builtin_add_overflow(a.asInt(), b.asInt(), &r))
        throw EvalError("integer overflow");
      return Value::integer(r);
    }
    if (numbers)
      return Value::real(a.asDouble() + b.asDouble());
    if (a.isString() && b.isString()) {
      in.checkSize(a.str().size() + b.str().size());
      return Value::string(a.str() + b.str());
    }
    if (a.kind() == Value::Kind::List && b.kind() == Value::Kind::List &&
        a.listRef().tuple == b.listRef().tuple) {
      std::vector<Value> items = a.listRef().items;
      in.checkSize(items.size() + b.listRef().items.size());
      items.insert(items.end(), b.listRef().items.begin(),
                   b.listRef().items.end());
      return Value::list(std::move(items), a.listRef().tuple);
    }
    unsupported(op, a, b);
  }
  if (op == "-") {
    if (ints) {
      std::int64_t r;
      if (__builtin_sub_overflow(a.asInt(), b.asInt(), &r))
        throw EvalError("integer overflow");
      return Value::integer(r);
    }
    if (numbers)
      return Value::real(a.asDouble() - b.asDouble());
    unsupported(op, a, b);
  }
  if (op == "*") {
    if (ints) {
      std::int64_t r;
      if (__builtin_mul_overflow(a.asInt(), b.asInt(), &r))
        throw EvalError("integer overflow");
      return Value::integer(r);
    }
    if (numbers)
      return Value::real(a.asDouble() * b.asDouble());
    bool aSeq = a.isString() || a.kind() == Value::Kind::List;
    bool bSeq = b.isString() || b.kind() == Value::Kind::List;
    if (aSeq && isIntLike(b))
      return repeat(in, a, b.asInt());
    if (bSeq && isIntLike(a))
      return repeat(in, b, a.asInt());
    unsupported(op, a, b);
  }
  if (op == "/") {
    if (!numbers)
      unsupported(op, a, b);
    if (b.asDouble() == 0)
      throw EvalError("division by zero");
    return Value::real(a.asDouble() / b.asDouble());
  }
  if (op == "//") {
    if (ints)
      return Value::integer(floorDiv(a.asInt(), b.asInt()));
    if (!numbers)
      unsupported(op, a, b);
    if (b.asDouble() == 0)
      throw EvalError("float floor division by zero");
    return Value::real(std::floor(a.asDouble() / b.asDouble()));
  }
  if (op == "%") {
    if (a.isString())
      return Value::string(percentFormat(a.str(), b));
    if (ints)
      return Value::integer(floorMod(a.asInt(), b.asInt()));
    if (!numbers)
      unsupported(op, a, b);
    double x = a.asDouble(), y = b.asDouble();
    if (y == 0)
      throw EvalError("float modulo");
    double r = std::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0)))
      r += y;
    return Value::real(r);
  }
  if (op == "**") {
    if (ints)
      return intPow(a.asInt(), b.asInt());
    if (!numbers)
      unsupported(op, a, b);
    if (a.asDouble() == 0 && b.asDouble() < 0)
      throw EvalError("0.0 cannot be raised to a negative power");
    return Value::real(std::pow(a.asDouble(), b.asDouble()));
  }
  throw EvalError("unknown operator '" + op + "'");
}

bool contains(const Value &container, const Value &item) {
  switch (container.kind()) {
  case Value::Kind::Undefined:
    return false;
  case Value::Kind::String:
    if (!item.isString())
      throw EvalError("'in <string>' requires string as left operand, not " +
                      typeName(item));
    return container.str().find(item.str()) != std::string::npos;
  case Value::Kind::List:
    for (const auto &v : container.listRef().items)
      if (equals(v, item))
        return true;
    return false;
  case Value::Kind::Dict:
    return container.dictRef().find(item) != nullptr;
  default:
    throw EvalError("argument of type '" + typeName(container) +
                    "' is not iterable");
  }
}

namespace {

// Python's slice.indices(): clamps start/stop for a sequence of length n.
void sliceIndices(std::int64_t n, const Value &startV, const Value &stopV,
                  const Value &stepV, std::int64_t &start, std::int64_t &stop,
                  std::int64_t &step) {
  auto toIndex = [](const Value &v) {
    if (v.isNone())
      return std::optional<std::int64_t>();
    if (v.kind() != Value::Kind::Int && v.kind() != Value::Kind::Bool)
      throw EvalError("slice indices must be integers or None");
    return std::optional<std::int64_t>(v.asInt());
  };
  auto st = toIndex(stepV);
  step = st ? *st : 1;
  if (step == 0)
    throw EvalError("slice step cannot be zero");
  if (step == INT64_MIN)
    step = -INT64_MAX;
  auto clamp = [&](std::optional<std::int64_t> v, bool isStart) {
    if (!v)
      return step > 0 ? (isStart ? 0 : n) : (isStart ? n - 1 : -1);
    std::int64_t i = *v;
    if (i < 0) {
      i = i < -n ? -1 : i + n;
      if (i < 0)
        i = step > 0 ? 0 : -1;
    } else if (i >= n) {
      i = step > 0 ? n : n - 1;
    }
    return i;
  };
  start = clamp(toIndex(startV), true);
  stop = clamp(toIndex(stopV), false);
}

} // namespace

Value sliceValue(Interpreter &in, const Value &v, const Value &startV,
                 const Value &stopV, const Value &stepV) {
  if (v.isUndefined())
    throw EvalError(v.undefinedName());
  if (v.kind() != Value::Kind::List && !v.isString())
    return Value::undefined(typeName(v).insert(0, "'") +
                            "' object is not subscriptable");
  std::vector<std::size_t> offsets;
  std::int64_t n;
  if (v.isString()) {
    offsets = py::codePointOffsets(v.str());
    n = static_cast<std::int64_t>(offsets.size()) - 1;
  } else {
    n = static_cast<std::int64_t>(v.listRef().items.size());
  }
  std::int64_t start, stop, step;
  sliceIndices(n, startV, stopV, stepV, start, stop, step);
  std::vector<std::int64_t> picked;
  if (step > 0)
    for (std::int64_t i = start; i < stop; i += step)
      picked.push_back(i);
  else
    for (std::int64_t i = start; i > stop; i += step)
      picked.push_back(i);
  in.step(picked.size() / 64);
  if (v.isString()) {
    std::string out;
    const std::string &s = v.str();
    for (std::int64_t i : picked) {
      auto k = static_cast<std::size_t>(i);
      out.append(s, offsets[k], offsets[k + 1] - offsets[k]);
    }
    return Value::string(std::move(out));
  }
  std::vector<Value> out;
  out.reserve(picked.size());
  for (std::int64_t i : picked)
    out.push_back(v.listRef().items[static_cast<std::size_t>(i)]);
  return Value::list(std::move(out), v.listRef().tuple);
}

std::string percentFormat(const std::string &fmt, const Value &args) {
  std::vector<Value> items;
  const Dict *mapping = nullptr;
  if (args.kind() == Value::Kind::List && args.listRef().tuple)
    items = args.listRef().items;
  else if (args.kind() == Value::Kind::Dict)
    mapping = &args.dictRef();
  else
    items.push_back(args);
  std::size_t next = 0;
  std::string out;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (++i >= fmt.size())
      throw EvalError("incomplete format");
    const Value *arg = nullptr;
    if (fmt[i] == '(') {
      std::size_t close = fmt.find(')', i);
      if (close == std::string::npos || !mapping)
        throw EvalError("format requires a mapping");
      arg = mapping->find(std::string_view(fmt).substr(i + 1, close - i - 1));
      if (!arg)
        throw EvalError("KeyError in format");
      i = close + 1;
    }
    std::string spec = "%";
    while (i < fmt.size() &&
           std::string_view("-+ #0").find(fmt[i]) != std::string_view::npos)
      spec += fmt[i++];
    while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9' && spec.size() < 8)
      spec += fmt[i++];
    if (i < fmt.size() && fmt[i] == '.') {
      spec += fmt[i++];
      while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9' &&
             spec.size() < 12)
        spec += fmt[i++];
    }
    if (i >= fmt.size())
      throw EvalError("incomplete format");
    char conv = fmt[i];
    if (conv == '%') {
      out += '%';
      continue;
    }
    if (!arg) {
      if (mapping) {
        arg = &args;
      } else {
        if (next >= items.size())
          throw EvalError("not enough arguments for format string");
        arg = &items[next++];
      }
    }
    char buf[512];
    switch (conv) {
    case 's':
    case 'r': {
      std::string s = conv == 's' ? toStr(*arg) : toRepr(*arg);
      // Width applies in code points; emulate it on the converted string.
      std::string padSpec = spec;
      int width = 0;
      bool left = padSpec.find('-') != std::string::npos;
      std::size_t d = padSpec.find_first_of("123456789");
      std::size_t dot = padSpec.find('.');
      if (d != std::string::npos && (dot == std::string::npos || d < dot))
        width = std::atoi(padSpec.c_str() + d);
      if (dot != std::string::npos) {
        auto prec =
            static_cast<std::size_t>(std::atoi(padSpec.c_str() + dot + 1));
        auto offs = py::codePointOffsets(s);
        if (prec + 1 < offs.size())
          s.resize(offs[prec]);
      }
      auto len = static_cast<int>(py::length(s));
      std::string pad(width > len ? static_cast<std::size_t>(width - len) : 0,
                      ' ');
      out += left ? s + pad : pad + s;
      break;
    }
    case 'd':
    case 'i':
    case 'x':
    case 'X':
    case 'o':
    case 'c': {
      if (!arg->isNumber())
        throw EvalError("%" + std::string(1, conv) +
                        " format: a real number is required, not " +
                        typeName(*arg));
      auto v = static_cast<long long>(arg->kind() == Value::Kind::Float
                                          ? std::trunc(arg->asDouble())
                                          : static_cast<double>(arg->asInt()));
      if (arg->kind() != Value::Kind::Float)
        v = arg->asInt();
      if (conv == 'c') {
        py::appendUtf8(out, static_cast<std::uint32_t>(v));
        break;
      }
      std::snprintf(buf, sizeof buf,
                    (spec + "ll" + (conv == 'i' ? 'd' : conv)).c_str(), v);
      out += buf;
      break;
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
      if (!arg->isNumber())
        throw EvalError("must be real number, not " + typeName(*arg));
      std::snprintf(buf, sizeof buf, (spec + conv).c_str(), arg->asDouble());
      out += buf;
      break;
    default:
      throw EvalError(std::string("unsupported format character '") + conv +
                      "'");
    }
  }
  if (!mapping && next < items.size())
    throw EvalError("not all arguments converted during string formatting");
  return out;
}

} // namespace llmc::tmpl
