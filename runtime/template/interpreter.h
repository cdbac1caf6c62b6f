//===- interpreter.h - Renders a parsed template ----------------*- C++ -*-===//
//
// One Interpreter per render call: it owns the variable scopes, the output
// and the resource budget. Filters, tests and methods (builtins.h) call back
// into it to look up attributes, iterate and apply each other.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ast.h"
#include "value.h"

#include "llmc/template/jinja.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace llmc::tmpl {

class Interpreter {
public:
  Interpreter(const nlohmann::ordered_json &context,
              const RenderOptions &options);
  // Empties every namespace and macro closure created during the render:
  // both can form reference cycles that shared_ptr would leak.
  ~Interpreter();
  Interpreter(const Interpreter &) = delete;
  Interpreter &operator=(const Interpreter &) = delete;

  std::string run(const Program &program);

  // Python-style lookups as Jinja does them: obj.name tries the attribute
  // (methods) first, obj[key] the item first. Missing -> undefined; any
  // lookup on undefined is an EvalError.
  Value getAttr(const Value &obj, const std::string &name);
  Value getItem(const Value &obj, const Value &key);
  Value call(const Value &callee, CallArgs &args);
  // The items a for loop over v visits; EvalError if v is not iterable.
  std::vector<Value> iterate(const Value &v);
  Value applyFilter(const std::string &name, const Value &input,
                    CallArgs &args);
  bool applyTest(const std::string &name, const Value &v, CallArgs &args);

  // Budget checks; both throw EvalError when a limit is crossed.
  void step(std::uint64_t n = 1);
  void checkSize(std::size_t size) const;
  const RenderOptions &options() const { return options_; }

  std::shared_ptr<Object> makeNamespace();

private:
  struct Scope;
  using ScopePtr = std::shared_ptr<Scope>;
  enum class Flow { Normal, Break, Continue };
  struct DepthGuard;

  Flow render(const Body &body, const ScopePtr &scope, std::string &out);
  Flow renderStmt(const Stmt &s, const ScopePtr &scope, std::string &out);
  void renderFor(const Stmt &s, const ScopePtr &scope, std::string &out);
  void append(std::string &out, std::string_view text) const;
  void assign(const Target &t, Value v, const ScopePtr &scope);
  Value makeMacro(const std::string &name, const std::vector<Param> &params,
                  const Body &body, const ScopePtr &closure);
  Value callMacro(const std::vector<Param> &params, const Body &body,
                  const ScopePtr &closure, CallArgs &args);

  Value eval(const Expr &e, const ScopePtr &scope);
  Value evalInner(const Expr &e, const ScopePtr &scope);
  Value evalCall(const Expr &e, const ScopePtr &scope, Value caller);
  CallArgs evalArgs(const Expr &e, const ScopePtr &scope);
  Value lookup(const std::string &name, const ScopePtr &scope) const;

  const RenderOptions &options_;
  ScopePtr globals_;
  ScopePtr root_;
  int depth_ = 0;
  std::uint64_t steps_ = 0;
  Value blockBody_;
  std::vector<std::shared_ptr<Object>> namespaces_;
  std::vector<std::shared_ptr<Callable>> closures_;
};

} // namespace llmc::tmpl
