//===- cmd_pending.cpp - Subcommands that do not exist yet
//-----------------===//
//
// These are declared so `llmc --help` shows the whole tool, and refuse to run
// with a message that says so: a command that silently succeeds would lie.
//
//===----------------------------------------------------------------------===//

#include "commands.h"
#include "llmc/support/error.h"

namespace llmc::cli {
#ifndef LLMC_HAVE_COMPILER
namespace {
Action pending(CLI::App &app, const char *what) {
  app.allow_extras();
  std::string name = app.get_name();
  return [name, what]() -> int {
    throw Error("'llmc " + name + "' is not implemented yet (" + what + ")");
  };
}
} // namespace

Action addImport(CLI::App &app) {
  return pending(app, "this llmc was built without the compiler");
}
Action addCompile(CLI::App &app) {
  return pending(app, "this llmc was built without the compiler");
}
#endif

} // namespace llmc::cli
