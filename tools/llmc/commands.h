//===- commands.h - The llmc subcommands ----------------------*- C++ -*-===//
//
// Each subcommand registers its flags on the CLI11 app and returns the action
// to run when it is chosen. Actions return the process exit code and report
// bad input by throwing llmc::Error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/support/error.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>

namespace llmc::cli {

using Action = std::function<int()>;

Action addImport(CLI::App &app);
Action addCompile(CLI::App &app);
Action addRun(CLI::App &app);
Action addInspect(CLI::App &app);
Action addBackends(CLI::App &app);
Action addTokenize(CLI::App &app);
Action addChat(CLI::App &app);
Action addServe(CLI::App &app);
Action addBench(CLI::App &app);
Action addChatTemplate(CLI::App &app);
Action addPerplexity(CLI::App &app);
Action addGrammar(CLI::App &app);

/// Runs an action as the tool does: llmc::Error is the user's input at
/// fault ("llmc: error: ...", exit 1), anything else an internal error.
inline int runAction(const Action &action) {
  try {
    return action();
  } catch (const llmc::Error &e) {
    std::fprintf(stderr, "llmc: error: %s\n", e.what());
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "llmc: internal error: %s\n", e.what());
    return 2;
  }
}

} // namespace llmc::cli
