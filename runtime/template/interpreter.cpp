#include "interpreter.h"

#include "builtins.h"
#include "json_format.h"
#include "py_string.h"

#include <unordered_map>

namespace llmc::tmpl {

struct Interpreter::Scope {
  ScopePtr parent;
  std::unordered_map<std::string, Value> vars;
};

struct Interpreter::DepthGuard {
  explicit DepthGuard(Interpreter &in) : in(in) {
    if (++in.depth_ > in.options_.maxDepth) {
      --in.depth_;
      throw EvalError("maximum recursion depth exceeded (limit " +
                      std::to_string(in.options_.maxDepth) + ")");
    }
  }
  ~DepthGuard() { --in.depth_; }
  Interpreter &in;
};

Interpreter::Interpreter(const nlohmann::ordered_json &context,
                         const RenderOptions &options)
    : options_(options), globals_(std::make_shared<Scope>()),
      root_(std::make_shared<Scope>()) {
  for (auto &[name, fn] : globalFunctions())
    globals_->vars[name] = std::move(fn);
  root_->parent = globals_;
  if (context.is_null())
    return; // no variables
  if (!context.is_object())
    throw TemplateError("chat template context must be a JSON object");
  for (auto it = context.begin(); it != context.end(); ++it)
    root_->vars[it.key()] = fromJson(it.value());
}

Interpreter::~Interpreter() {
  for (auto &ns : namespaces_)
    ns->attrs.clear();
  for (auto &c : closures_)
    c->fn = nullptr;
}

std::string Interpreter::run(const Program &program) {
  ScopedTextLimit limit(options_.maxOutputBytes);
  std::string out;
  try {
    render(program.body, root_, out);
  } catch (const EvalError &e) {
    // Only reached for errors outside any statement, which do not exist;
    // kept so that no EvalError escapes as a bare llmc::Error.
    throw TemplateError(std::string("chat template: ") + e.what());
  }
  return out;
}

void Interpreter::step(std::uint64_t n) {
  steps_ += n;
  if (steps_ > options_.maxSteps)
    throw EvalError("template exceeded its step limit (" +
                    std::to_string(options_.maxSteps) +
                    " loop iterations, macro calls and filter items)");
}

void Interpreter::checkSize(std::size_t size) const {
  if (size > options_.maxOutputBytes)
    throw EvalError("template output or value exceeds " +
                    std::to_string(options_.maxOutputBytes) + " bytes");
}

std::shared_ptr<Object> Interpreter::makeNamespace() {
  auto ns = std::make_shared<Object>();
  ns->typeName = "Namespace";
  namespaces_.push_back(ns);
  return ns;
}

void Interpreter::append(std::string &out, std::string_view text) const {
  checkSize(out.size() + text.size());
  out.append(text);
}

Interpreter::Flow Interpreter::render(const Body &body, const ScopePtr &scope,
                                      std::string &out) {
  DepthGuard guard(*this);
  for (const auto &s : body) {
    Flow f = renderStmt(*s, scope, out);
    if (f != Flow::Normal)
      return f;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::renderStmt(const Stmt &s, const ScopePtr &scope,
                                          std::string &out) {
  try {
    switch (s.kind) {
    case Stmt::Kind::Text:
      append(out, s.text);
      return Flow::Normal;
    case Stmt::Kind::Output: {
      Value v = eval(*s.exprs[0], scope);
      if (v.isString())
        append(out, v.str());
      else
        append(out, toStr(v));
      return Flow::Normal;
    }
    case Stmt::Kind::If:
      for (std::size_t i = 0; i < s.exprs.size(); ++i)
        if (truthy(eval(*s.exprs[i], scope)))
          return render(s.bodies[i], scope, out);
      if (s.bodies.size() > s.exprs.size())
        return render(s.bodies.back(), scope, out);
      return Flow::Normal;
    case Stmt::Kind::For:
      renderFor(s, scope, out);
      return Flow::Normal;
    case Stmt::Kind::Set:
      assign(s.target, eval(*s.exprs[0], scope), scope);
      return Flow::Normal;
    case Stmt::Kind::SetBlock:
    case Stmt::Kind::FilterBlock: {
      std::string body;
      render(s.bodies[0], scope, body);
      Value v = Value::string(std::move(body));
      if (!s.exprs.empty()) {
        Value saved = std::exchange(blockBody_, std::move(v));
        try {
          v = eval(*s.exprs[0], scope);
        } catch (...) {
          blockBody_ = std::move(saved);
          throw;
        }
        blockBody_ = std::move(saved);
      }
      if (s.kind == Stmt::Kind::SetBlock)
        assign(s.target, std::move(v), scope);
      else
        append(out, toStr(v));
      return Flow::Normal;
    }
    case Stmt::Kind::Macro:
      scope->vars[s.name] = makeMacro(s.name, s.params, s.bodies[0], scope);
      return Flow::Normal;
    case Stmt::Kind::CallBlock: {
      Value caller = makeMacro("caller", s.params, s.bodies[0], scope);
      Value v = evalCall(*s.exprs[0], scope, std::move(caller));
      append(out, toStr(v));
      return Flow::Normal;
    }
    case Stmt::Kind::With: {
      auto inner = std::make_shared<Scope>();
      inner->parent = scope;
      for (std::size_t i = 0; i < s.exprs.size(); ++i)
        assign(s.targets[i], eval(*s.exprs[i], scope), inner);
      return render(s.bodies[0], inner, out);
    }
    case Stmt::Kind::Scope:
      return render(s.bodies[0], scope, out);
    case Stmt::Kind::Break:
      return Flow::Break;
    case Stmt::Kind::Continue:
      return Flow::Continue;
    }
  } catch (const EvalError &e) {
    failAt(s.pos, e.what());
  }
  return Flow::Normal;
}

void Interpreter::renderFor(const Stmt &s, const ScopePtr &scope,
                            std::string &out) {
  std::vector<Value> items = iterate(eval(*s.exprs[0], scope));
  auto bindTarget = [&](const Value &item) {
    auto iterScope = std::make_shared<Scope>();
    iterScope->parent = scope;
    assign(s.target, item, iterScope);
    return iterScope;
  };
  if (s.exprs.size() > 1) {
    std::vector<Value> kept;
    for (auto &item : items) {
      step();
      if (truthy(eval(*s.exprs[1], bindTarget(item))))
        kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    if (s.bodies.size() > 1) {
      auto elseScope = std::make_shared<Scope>();
      elseScope->parent = scope;
      render(s.bodies[1], elseScope, out);
    }
    return;
  }
  // loop.cycle and loop.changed need per-loop state shared by iterations.
  auto index = std::make_shared<std::int64_t>(0);
  auto cycle = std::make_shared<Callable>();
  cycle->name = "cycle";
  cycle->fn = [index](Interpreter &, CallArgs &args) {
    if (args.positional.empty())
      throw EvalError("no items for cycling given");
    return args
        .positional[static_cast<std::size_t>(*index) % args.positional.size()];
  };
  auto lastChanged = std::make_shared<std::vector<Value>>();
  auto hasChanged = std::make_shared<bool>(false);
  auto changed = std::make_shared<Callable>();
  changed->name = "changed";
  changed->fn = [lastChanged, hasChanged](Interpreter &, CallArgs &args) {
    bool same = *hasChanged && lastChanged->size() == args.positional.size();
    for (std::size_t i = 0; same && i < args.positional.size(); ++i)
      same = equals((*lastChanged)[i], args.positional[i]);
    *hasChanged = true;
    *lastChanged = args.positional;
    return Value::boolean(!same);
  };
  const auto n = static_cast<std::int64_t>(items.size());
  for (std::int64_t i = 0; i < n; ++i) {
    step();
    *index = i;
    ScopePtr iterScope = bindTarget(items[static_cast<std::size_t>(i)]);
    auto loop = std::make_shared<Object>();
    loop->typeName = "LoopContext";
    loop->attrs = {
        {"index", Value::integer(i + 1)},
        {"index0", Value::integer(i)},
        {"revindex", Value::integer(n - i)},
        {"revindex0", Value::integer(n - i - 1)},
        {"first", Value::boolean(i == 0)},
        {"last", Value::boolean(i == n - 1)},
        {"length", Value::integer(n)},
        {"depth", Value::integer(1)},
        {"depth0", Value::integer(0)},
        {"previtem", i > 0 ? items[static_cast<std::size_t>(i - 1)]
                           : Value::undefined("there is no previous item")},
        {"nextitem", i + 1 < n ? items[static_cast<std::size_t>(i + 1)]
                               : Value::undefined("there is no next item")},
        {"cycle", Value::callable(cycle)},
        {"changed", Value::callable(changed)},
    };
    iterScope->vars["loop"] = Value::object(std::move(loop));
    if (render(s.bodies[0], iterScope, out) == Flow::Break)
      break;
  }
}

void Interpreter::assign(const Target &t, Value v, const ScopePtr &scope) {
  if (!t.attr.empty()) {
    Value ns = lookup(t.names[0], scope);
    if (ns.kind() != Value::Kind::Object ||
        ns.objectPtr()->typeName != "Namespace")
      throw EvalError("cannot assign attribute on non-namespace object");
    ns.objectPtr()->set(t.attr, std::move(v));
    return;
  }
  if (!t.unpack) {
    scope->vars[t.names[0]] = std::move(v);
    return;
  }
  std::vector<Value> items = iterate(v);
  if (items.size() != t.names.size())
    throw EvalError(items.size() > t.names.size()
                        ? "too many values to unpack (expected " +
                              std::to_string(t.names.size()) + ")"
                        : "not enough values to unpack (expected " +
                              std::to_string(t.names.size()) + ", got " +
                              std::to_string(items.size()) + ")");
  for (std::size_t i = 0; i < items.size(); ++i)
    scope->vars[t.names[i]] = std::move(items[i]);
}

Value Interpreter::makeMacro(const std::string &name,
                             const std::vector<Param> &params, const Body &body,
                             const ScopePtr &closure) {
  auto c = std::make_shared<Callable>();
  c->name = name;
  c->isMacro = true;
  const auto *paramsPtr = &params;
  const auto *bodyPtr = &body;
  c->fn = [this, paramsPtr, bodyPtr, closure](Interpreter &, CallArgs &args) {
    return callMacro(*paramsPtr, *bodyPtr, closure, args);
  };
  closures_.push_back(c);
  return Value::callable(std::move(c));
}

Value Interpreter::callMacro(const std::vector<Param> &params, const Body &body,
                             const ScopePtr &closure, CallArgs &args) {
  DepthGuard guard(*this);
  step();
  auto scope = std::make_shared<Scope>();
  scope->parent = closure;
  std::vector<bool> bound(params.size(), false);
  std::vector<Value> varargs;
  for (std::size_t i = 0; i < args.positional.size(); ++i) {
    if (i < params.size()) {
      scope->vars[params[i].name] = std::move(args.positional[i]);
      bound[i] = true;
    } else {
      varargs.push_back(std::move(args.positional[i]));
    }
  }
  auto kwargs = std::make_shared<Dict>();
  for (auto &[key, value] : args.keyword) {
    bool matched = false;
    for (std::size_t i = 0; i < params.size(); ++i)
      if (params[i].name == key) {
        if (bound[i])
          throw EvalError("macro got multiple values for argument '" + key +
                          "'");
        scope->vars[key] = std::move(value);
        bound[i] = matched = true;
        break;
      }
    if (matched)
      continue;
    if (key == "caller")
      scope->vars["caller"] = std::move(value);
    else
      kwargs->entries.emplace_back(Value::string(key), std::move(value));
  }
  for (std::size_t i = 0; i < params.size(); ++i)
    if (!bound[i])
      scope->vars[params[i].name] =
          params[i].defaultValue
              ? eval(*params[i].defaultValue, scope)
              : Value::undefined("'" + params[i].name + "' is undefined");
  scope->vars["varargs"] = Value::list(std::move(varargs), true);
  scope->vars["kwargs"] = Value::dict(std::move(kwargs));
  std::string out;
  render(body, scope, out);
  return Value::string(std::move(out));
}

Value Interpreter::lookup(const std::string &name,
                          const ScopePtr &scope) const {
  for (const Scope *s = scope.get(); s; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it != s->vars.end())
      return it->second;
  }
  return Value::undefined("'" + name + "' is undefined");
}

Value Interpreter::eval(const Expr &e, const ScopePtr &scope) {
  try {
    DepthGuard guard(*this);
    return evalInner(e, scope);
  } catch (const EvalError &err) {
    failAt(e.pos, err.what());
  }
}

CallArgs Interpreter::evalArgs(const Expr &e, const ScopePtr &scope) {
  CallArgs args;
  for (std::size_t i = 1; i < e.args.size(); ++i)
    args.positional.push_back(eval(*e.args[i], scope));
  for (const auto &[key, expr] : e.kwargs)
    args.keyword.emplace_back(key, eval(*expr, scope));
  return args;
}

Value Interpreter::evalCall(const Expr &e, const ScopePtr &scope,
                            Value caller) {
  Value callee = eval(*e.args[0], scope);
  CallArgs args = evalArgs(e, scope);
  if (!caller.isUndefined())
    args.keyword.emplace_back("caller", std::move(caller));
  return call(callee, args);
}

Value Interpreter::evalInner(const Expr &e, const ScopePtr &scope) {
  switch (e.kind) {
  case Expr::Kind::Literal:
    return e.value;
  case Expr::Kind::Name:
    return lookup(e.name, scope);
  case Expr::Kind::List:
  case Expr::Kind::Tuple: {
    std::vector<Value> items;
    items.reserve(e.args.size());
    for (const auto &a : e.args)
      items.push_back(eval(*a, scope));
    return Value::list(std::move(items), e.kind == Expr::Kind::Tuple);
  }
  case Expr::Kind::Dict: {
    auto d = std::make_shared<Dict>();
    for (std::size_t i = 0; i + 1 < e.args.size(); i += 2) {
      Value key = eval(*e.args[i], scope);
      if (key.kind() == Value::Kind::List || key.kind() == Value::Kind::Dict ||
          key.isUndefined())
        throw EvalError("unhashable type: '" + typeName(key) + "'");
      d->set(std::move(key), eval(*e.args[i + 1], scope));
    }
    return Value::dict(std::move(d));
  }
  case Expr::Kind::GetAttr:
    return getAttr(eval(*e.args[0], scope), e.name);
  case Expr::Kind::GetItem: {
    Value obj = eval(*e.args[0], scope);
    return getItem(obj, eval(*e.args[1], scope));
  }
  case Expr::Kind::Slice: {
    Value obj = eval(*e.args[0], scope);
    auto part = [&](std::size_t i) {
      return e.args[i] ? eval(*e.args[i], scope) : Value::none();
    };
    Value start = part(1), stop = part(2), stepValue = part(3);
    return sliceValue(*this, obj, start, stop, stepValue);
  }
  case Expr::Kind::Call:
    return evalCall(e, scope, Value());
  case Expr::Kind::Filter: {
    Value input = e.args[0] ? eval(*e.args[0], scope) : blockBody_;
    CallArgs args = evalArgs(e, scope);
    return applyFilter(e.name, input, args);
  }
  case Expr::Kind::Test: {
    Value v = eval(*e.args[0], scope);
    CallArgs args = evalArgs(e, scope);
    return Value::boolean(applyTest(e.name, v, args) != e.negated);
  }
  case Expr::Kind::Unary: {
    Value v = eval(*e.args[0], scope);
    if (e.name == "not")
      return Value::boolean(!truthy(v));
    if (v.kind() == Value::Kind::Float)
      return Value::real(e.name == "-" ? -v.asDouble() : v.asDouble());
    if (v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Bool) {
      if (e.name == "+")
        return Value::integer(v.asInt());
      if (v.asInt() == INT64_MIN)
        throw EvalError("integer overflow");
      return Value::integer(-v.asInt());
    }
    if (v.isUndefined())
      throw EvalError(v.undefinedName());
    throw EvalError("bad operand type for unary " + e.name + ": '" +
                    typeName(v) + "'");
  }
  case Expr::Kind::Binary: {
    Value a = eval(*e.args[0], scope);
    Value b = eval(*e.args[1], scope);
    return binaryOp(*this, e.name, a, b);
  }
  case Expr::Kind::Compare: {
    Value left = eval(*e.args[0], scope);
    for (std::size_t i = 0; i < e.ops.size(); ++i) {
      Value right = eval(*e.args[i + 1], scope);
      const std::string &op = e.ops[i];
      bool ok;
      if (op == "==")
        ok = equals(left, right);
      else if (op == "!=")
        ok = !equals(left, right);
      else if (op == "<")
        ok = lessThan(left, right);
      else if (op == ">")
        ok = lessThan(right, left);
      else if (op == "<=")
        ok = !lessThan(right, left);
      else if (op == ">=")
        ok = !lessThan(left, right);
      else if (op == "in")
        ok = contains(right, left);
      else
        ok = !contains(right, left);
      if (!ok)
        return Value::boolean(false);
      left = std::move(right);
    }
    return Value::boolean(true);
  }
  case Expr::Kind::And: {
    Value a = eval(*e.args[0], scope);
    return truthy(a) ? eval(*e.args[1], scope) : a;
  }
  case Expr::Kind::Or: {
    Value a = eval(*e.args[0], scope);
    return truthy(a) ? a : eval(*e.args[1], scope);
  }
  case Expr::Kind::Cond:
    if (truthy(eval(*e.args[1], scope)))
      return eval(*e.args[0], scope);
    if (e.args[2])
      return eval(*e.args[2], scope);
    return Value::undefined(
        "the inline if-expression evaluated to false and no else section "
        "was defined");
  case Expr::Kind::BlockBody:
    return blockBody_;
  }
  return Value();
}

Value Interpreter::getAttr(const Value &obj, const std::string &name) {
  switch (obj.kind()) {
  case Value::Kind::Undefined:
    throw EvalError(obj.undefinedName());
  case Value::Kind::Dict: {
    if (auto m = boundMethod(obj, name))
      return Value::callable(std::move(m));
    if (const Value *v = obj.dictRef().find(name))
      return *v;
    return Value::undefined("'dict object' has no attribute '" + name + "'");
  }
  case Value::Kind::String:
    if (auto m = boundMethod(obj, name))
      return Value::callable(std::move(m));
    break;
  case Value::Kind::Object:
    if (const Value *v = obj.objectPtr()->find(name))
      return *v;
    break;
  default:
    break;
  }
  return Value::undefined("'" + typeName(obj) + " object' has no attribute '" +
                          name + "'");
}

Value Interpreter::getItem(const Value &obj, const Value &key) {
  switch (obj.kind()) {
  case Value::Kind::Undefined:
    throw EvalError(obj.undefinedName());
  case Value::Kind::Dict:
    if (const Value *v = obj.dictRef().find(key))
      return *v;
    break;
  case Value::Kind::List:
  case Value::Kind::String:
    if (key.kind() == Value::Kind::Int || key.kind() == Value::Kind::Bool) {
      std::int64_t i = key.asInt();
      if (obj.kind() == Value::Kind::List) {
        const auto &items = obj.listRef().items;
        auto n = static_cast<std::int64_t>(items.size());
        if (i < 0)
          i += n;
        if (i >= 0 && i < n)
          return items[static_cast<std::size_t>(i)];
      } else {
        auto offsets = py::codePointOffsets(obj.str());
        auto n = static_cast<std::int64_t>(offsets.size()) - 1;
        if (i < 0)
          i += n;
        if (i >= 0 && i < n) {
          auto b = offsets[static_cast<std::size_t>(i)];
          return Value::string(obj.str().substr(
              b, offsets[static_cast<std::size_t>(i) + 1] - b));
        }
      }
    }
    break;
  default:
    break;
  }
  if (key.isString()) {
    Value attr = getAttr(obj, key.str());
    if (!attr.isUndefined())
      return attr;
  }
  return Value::undefined("'" + typeName(obj) + " object' has no item " +
                          toRepr(key));
}

Value Interpreter::call(const Value &callee, CallArgs &args) {
  if (callee.kind() == Value::Kind::Callable) {
    const auto &c = callee.callablePtr();
    if (!c->fn)
      throw EvalError("'" + c->name + "' can no longer be called");
    // Hold a reference: the call may rebind the variable that owned it.
    auto keep = c;
    return keep->fn(*this, args);
  }
  if (callee.isUndefined())
    throw EvalError(callee.undefinedName());
  throw EvalError("'" + typeName(callee) + "' object is not callable");
}

std::vector<Value> Interpreter::iterate(const Value &v) {
  switch (v.kind()) {
  case Value::Kind::Undefined:
    return {};
  case Value::Kind::List:
    return v.listRef().items;
  case Value::Kind::Dict: {
    std::vector<Value> keys;
    keys.reserve(v.dictRef().entries.size());
    for (const auto &[k, val] : v.dictRef().entries)
      keys.push_back(k);
    return keys;
  }
  case Value::Kind::String: {
    std::vector<Value> chars;
    const std::string &s = v.str();
    auto offsets = py::codePointOffsets(s);
    chars.reserve(offsets.size());
    for (std::size_t i = 0; i + 1 < offsets.size(); ++i)
      chars.push_back(
          Value::string(s.substr(offsets[i], offsets[i + 1] - offsets[i])));
    return chars;
  }
  default:
    throw EvalError("'" + typeName(v) + "' object is not iterable");
  }
}

Value Interpreter::applyFilter(const std::string &name, const Value &input,
                               CallArgs &args) {
  return tmpl::applyFilter(*this, name, input, args);
}

bool Interpreter::applyTest(const std::string &name, const Value &v,
                            CallArgs &args) {
  return tmpl::applyTest(*this, name, v, args);
}

} // namespace llmc::tmpl
