//===- main.cpp - The llmc command-line tool
//-------------------------------===//

#include "cli_util.h"
#include "commands.h"
#include "llmc/runtime/communicator.h"
#include "llmc/support/error.h"

#include <cstdio>
#include <map>

#ifndef LLMC_VERSION
#define LLMC_VERSION "unknown"
#endif

int main(int argc, char **argv) {
  CLI::App app{"llmc: an ahead-of-time compiler and runtime for large language "
               "models"};
  app.set_version_flag("--version", std::string("llmc ") + LLMC_VERSION);
  app.require_subcommand(1);

  using namespace llmc::cli;
  std::map<std::string, Action> actions;
  auto add = [&](const char *name, const char *about,
                 Action (*registerFn)(CLI::App &)) {
    CLI::App *sub = app.add_subcommand(name, about);
    actions[name] = registerFn(*sub);
  };
  add("import", "Import a checkpoint and print its llmc IR", addImport);
  add("compile", "Compile a checkpoint into a plan for a target", addCompile);
  add("run", "Generate text from a plan", addRun);
  add("inspect", "Show a plan's config, graphs, weights and memory",
      addInspect);
  add("backends", "List the backend plugins found and their devices",
      addBackends);
  add("tokenize", "Encode text to token ids, or decode ids to text",
      addTokenize);
  add("chat-template", "Render a chat template for messages (prints the text)",
      addChatTemplate);
  add("chat", "Interactive multi-turn chat with a plan", addChat);
  add("serve", "OpenAI-compatible HTTP server", addServe);
  add("bench", "Measure prefill and decode speed of a plan", addBench);
  add("perplexity", "Perplexity of a text file under a plan", addPerplexity);
  add("grammar", "Check JSON Schemas and GBNF grammars: llmc grammar check",
      addGrammar);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  for (CLI::App *sub : app.get_subcommands()) {
    const Action &action = actions.at(sub->get_name());
    // Under mpirun an error on one rank ends every rank (the others would
    // wait for it), and a following rank ends when rank 0 is done.
    return runAction([&action]() -> int {
      try {
        return action();
      } catch (const FollowerDone &) {
        return 0;
      } catch (const std::exception &e) {
        if (llmc::Communicator *comm = llmc::startedCommunicator()) {
          std::string what = std::string("error: ") + e.what();
          comm->abort(what.c_str());
        }
        throw;
      }
    });
  }
  return 1;
}
