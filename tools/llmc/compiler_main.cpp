//===- compiler_main.cpp - The entry of libllmc-compiler.so ---------------===//
//
// `llmc compile` and `llmc import` with their own CLI11 parser, called by the
// llmc binary (cmd_compiler.cpp) with the arguments after the subcommand.
// Errors print as llmc's own do.
//
//===----------------------------------------------------------------------===//

#include "commands.h"
#include "llmc/support/error.h"

#include <cstdio>
#include <cstring>

extern "C" __attribute__((visibility("default"))) int
llmc_compiler_main(const char *command, int argc, char **argv) {
  using namespace llmc::cli;
  bool compile = std::strcmp(command, "compile") == 0;
  CLI::App app{compile ? "Compile a checkpoint into a plan for a target"
                       : "Import a checkpoint and print its llmc IR",
               argv[0]};
  Action action = compile ? addCompile(app) : addImport(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  return runAction(action);
}
