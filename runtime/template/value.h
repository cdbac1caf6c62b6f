//===- value.h - Runtime values of the template interpreter -----*- C++ -*-===//
//
// Python's object model, cut down to what chat templates touch. Lists, dicts
// and objects are shared by reference like Python's; only namespaces are ever
// mutated (the sandbox forbids list.append and friends).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/template/jinja.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace llmc::tmpl {

class Value;
class Interpreter;

// A failure without a source position yet; the interpreter adds the line and
// column of the expression being evaluated and rethrows it as TemplateError.
class EvalError : public llmc::Error {
public:
  using llmc::Error::Error;
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

struct List {
  std::vector<Value> items;
  bool tuple = false; // only changes how it prints: (1, 2)
};

struct Dict {
  std::vector<std::pair<Value, Value>> entries; // insertion order
  const Value *find(const Value &key) const;
  const Value *find(std::string_view key) const;
  void set(Value key, Value value);
};

// An attribute bag: namespace() objects and the loop variable.
struct Object {
  std::string typeName; // "Namespace", "LoopContext"
  std::vector<std::pair<std::string, Value>> attrs;
  const Value *find(std::string_view name) const;
  void set(const std::string &name, Value value);
};

struct Callable {
  std::string name;
  bool isMacro = false;
  std::function<Value(Interpreter &, CallArgs &)> fn;
};

class Value {
public:
  enum class Kind {
    Undefined,
    None,
    Bool,
    Int,
    Float,
    String,
    List,
    Dict,
    Object,
    Callable
  };

  Value() = default; // undefined
  static Value undefined(std::string name = {});
  static Value none();
  static Value boolean(bool b);
  static Value integer(std::int64_t i);
  /// An int beyond 64 bits, as JSON carried it ("-" and digits): printed
  /// and compared with all its digits, as Python would; arithmetic on it
  /// fails with "does not fit in 64 bits".
  static Value bigInteger(std::string digits);
  static Value real(double d);
  static Value string(std::string s);
  static Value list(std::vector<Value> items, bool tuple = false);
  static Value dict(std::shared_ptr<Dict> d);
  static Value object(std::shared_ptr<Object> o);
  static Value callable(std::shared_ptr<Callable> c);

  Kind kind() const { return kind_; }
  bool isUndefined() const { return kind_ == Kind::Undefined; }
  bool isNone() const { return kind_ == Kind::None; }
  bool isString() const { return kind_ == Kind::String; }
  bool isNumber() const {
    return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool;
  }

  bool asBool() const { return std::get<bool>(v_); }
  bool isBigInt() const { return std::holds_alternative<BigInt>(v_); }
  const std::string &bigDigits() const { return std::get<BigInt>(v_).digits; }
  std::int64_t asInt() const; // Int or Bool; EvalError for a big int
  double asDouble() const;    // Int, Float or Bool
  const std::string &str() const { return std::get<std::string>(v_); }
  // For an undefined value: the name it was looked up by, for messages.
  const std::string &undefinedName() const { return std::get<std::string>(v_); }
  const List &listRef() const { return *std::get<std::shared_ptr<List>>(v_); }
  const Dict &dictRef() const { return *std::get<std::shared_ptr<Dict>>(v_); }
  // The address of a list, dict, object or callable: Python's `is`.
  const void *identity() const;
  const std::shared_ptr<Object> &objectPtr() const {
    return std::get<std::shared_ptr<Object>>(v_);
  }
  const std::shared_ptr<Callable> &callablePtr() const {
    return std::get<std::shared_ptr<Callable>>(v_);
  }

private:
  struct BigInt {
    std::string digits;
  };
  Kind kind_ = Kind::Undefined;
  std::variant<std::monostate, bool, std::int64_t, BigInt, double, std::string,
               std::shared_ptr<List>, std::shared_ptr<Dict>,
               std::shared_ptr<Object>, std::shared_ptr<Callable>>
      v_{std::string()};
};

// Python's truth value; undefined is false.
bool truthy(const Value &v);
// Python ==, with 1 == 1.0 == True and undefined == undefined.
bool equals(const Value &a, const Value &b);
// Python <, for numbers, strings and sequences; EvalError otherwise.
bool lessThan(const Value &a, const Value &b);
// str(v): what {{ v }} prints. Undefined prints as "".
std::string toStr(const Value &v);
// repr(v): how v prints inside a list or dict.
std::string toRepr(const Value &v);
// Caps the text toStr/toRepr/toJson may build on this thread while it is in
// scope: a list of lists shares its parts, so its text can be exponentially
// larger than the memory it takes. Crossing the cap is an EvalError.
class ScopedTextLimit {
public:
  explicit ScopedTextLimit(std::size_t maxBytes);
  ~ScopedTextLimit();
  ScopedTextLimit(const ScopedTextLimit &) = delete;
  ScopedTextLimit &operator=(const ScopedTextLimit &) = delete;
  // Throws EvalError if `size` bytes of text exceed the current cap.
  static void check(std::size_t size);

private:
  std::size_t saved_;
};

// The Python type name, for error messages ("str", "NoneType", ...).
std::string typeName(const Value &v);

} // namespace llmc::tmpl
