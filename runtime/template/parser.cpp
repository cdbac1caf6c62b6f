#include "parser.h"

#include <algorithm>
#include <array>
#include <initializer_list>

namespace llmc::tmpl {

namespace {

// Deeper nesting than this is refused at parse time, so that neither the
// parser nor the evaluator can run out of stack on hostile input.
constexpr int kMaxNesting = 128;

class Parser {
public:
  explicit Parser(std::vector<Token> tokens) : toks_(std::move(tokens)) {}

  Program run() {
    Program program;
    program.body = parseBody({}, nullptr);
    return program;
  }

private:
  struct NestingGuard {
    explicit NestingGuard(Parser &p) : p(p) {
      if (++p.depth_ > kMaxNesting)
        failAt(p.cur().pos, "template nested too deeply (limit " +
                                std::to_string(kMaxNesting) + ")");
    }
    ~NestingGuard() { --p.depth_; }
    Parser &p;
  };

  const Token &cur() const { return toks_[i_]; }
  const Token &peek(std::size_t k = 1) const {
    return toks_[std::min(i_ + k, toks_.size() - 1)];
  }
  void advance() {
    if (i_ + 1 < toks_.size())
      ++i_;
  }
  bool isOp(const char *op) const {
    return cur().kind == Tok::Op && cur().text == op;
  }
  bool isName(const char *name) const {
    return cur().kind == Tok::Name && cur().text == name;
  }
  bool skipOp(const char *op) {
    if (!isOp(op))
      return false;
    advance();
    return true;
  }
  bool skipName(const char *name) {
    if (!isName(name))
      return false;
    advance();
    return true;
  }

  static std::string describe(const Token &t) {
    switch (t.kind) {
    case Tok::Text:
      return "template text";
    case Tok::VarBegin:
      return "'{{'";
    case Tok::VarEnd:
      return "'}}'";
    case Tok::BlockBegin:
      return "'{%'";
    case Tok::BlockEnd:
      return "'%}'";
    case Tok::Eof:
      return "end of template";
    case Tok::String:
      return "string literal";
    default:
      return "'" + t.text + "'";
    }
  }

  [[noreturn]] void unexpected(const char *expected) const {
    failAt(cur().pos,
           std::string("expected ") + expected + ", got " + describe(cur()));
  }

  void expectOp(const char *op) {
    if (!skipOp(op))
      unexpected((std::string("'") + op + "'").c_str());
  }
  std::string expectName() {
    if (cur().kind != Tok::Name)
      unexpected("a name");
    std::string name = cur().text;
    advance();
    return name;
  }
  void expectBlockEnd() {
    if (cur().kind != Tok::BlockEnd)
      unexpected("end of statement '%}'");
    advance();
  }

  ExprPtr make(Expr::Kind kind, Pos pos) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = pos;
    return e;
  }

  // Statements until a block tag named in `ends`; consumes "{% name" of that
  // tag and stores the name in *endedBy.
  Body parseBody(std::initializer_list<const char *> ends,
                 std::string *endedBy) {
    NestingGuard guard(*this);
    Body body;
    while (true) {
      const Token &t = cur();
      switch (t.kind) {
      case Tok::Text: {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::Text;
        s->pos = t.pos;
        s->text = t.text;
        body.push_back(std::move(s));
        advance();
        break;
      }
      case Tok::VarBegin: {
        auto s = std::make_unique<Stmt>();
        s->kind = Stmt::Kind::Output;
        s->pos = t.pos;
        advance();
        s->exprs.push_back(parseTuple(false, false, {}));
        if (cur().kind != Tok::VarEnd)
          unexpected("end of print statement '}}'");
        advance();
        body.push_back(std::move(s));
        break;
      }
      case Tok::BlockBegin: {
        const Token &name = peek();
        if (name.kind != Tok::Name)
          failAt(name.pos, "expected a tag name, got " + describe(name));
        for (const char *end : ends)
          if (name.text == end) {
            advance();
            advance();
            *endedBy = end;
            return body;
          }
        advance();
        body.push_back(parseStatement());
        break;
      }
      case Tok::Eof:
        if (ends.size() != 0) {
          std::string list;
          for (const char *end : ends)
            list += std::string(list.empty() ? "" : " or ") + "'" + end + "'";
          failAt(t.pos, "unexpected end of template, expected " + list);
        }
        return body;
      default:
        failAt(t.pos, "unexpected " + describe(t));
      }
    }
  }

  StmtPtr parseStatement() {
    const Token &tag = cur();
    auto s = std::make_unique<Stmt>();
    s->pos = tag.pos;
    std::string name = tag.text;
    advance();
    std::string ended;
    if (name == "if") {
      s->kind = Stmt::Kind::If;
      while (true) {
        s->exprs.push_back(parseTuple(true, false, {}));
        expectBlockEnd();
        s->bodies.push_back(parseBody({"elif", "else", "endif"}, &ended));
        if (ended == "elif")
          continue;
        if (ended == "else") {
          expectBlockEnd();
          s->bodies.push_back(parseBody({"endif"}, &ended));
        }
        break;
      }
    } else if (name == "for") {
      s->kind = Stmt::Kind::For;
      s->target = parseAssignTarget(false, {"in"});
      if (!skipName("in"))
        unexpected("'in'");
      s->exprs.push_back(parseTuple(true, false, {"recursive", "if"}));
      if (skipName("if"))
        s->exprs.push_back(parseExpression(true));
      if (isName("recursive"))
        failAt(cur().pos, "recursive for loops are unsupported");
      expectBlockEnd();
      ++loopDepth_;
      s->bodies.push_back(parseBody({"endfor", "else"}, &ended));
      --loopDepth_;
      if (ended == "else") {
        expectBlockEnd();
        s->bodies.push_back(parseBody({"endfor"}, &ended));
      }
    } else if (name == "set") {
      s->target = parseAssignTarget(true, {});
      if (skipOp("=")) {
        s->kind = Stmt::Kind::Set;
        s->exprs.push_back(parseTuple(false, false, {}));
      } else {
        s->kind = Stmt::Kind::SetBlock;
        if (s->target.unpack)
          failAt(s->pos, "a set block assigns a single name");
        if (isOp("|"))
          s->exprs.push_back(
              parseFilterExpr(make(Expr::Kind::BlockBody, cur().pos)));
        expectBlockEnd();
        s->bodies.push_back(parseBody({"endset"}, &ended));
      }
    } else if (name == "macro") {
      s->kind = Stmt::Kind::Macro;
      s->name = expectName();
      parseParams(s->params, true);
      expectBlockEnd();
      int savedLoops = std::exchange(loopDepth_, 0);
      s->bodies.push_back(parseBody({"endmacro"}, &ended));
      loopDepth_ = savedLoops;
    } else if (name == "call") {
      s->kind = Stmt::Kind::CallBlock;
      if (isOp("("))
        parseParams(s->params, true);
      ExprPtr call = parseExpression(true);
      if (call->kind != Expr::Kind::Call)
        failAt(call->pos, "expected a call in a call block");
      s->exprs.push_back(std::move(call));
      expectBlockEnd();
      int savedLoops = std::exchange(loopDepth_, 0);
      s->bodies.push_back(parseBody({"endcall"}, &ended));
      loopDepth_ = savedLoops;
    } else if (name == "filter") {
      s->kind = Stmt::Kind::FilterBlock;
      auto input = make(Expr::Kind::BlockBody, cur().pos);
      s->exprs.push_back(parseFilter(std::move(input)));
      while (isOp("|")) {
        advance();
        s->exprs[0] = parseFilter(std::move(s->exprs[0]));
      }
      expectBlockEnd();
      s->bodies.push_back(parseBody({"endfilter"}, &ended));
    } else if (name == "with") {
      s->kind = Stmt::Kind::With;
      while (cur().kind != Tok::BlockEnd) {
        if (!s->targets.empty())
          expectOp(",");
        s->targets.push_back(parseAssignTarget(false, {}));
        expectOp("=");
        s->exprs.push_back(parseExpression(true));
      }
      expectBlockEnd();
      s->bodies.push_back(parseBody({"endwith"}, &ended));
    } else if (name == "generation") {
      s->kind = Stmt::Kind::Scope;
      expectBlockEnd();
      s->bodies.push_back(parseBody({"endgeneration"}, &ended));
    } else if (name == "break" || name == "continue") {
      if (loopDepth_ == 0)
        failAt(s->pos, "'" + name + "' outside of a loop");
      s->kind = name == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue;
    } else {
      failAt(tag.pos, "unknown tag '" + name + "'");
    }
    // The end tag ("endif", ...) or a simple statement still needs its "%}".
    expectBlockEnd();
    return s;
  }

  void parseParams(std::vector<Param> &params, bool allowDefaults) {
    expectOp("(");
    while (!isOp(")")) {
      if (!params.empty())
        expectOp(",");
      if (isOp(")"))
        break;
      Param p;
      p.name = expectName();
      if (allowDefaults && skipOp("="))
        p.defaultValue = parseExpression(true);
      else if (!params.empty() && params.back().defaultValue)
        failAt(cur().pos, "non-default argument follows default argument");
      params.push_back(std::move(p));
    }
    advance();
  }

  Target parseAssignTarget(bool allowAttr,
                           std::initializer_list<const char *> ends) {
    Target t;
    Pos pos = cur().pos;
    t.names.push_back(expectName());
    if (allowAttr && isOp(".")) {
      advance();
      t.attr = expectName();
      return t;
    }
    while (isOp(",")) {
      advance();
      t.unpack = true;
      bool end = cur().kind != Tok::Name;
      for (const char *e : ends)
        end = end || isName(e);
      if (end)
        break;
      t.names.push_back(expectName());
    }
    for (const auto &n : t.names)
      if (n == "true" || n == "false" || n == "none" || n == "True" ||
          n == "False" || n == "None")
        failAt(pos, "cannot assign to '" + n + "'");
    return t;
  }

  bool atTupleEnd(std::initializer_list<const char *> ends) const {
    Tok k = cur().kind;
    if (k == Tok::VarEnd || k == Tok::BlockEnd || k == Tok::Eof || isOp(")"))
      return true;
    for (const char *e : ends)
      if (isName(e))
        return true;
    return false;
  }

  // Comma-separated expressions; a tuple if there is a comma.
  ExprPtr parseTuple(bool noCond, bool explicitParens,
                     std::initializer_list<const char *> ends) {
    Pos pos = cur().pos;
    std::vector<ExprPtr> items;
    bool isTuple = false;
    while (true) {
      if (!items.empty())
        expectOp(",");
      if (atTupleEnd(ends))
        break;
      items.push_back(noCond ? parseOr() : parseExpression(true));
      if (isOp(","))
        isTuple = true;
      else
        break;
    }
    if (!isTuple) {
      if (items.size() == 1)
        return std::move(items[0]);
      if (!explicitParens)
        unexpected("an expression");
    }
    auto e = make(Expr::Kind::Tuple, pos);
    e->args = std::move(items);
    return e;
  }

  ExprPtr parseExpression(bool withCond) {
    NestingGuard guard(*this);
    if (!withCond)
      return parseOr();
    ExprPtr e = parseOr();
    while (isName("if")) {
      Pos pos = cur().pos;
      advance();
      auto c = make(Expr::Kind::Cond, pos);
      c->args.push_back(std::move(e));
      c->args.push_back(parseOr());
      c->args.push_back(skipName("else") ? parseExpression(true) : nullptr);
      e = std::move(c);
    }
    return e;
  }

  ExprPtr parseOr() {
    ExprPtr e = parseAnd();
    while (isName("or")) {
      auto n = make(Expr::Kind::Or, cur().pos);
      advance();
      n->args.push_back(std::move(e));
      n->args.push_back(parseAnd());
      e = std::move(n);
    }
    return e;
  }

  ExprPtr parseAnd() {
    ExprPtr e = parseNot();
    while (isName("and")) {
      auto n = make(Expr::Kind::And, cur().pos);
      advance();
      n->args.push_back(std::move(e));
      n->args.push_back(parseNot());
      e = std::move(n);
    }
    return e;
  }

  ExprPtr parseNot() {
    if (isName("not")) {
      NestingGuard guard(*this);
      auto n = make(Expr::Kind::Unary, cur().pos);
      n->name = "not";
      advance();
      n->args.push_back(parseNot());
      return n;
    }
    return parseCompare();
  }

  ExprPtr parseCompare() {
    Pos pos = cur().pos;
    ExprPtr first = parseMath1();
    auto cmp = make(Expr::Kind::Compare, pos);
    cmp->args.push_back(std::move(first));
    static const std::array<const char *, 6> ops = {"==", "!=", "<",
                                                    "<=", ">",  ">="};
    while (true) {
      std::string op;
      for (const char *o : ops)
        if (isOp(o))
          op = o;
      if (!op.empty()) {
        advance();
      } else if (isName("in")) {
        op = "in";
        advance();
      } else if (isName("not") && peek().kind == Tok::Name &&
                 peek().text == "in") {
        op = "not in";
        advance();
        advance();
      } else {
        break;
      }
      cmp->ops.push_back(op);
      cmp->args.push_back(parseMath1());
    }
    if (cmp->ops.empty())
      return std::move(cmp->args[0]);
    return cmp;
  }

  ExprPtr binary(ExprPtr left, ExprPtr right, const std::string &op, Pos pos) {
    auto n = make(Expr::Kind::Binary, pos);
    n->name = op;
    n->args.push_back(std::move(left));
    n->args.push_back(std::move(right));
    return n;
  }

  ExprPtr parseMath1() {
    ExprPtr e = parseConcat();
    while (isOp("+") || isOp("-")) {
      std::string op = cur().text;
      Pos pos = cur().pos;
      advance();
      e = binary(std::move(e), parseConcat(), op, pos);
    }
    return e;
  }

  ExprPtr parseConcat() {
    ExprPtr e = parseMath2();
    while (isOp("~")) {
      Pos pos = cur().pos;
      advance();
      e = binary(std::move(e), parseMath2(), "~", pos);
    }
    return e;
  }

  ExprPtr parseMath2() {
    ExprPtr e = parsePow();
    while (isOp("*") || isOp("/") || isOp("//") || isOp("%")) {
      std::string op = cur().text;
      Pos pos = cur().pos;
      advance();
      e = binary(std::move(e), parsePow(), op, pos);
    }
    return e;
  }

  ExprPtr parsePow() {
    ExprPtr e = parseUnary(true);
    while (isOp("**")) {
      Pos pos = cur().pos;
      advance();
      e = binary(std::move(e), parseUnary(true), "**", pos);
    }
    return e;
  }

  ExprPtr parseUnary(bool withFilter) {
    NestingGuard guard(*this);
    ExprPtr e;
    if (isOp("-") || isOp("+")) {
      e = make(Expr::Kind::Unary, cur().pos);
      e->name = cur().text;
      advance();
      e->args.push_back(parseUnary(false));
    } else {
      e = parsePrimary();
    }
    e = parsePostfix(std::move(e));
    if (withFilter)
      e = parseFilterExpr(std::move(e));
    return e;
  }

  ExprPtr parsePrimary() {
    const Token &t = cur();
    Pos pos = t.pos;
    switch (t.kind) {
    case Tok::Name: {
      auto e = make(Expr::Kind::Literal, pos);
      if (t.text == "true" || t.text == "True")
        e->value = Value::boolean(true);
      else if (t.text == "false" || t.text == "False")
        e->value = Value::boolean(false);
      else if (t.text == "none" || t.text == "None")
        e->value = Value::none();
      else {
        e->kind = Expr::Kind::Name;
        e->name = t.text;
      }
      advance();
      return e;
    }
    case Tok::String: {
      std::string s;
      while (cur().kind == Tok::String) {
        s += cur().text;
        advance();
      }
      auto e = make(Expr::Kind::Literal, pos);
      e->value = Value::string(std::move(s));
      return e;
    }
    case Tok::Int: {
      auto e = make(Expr::Kind::Literal, pos);
      e->value = Value::integer(t.intValue);
      advance();
      return e;
    }
    case Tok::Float: {
      auto e = make(Expr::Kind::Literal, pos);
      e->value = Value::real(t.floatValue);
      advance();
      return e;
    }
    case Tok::Op:
      if (t.text == "(") {
        advance();
        ExprPtr e = parseTuple(false, true, {});
        expectOp(")");
        return e;
      }
      if (t.text == "[") {
        advance();
        auto e = make(Expr::Kind::List, pos);
        while (!isOp("]")) {
          if (!e->args.empty())
            expectOp(",");
          if (isOp("]"))
            break;
          e->args.push_back(parseExpression(true));
        }
        advance();
        return e;
      }
      if (t.text == "{") {
        advance();
        auto e = make(Expr::Kind::Dict, pos);
        while (!isOp("}")) {
          if (!e->args.empty())
            expectOp(",");
          if (isOp("}"))
            break;
          e->args.push_back(parseExpression(true));
          expectOp(":");
          e->args.push_back(parseExpression(true));
        }
        advance();
        return e;
      }
      break;
    default:
      break;
    }
    unexpected("an expression");
  }

  ExprPtr parsePostfix(ExprPtr e) {
    while (true) {
      if (isOp(".")) {
        Pos pos = cur().pos;
        advance();
        if (cur().kind == Tok::Int) {
          auto n = make(Expr::Kind::GetItem, pos);
          auto idx = make(Expr::Kind::Literal, cur().pos);
          idx->value = Value::integer(cur().intValue);
          advance();
          n->args.push_back(std::move(e));
          n->args.push_back(std::move(idx));
          e = std::move(n);
        } else {
          auto n = make(Expr::Kind::GetAttr, pos);
          n->name = expectName();
          n->args.push_back(std::move(e));
          e = std::move(n);
        }
      } else if (isOp("[")) {
        e = parseSubscript(std::move(e));
      } else if (isOp("(")) {
        e = parseCall(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parseSubscript(ExprPtr target) {
    Pos pos = cur().pos;
    advance(); // [
    ExprPtr first;
    if (!isOp(":")) {
      first = parseExpression(true);
      if (isOp(",")) {
        // obj[a, b] indexes with a tuple.
        auto tuple = make(Expr::Kind::Tuple, first->pos);
        tuple->args.push_back(std::move(first));
        while (skipOp(",")) {
          if (isOp("]"))
            break;
          tuple->args.push_back(parseExpression(true));
        }
        first = std::move(tuple);
      }
      if (!isOp(":")) {
        expectOp("]");
        auto n = make(Expr::Kind::GetItem, pos);
        n->args.push_back(std::move(target));
        n->args.push_back(std::move(first));
        return n;
      }
    }
    auto n = make(Expr::Kind::Slice, pos);
    n->args.push_back(std::move(target));
    n->args.push_back(std::move(first));
    expectOp(":");
    n->args.push_back(isOp(":") || isOp("]") ? nullptr : parseExpression(true));
    if (skipOp(":"))
      n->args.push_back(isOp("]") ? nullptr : parseExpression(true));
    else
      n->args.push_back(nullptr);
    expectOp("]");
    return n;
  }

  void parseArgs(Expr &call) {
    expectOp("(");
    bool any = false;
    while (!isOp(")")) {
      if (any)
        expectOp(",");
      if (isOp(")"))
        break;
      any = true;
      if (isOp("*") || isOp("**"))
        failAt(cur().pos, "unsupported *args/**kwargs in a call");
      if (cur().kind == Tok::Name && peek().kind == Tok::Op &&
          peek().text == "=") {
        std::string key = cur().text;
        advance();
        advance();
        call.kwargs.emplace_back(key, parseExpression(true));
      } else {
        if (!call.kwargs.empty())
          failAt(cur().pos, "positional argument follows keyword argument");
        call.args.push_back(parseExpression(true));
      }
    }
    advance();
  }

  ExprPtr parseCall(ExprPtr callee) {
    auto n = make(Expr::Kind::Call, cur().pos);
    n->args.push_back(std::move(callee));
    parseArgs(*n);
    return n;
  }

  ExprPtr parseFilterExpr(ExprPtr e) {
    while (true) {
      if (isOp("|")) {
        advance();
        e = parseFilter(std::move(e));
      } else if (isName("is")) {
        e = parseTest(std::move(e));
      } else if (isOp("(")) {
        e = parseCall(std::move(e));
      } else {
        return e;
      }
    }
  }

  std::string dottedName() {
    std::string name = expectName();
    while (isOp(".") && peek().kind == Tok::Name) {
      advance();
      name += "." + expectName();
    }
    return name;
  }

  ExprPtr parseFilter(ExprPtr input) {
    Pos pos = cur().pos;
    auto n = make(Expr::Kind::Filter, pos);
    n->name = dottedName();
    if (!isKnownFilter(n->name))
      failAt(pos, "unsupported filter '" + n->name + "'");
    n->args.push_back(std::move(input));
    if (isOp("("))
      parseArgs(*n);
    return n;
  }

  ExprPtr parseTest(ExprPtr input) {
    advance(); // is
    auto n = make(Expr::Kind::Test, cur().pos);
    n->negated = skipName("not");
    Pos pos = cur().pos;
    n->name = dottedName();
    if (!isKnownTest(n->name))
      failAt(pos, "unsupported test '" + n->name + "'");
    n->args.push_back(std::move(input));
    Tok k = cur().kind;
    if (isOp("(")) {
      parseArgs(*n);
    } else if ((k == Tok::Name || k == Tok::String || k == Tok::Int ||
                k == Tok::Float || isOp("[") || isOp("{")) &&
               !isName("else") && !isName("or") && !isName("and")) {
      if (isName("is"))
        failAt(cur().pos, "you cannot chain multiple tests with 'is'");
      n->args.push_back(parsePostfix(parsePrimary()));
    }
    return n;
  }

  std::vector<Token> toks_;
  std::size_t i_ = 0;
  int depth_ = 0;
  int loopDepth_ = 0;
};

} // namespace

Program parse(std::string_view source) { return Parser(lex(source)).run(); }

} // namespace llmc::tmpl
