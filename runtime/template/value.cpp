#include "value.h"

#include "py_string.h"

#include <cstdlib>

namespace llmc::tmpl {

const Value *Dict::find(const Value &key) const {
  for (const auto &[k, v] : entries)
    if (equals(k, key))
      return &v;
  return nullptr;
}

const Value *Dict::find(std::string_view key) const {
  for (const auto &[k, v] : entries)
    if (k.isString() && k.str() == key)
      return &v;
  return nullptr;
}

void Dict::set(Value key, Value value) {
  for (auto &[k, v] : entries)
    if (equals(k, key)) {
      v = std::move(value);
      return;
    }
  entries.emplace_back(std::move(key), std::move(value));
}

const Value *Object::find(std::string_view name) const {
  for (const auto &[k, v] : attrs)
    if (k == name)
      return &v;
  return nullptr;
}

void Object::set(const std::string &name, Value value) {
  for (auto &[k, v] : attrs)
    if (k == name) {
      v = std::move(value);
      return;
    }
  attrs.emplace_back(name, std::move(value));
}

Value Value::undefined(std::string name) {
  Value v;
  v.v_ = std::move(name);
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::None;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::Bool;
  v.v_ = b;
  return v;
}

Value Value::integer(std::int64_t i) {
  Value v;
  v.kind_ = Kind::Int;
  v.v_ = i;
  return v;
}

Value Value::bigInteger(std::string digits) {
  Value v;
  v.kind_ = Kind::Int;
  v.v_ = BigInt{std::move(digits)};
  return v;
}

Value Value::real(double d) {
  Value v;
  v.kind_ = Kind::Float;
  v.v_ = d;
  return v;
}

Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::String;
  v.v_ = std::move(s);
  return v;
}

Value Value::list(std::vector<Value> items, bool tuple) {
  Value v;
  v.kind_ = Kind::List;
  auto l = std::make_shared<List>();
  l->items = std::move(items);
  l->tuple = tuple;
  v.v_ = std::move(l);
  return v;
}

Value Value::dict(std::shared_ptr<Dict> d) {
  Value v;
  v.kind_ = Kind::Dict;
  v.v_ = std::move(d);
  return v;
}

Value Value::object(std::shared_ptr<Object> o) {
  Value v;
  v.kind_ = Kind::Object;
  v.v_ = std::move(o);
  return v;
}

Value Value::callable(std::shared_ptr<Callable> c) {
  Value v;
  v.kind_ = Kind::Callable;
  v.v_ = std::move(c);
  return v;
}

std::int64_t Value::asInt() const {
  if (kind_ == Kind::Bool)
    return std::get<bool>(v_) ? 1 : 0;
  if (isBigInt())
    throw EvalError("integer " + bigDigits() +
                    " does not fit in 64 bits: templates compute with 64-bit "
                    "integers (printing and comparing it work)");
  return std::get<std::int64_t>(v_);
}

double Value::asDouble() const {
  if (kind_ == Kind::Float)
    return std::get<double>(v_);
  if (isBigInt())
    return std::strtod(bigDigits().c_str(), nullptr);
  return static_cast<double>(asInt());
}

const void *Value::identity() const {
  return std::visit(
      [](const auto &x) -> const void * {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::shared_ptr<List>> ||
                      std::is_same_v<T, std::shared_ptr<Dict>> ||
                      std::is_same_v<T, std::shared_ptr<Object>> ||
                      std::is_same_v<T, std::shared_ptr<Callable>>)
          return x.get();
        else
          return nullptr;
      },
      v_);
}

bool truthy(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Undefined:
  case Value::Kind::None:
    return false;
  case Value::Kind::Bool:
    return v.asBool();
  case Value::Kind::Int:
    return v.isBigInt() || v.asInt() != 0; // a big int is never 0
  case Value::Kind::Float:
    return v.asDouble() != 0.0;
  case Value::Kind::String:
    return !v.str().empty();
  case Value::Kind::List:
    return !v.listRef().items.empty();
  case Value::Kind::Dict:
    return !v.dictRef().entries.empty();
  default:
    return true;
  }
}

bool equals(const Value &a, const Value &b) {
  using K = Value::Kind;
  if (a.isNumber() && b.isNumber()) {
    if (a.kind() == K::Float || b.kind() == K::Float)
      return a.asDouble() == b.asDouble();
    if (a.isBigInt() || b.isBigInt()) // never one that fits in 64 bits
      return a.isBigInt() && b.isBigInt() && a.bigDigits() == b.bigDigits();
    return a.asInt() == b.asInt();
  }
  if (a.kind() != b.kind())
    return false;
  switch (a.kind()) {
  case K::Undefined:
  case K::None:
    return true;
  case K::String:
    return a.str() == b.str();
  case K::List: {
    const auto &x = a.listRef(), &y = b.listRef();
    if (x.tuple != y.tuple || x.items.size() != y.items.size())
      return false;
    for (std::size_t i = 0; i < x.items.size(); ++i)
      if (!equals(x.items[i], y.items[i]))
        return false;
    return true;
  }
  case K::Dict: {
    const auto &x = a.dictRef(), &y = b.dictRef();
    if (x.entries.size() != y.entries.size())
      return false;
    for (const auto &[k, v] : x.entries) {
      const Value *other = y.find(k);
      if (!other || !equals(v, *other))
        return false;
    }
    return true;
  }
  case K::Object:
    return a.objectPtr() == b.objectPtr();
  case K::Callable:
    return a.callablePtr() == b.callablePtr();
  default:
    return false;
  }
}

namespace {
// Exact order of two ints, either of them big: by sign, then by the
// number of digits, then by the digits.
int compareIntegers(const Value &a, const Value &b) {
  auto digits = [](const Value &v) {
    return v.isBigInt() ? v.bigDigits() : std::to_string(v.asInt());
  };
  const std::string x = digits(a), y = digits(b);
  const bool nx = x[0] == '-', ny = y[0] == '-';
  if (nx != ny)
    return nx ? -1 : 1;
  int c = x.size() != y.size() ? (x.size() < y.size() ? -1 : 1)
          : x.compare(y) < 0   ? -1
          : x == y             ? 0
                               : 1;
  return nx ? -c : c;
}
} // namespace

bool lessThan(const Value &a, const Value &b) {
  using K = Value::Kind;
  if (a.isNumber() && b.isNumber()) {
    if (a.kind() == K::Float || b.kind() == K::Float)
      return a.asDouble() < b.asDouble();
    if (a.isBigInt() || b.isBigInt())
      return compareIntegers(a, b) < 0;
    return a.asInt() < b.asInt();
  }
  if (a.isString() && b.isString())
    return a.str() < b.str();
  if (a.kind() == K::List && b.kind() == K::List &&
      a.listRef().tuple == b.listRef().tuple) {
    const auto &x = a.listRef().items, &y = b.listRef().items;
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (equals(x[i], y[i]))
        continue;
      return lessThan(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  throw EvalError("'<' not supported between instances of '" + typeName(a) +
                  "' and '" + typeName(b) + "'");
}

std::string typeName(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Undefined:
    return "Undefined";
  case Value::Kind::None:
    return "NoneType";
  case Value::Kind::Bool:
    return "bool";
  case Value::Kind::Int:
    return "int";
  case Value::Kind::Float:
    return "float";
  case Value::Kind::String:
    return "str";
  case Value::Kind::List:
    return v.listRef().tuple ? "tuple" : "list";
  case Value::Kind::Dict:
    return "dict";
  case Value::Kind::Object:
    return v.objectPtr()->typeName;
  case Value::Kind::Callable:
    return v.callablePtr()->isMacro ? "Macro" : "function";
  }
  return "object";
}

namespace {
thread_local std::size_t textLimit = SIZE_MAX;
} // namespace

ScopedTextLimit::ScopedTextLimit(std::size_t maxBytes) : saved_(textLimit) {
  textLimit = maxBytes;
}

ScopedTextLimit::~ScopedTextLimit() { textLimit = saved_; }

void ScopedTextLimit::check(std::size_t size) {
  if (size > textLimit)
    throw EvalError("template output or value exceeds " +
                    std::to_string(textLimit) + " bytes");
}

namespace {

// Namespaces can contain themselves; Python fails such a repr with
// RecursionError, and so do we instead of overflowing the stack.
constexpr int kMaxReprDepth = 200;

void appendRepr(std::string &out, const Value &v, int depth);

void appendStr(std::string &out, const Value &v, int depth) {
  if (depth > kMaxReprDepth)
    throw EvalError("maximum recursion depth exceeded while printing a value");
  ScopedTextLimit::check(out.size());
  switch (v.kind()) {
  case Value::Kind::Undefined:
    return;
  case Value::Kind::None:
    out += "None";
    return;
  case Value::Kind::Bool:
    out += v.asBool() ? "True" : "False";
    return;
  case Value::Kind::Int:
    out += v.isBigInt() ? v.bigDigits() : std::to_string(v.asInt());
    return;
  case Value::Kind::Float:
    out += py::formatFloat(v.asDouble());
    return;
  case Value::Kind::String:
    out += v.str();
    return;
  case Value::Kind::List: {
    const auto &l = v.listRef();
    out += l.tuple ? '(' : '[';
    for (std::size_t i = 0; i < l.items.size(); ++i) {
      if (i)
        out += ", ";
      appendRepr(out, l.items[i], depth + 1);
    }
    if (l.tuple && l.items.size() == 1)
      out += ',';
    out += l.tuple ? ')' : ']';
    return;
  }
  case Value::Kind::Dict: {
    out += '{';
    bool first = true;
    for (const auto &[k, val] : v.dictRef().entries) {
      if (!first)
        out += ", ";
      first = false;
      appendRepr(out, k, depth + 1);
      out += ": ";
      appendRepr(out, val, depth + 1);
    }
    out += '}';
    return;
  }
  case Value::Kind::Object: {
    const auto &o = *v.objectPtr();
    out += "<" + o.typeName;
    if (o.typeName == "Namespace") {
      out += " {";
      bool first = true;
      for (const auto &[k, val] : o.attrs) {
        if (!first)
          out += ", ";
        first = false;
        out += py::repr(k) + ": ";
        appendRepr(out, val, depth + 1);
      }
      out += '}';
    }
    out += '>';
    return;
  }
  case Value::Kind::Callable: {
    const auto &c = *v.callablePtr();
    if (c.isMacro)
      out += "<Macro " + py::repr(c.name) + ">";
    else
      out += "<built-in function " + c.name + ">";
    return;
  }
  }
}

void appendRepr(std::string &out, const Value &v, int depth) {
  if (v.isString())
    out += py::repr(v.str());
  else if (v.isUndefined())
    out += "Undefined";
  else
    appendStr(out, v, depth);
}

} // namespace

std::string toStr(const Value &v) {
  if (v.isString())
    return v.str();
  std::string out;
  appendStr(out, v, 0);
  return out;
}

std::string toRepr(const Value &v) {
  std::string out;
  appendRepr(out, v, 0);
  return out;
}

} // namespace llmc::tmpl
