//===- tool_grammar.cpp - The grammar of a reply with tools or reasoning --===//
#include "llmc/runtime/tool_grammar.h"

#include "llmc/grammar/json_schema.h"
#include "llmc/support/error.h"

#include <cctype>

namespace llmc {

using grammar::Element;
using grammar::Grammar;
using grammar::Sequence;

namespace {

Element literal(Grammar &g, const std::string &text) {
  const uint32_t r = g.freshRule("lit");
  Sequence s;
  g.appendLiteral(s, text);
  g.addAlternative(r, std::move(s));
  return Grammar::ref(r);
}

Element oneOf(Grammar &g, const char *name, std::vector<Sequence> alts) {
  const uint32_t r = g.freshRule(name);
  for (Sequence &s : alts)
    g.addAlternative(r, std::move(s));
  return Grammar::ref(r);
}

/// Text up to and including the close marker, and a few spaces after it.
Sequence reasoningBody(Grammar &g, const text::ReasoningMarkers &m) {
  grammar::ByteSet space;
  for (char c : {' ', '\n', '\r', '\t'})
    space.set(static_cast<unsigned char>(c));
  return {g.textWithout(m.close), literal(g, m.close),
          g.repeat(g.bytes(space), 0, 4)};
}

/// One call's slots and literals after literals[0], for each tool.
Element callTail(Grammar &g, const text::ToolCallFormat &f,
                 const ToolRequest &req) {
  std::vector<Sequence> alts;
  for (size_t t = 0; t < req.tools.size(); ++t) {
    const ToolSpec &tool = req.tools[t];
    Sequence s;
    for (size_t k = 0; k < f.slots.size(); ++k) {
      switch (f.slots[k]) {
      case text::ToolCallFormat::Slot::Name:
        s.push_back(literal(g, tool.name));
        break;
      case text::ToolCallFormat::Slot::Id: {
        grammar::ByteSet alnum;
        for (int c = 0; c < 256; ++c)
          if (std::isalnum(c))
            alnum.set(static_cast<size_t>(c));
        s.push_back(g.repeat(g.bytes(alnum), f.idLength > 0 ? f.idLength : 9,
                             f.idLength > 0 ? f.idLength : 9));
        break;
      }
      case text::ToolCallFormat::Slot::Arguments:
        s.push_back(g.embed(
            tool.parameters.empty()
                ? grammar::grammarForJson(/*objectOnly=*/true)
                : grammar::grammarFromJsonSchema(
                      tool.parameters,
                      "tools[" + std::to_string(t) + "].function.parameters",
                      {.strictObjects = tool.strict})));
        break;
      }
      g.appendLiteral(s, f.literals[k + 1]);
    }
    alts.push_back(std::move(s));
  }
  return oneOf(g, "call", std::move(alts));
}

/// The calls after `opening`: tail (sep literals[0] tail)* blockClose.
Sequence callsAfterOpening(Grammar &g, const text::ToolCallFormat &f,
                           const ToolRequest &req) {
  const Element tail = callTail(g, f, req);
  Sequence s = {tail};
  if (req.parallel && f.parallel) {
    Sequence more;
    g.appendLiteral(more, f.separator + f.literals.front());
    more.push_back(tail);
    s.push_back(g.repeat(oneOf(g, "more-call", {more}), 0, -1));
  }
  g.appendLiteral(s, f.blockClose);
  return s;
}

} // namespace

Grammar replyGrammar(const ReplyMarkup &markup, const ToolRequest *tools,
                     const Grammar *answer) {
  Grammar g;
  const uint32_t root = g.rule("root");
  g.root = root;
  Sequence head;
  if (markup.reasoning && markup.startsInReasoning) {
    head = reasoningBody(g, *markup.reasoning);
  } else if (markup.reasoning) {
    Sequence block;
    g.appendLiteral(block, markup.reasoning->open);
    for (const Element &e : reasoningBody(g, *markup.reasoning))
      block.push_back(e);
    head.push_back(oneOf(g, "reasoning", {block, {}}));
  }
  std::vector<Sequence> bodies;
  if (answer) {
    bodies.push_back({g.embed(*answer)});
  } else if (tools) {
    if (!markup.tools)
      throw Error("this model's chat template has no tool-call format "
                  "llmc recognises");
    const text::ToolCallFormat &f = *markup.tools;
    const std::string opening = f.opening();
    if (tools->choice == ToolRequest::Choice::Required) {
      Sequence s;
      g.appendLiteral(s, opening);
      for (const Element &e : callsAfterOpening(g, f, *tools))
        s.push_back(e);
      bodies.push_back(std::move(s));
    } else if (!f.trigger.empty()) {
      // Free text, or free text then the trigger and the calls.
      const Element free = g.textWithout(f.trigger);
      bodies.push_back({free});
      Sequence s = {free};
      g.appendLiteral(s, opening);
      for (const Element &e : callsAfterOpening(g, f, *tools))
        s.push_back(e);
      bodies.push_back(std::move(s));
    } else {
      // A JSON-first format: the calls, or text that does not start as a
      // call (nor with a space, which could precede one).
      Sequence s;
      g.appendLiteral(s, opening);
      for (const Element &e : callsAfterOpening(g, f, *tools))
        s.push_back(e);
      bodies.push_back(std::move(s));
      bodies.push_back({});
      grammar::ByteSet first;
      first.set();
      for (char c : {'{', ' ', '\n', '\r', '\t'})
        first.reset(static_cast<unsigned char>(c));
      bodies.push_back({g.bytes(first), g.anyText()});
    }
  } else {
    bodies.push_back({g.anyText()});
  }
  for (Sequence &b : bodies) {
    Sequence s = head;
    s.insert(s.end(), b.begin(), b.end());
    g.addAlternative(root, std::move(s));
  }
  g.validate("the reply's grammar");
  return g;
}

} // namespace llmc
