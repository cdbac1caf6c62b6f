//===- commands.h - The llmc subcommands ----------------------*- C++ -*-===//
//
// Each subcommand registers its flags on the CLI11 app and returns the action
// to run when it is chosen. Actions return the process exit code and report
// bad input by throwing llmc::Error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>
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

} // namespace llmc::cli
