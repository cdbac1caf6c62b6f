//===- cmd_grammar.cpp - llmc grammar check SCHEMA DOCUMENT... -----------===//
//
// What a user debugging a schema asks: does llmc compile it (and if not,
// which keyword where), and would it let a model write this document. A
// JSON document is checked as its value written compactly (the grammar's
// whitespace rule is llmc's, not the file's); --gbnf checks files' bytes
// against a GBNF grammar.

#include "commands.h"

#include "llmc/grammar/gbnf.h"
#include "llmc/grammar/json_schema.h"
#include "llmc/grammar/matcher.h"
#include "llmc/support/error.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace llmc::cli {
namespace {

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(path + ": cannot read the file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

Action addGrammar(CLI::App &app) {
  struct Options {
    std::string grammar;
    std::vector<std::string> documents;
    bool gbnf = false;
    bool strictObjects = false;
  };
  auto o = std::make_shared<Options>();
  app.require_subcommand(1);
  CLI::App *check = app.add_subcommand(
      "check", "Compile a JSON Schema (or GBNF) and check documents with it");
  check->add_option("GRAMMAR", o->grammar, "A JSON Schema file (or GBNF)")
      ->required();
  check->add_option("DOCUMENT", o->documents,
                    "JSON documents to check (text files with --gbnf)");
  check->add_flag("--gbnf", o->gbnf, "GRAMMAR is GBNF, as llama.cpp's");
  check->add_flag(
      "--disable-additional-properties", o->strictObjects,
      "JSON Schema: an object schema that lists properties but has no "
      "additionalProperties takes only the listed keys (OpenAI's strict "
      "mode); by default other keys are allowed, as JSON Schema says");
  return [o]() -> int {
    const std::string source = readAll(o->grammar);
    grammar::Grammar g =
        o->gbnf ? grammar::parseGbnf(source, o->grammar)
                : grammar::grammarFromJsonSchema(
                      source, o->grammar, {.strictObjects = o->strictObjects});
    auto compiled = std::make_shared<grammar::CompiledGrammar>(
        std::move(g), grammar::TokenVocabulary::ofBytes(), /*warmStates=*/0);
    std::printf("%s: compiles (%zu rules)\n", o->grammar.c_str(),
                compiled->grammar().rules.size());
    int rc = 0;
    for (const std::string &path : o->documents) {
      std::string text = readAll(path);
      if (!o->gbnf) {
        auto doc = nlohmann::ordered_json::parse(text, nullptr, false);
        if (doc.is_discarded()) {
          std::printf("%s: not JSON\n", path.c_str());
          rc = 1;
          continue;
        }
        text = doc.dump(-1, ' ', false,
                        nlohmann::ordered_json::error_handler_t::replace);
      }
      grammar::Matcher m(compiled, {grammar::TokenVocabulary::kByteEos});
      size_t at = 0;
      while (at < text.size() && m.accept(static_cast<unsigned char>(text[at])))
        ++at;
      if (at == text.size() && m.canEnd()) {
        std::printf("%s: accepted\n", path.c_str());
        continue;
      }
      rc = 1;
      const size_t from = at > 40 ? at - 40 : 0;
      std::printf(
          "%s: rejected at byte %zu%s: ...%s <here> %s...\n", path.c_str(), at,
          at == text.size() ? " (the end: more is required)" : "",
          text.substr(from, at - from).c_str(), text.substr(at, 30).c_str());
    }
    return rc;
  };
}

} // namespace llmc::cli
