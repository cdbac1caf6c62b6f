//===- builtins.h - Filters, tests, methods and globals ---------*- C++ -*-===//
#pragma once

#include "interpreter.h"
#include "value.h"

#include <initializer_list>
#include <string>
#include <string_view>

namespace llmc::tmpl {

// Binds call arguments to parameter names like a Python signature does.
class ArgBinder {
public:
  // Throws EvalError for surplus positional or unknown keyword arguments.
  ArgBinder(const CallArgs &args, std::string_view function,
            std::initializer_list<const char *> params);
  const Value *get(std::size_t index) const; // null when not passed
  Value get(std::size_t index, Value fallback) const;

private:
  std::vector<const Value *> bound_;
};

Value applyFilter(Interpreter &in, const std::string &name, const Value &input,
                  CallArgs &args);
bool applyTest(Interpreter &in, const std::string &name, const Value &v,
               CallArgs &args);

// str and dict methods: null if `name` is not a method of `self`.
std::shared_ptr<Callable> boundMethod(const Value &self,
                                      const std::string &name);

// range, namespace, dict, raise_exception, strftime_now.
std::vector<std::pair<std::string, Value>> globalFunctions();

// Python's `fmt % args`.
std::string percentFormat(const std::string &fmt, const Value &args);

// Python arithmetic on values; EvalError like Python's TypeError.
Value binaryOp(Interpreter &in, const std::string &op, const Value &a,
               const Value &b);
// Python's list/str slicing; undefined for other values.
Value sliceValue(Interpreter &in, const Value &v, const Value &start,
                 const Value &stop, const Value &step);
bool contains(const Value &container, const Value &item);

} // namespace llmc::tmpl
