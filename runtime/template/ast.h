//===- ast.h - Parsed template ----------------------------------*- C++ -*-===//
#pragma once

#include "lexer.h"
#include "value.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace llmc::tmpl {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Expr {
  enum class Kind {
    Literal,  // value
    Name,     // name
    List,     // args: items
    Tuple,    // args: items
    Dict,     // args: key, value, key, value, ...
    GetAttr,  // args[0].name
    GetItem,  // args[0][args[1]]
    Slice,    // args[0][args[1]:args[2]:args[3]], null when omitted
    Call,     // args[0](args[1..], kwargs)
    Filter,   // args[0] | name(args[1..], kwargs); args[0] null in blocks
    Test,     // args[0] is [not] name(args[1..], kwargs)
    Unary,    // name op ("-", "+", "not") args[0]
    Binary,   // args[0] name args[1]: + - * / // % ** ~
    Compare,  // args[0] ops[0] args[1] ops[1] args[2] ...
    And,      // args[0] and args[1]
    Or,       // args[0] or args[1]
    Cond,     // args[0] if args[1] else args[2] (args[2] may be null)
    BlockBody // the rendered body of a filter or set block
  };
  Kind kind;
  Pos pos;
  Value value;
  std::string name;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;
  bool negated = false;
};

// Assignment target: a name, names to unpack, or namespace.attr.
struct Target {
  std::vector<std::string> names;
  std::string attr; // set: names[0].attr
  bool unpack = false;
};

struct Param {
  std::string name;
  ExprPtr defaultValue; // may be null
};

struct Stmt {
  enum class Kind {
    Text,        // text
    Output,      // {{ exprs[0] }}
    If,          // exprs[i] guards bodies[i]; extra body is else
    For,         // target in exprs[0] [if exprs[1]]; bodies: body, else
    Set,         // target = exprs[0]
    SetBlock,    // target = bodies[0] rendered, through exprs[0] if set
    Macro,       // name(params) bodies[0]
    CallBlock,   // exprs[0] is the call; bodies[0] is caller(params)
    FilterBlock, // exprs[0] filters bodies[0]
    With,        // targets[i] = exprs[i]; bodies[0]
    Scope,       // bodies[0] unchanged ({% generation %})
    Break,
    Continue
  };
  Kind kind;
  Pos pos;
  std::string text;
  std::vector<ExprPtr> exprs;
  std::vector<Body> bodies;
  Target target;
  std::vector<Target> targets;
  std::string name;
  std::vector<Param> params;
  bool recursive = false;
};

namespace detail {
struct Program {
  Body body;
};
} // namespace detail
using detail::Program;

} // namespace llmc::tmpl
