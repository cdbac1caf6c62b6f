//===- cmd_compiler.cpp - compile and import, from libllmc-compiler.so ----===//
//
// The compiler links MLIR and LLVM, whose libraries alone cost ~45 MB of
// resident memory and tens of milliseconds at start; run, chat, serve and
// bench never need them. So `llmc compile` and `llmc import` live in
// libllmc-compiler.so (compiler_main.cpp), loaded only when one of them
// runs, and every argument after the subcommand goes to it unparsed (its
// --help too).
//
//===----------------------------------------------------------------------===//

#include "commands.h"
#include "llmc/support/error.h"

#include <dlfcn.h>

#include <filesystem>
#include <vector>

namespace llmc::cli {
namespace {

using CompilerMain = int (*)(const char *command, int argc, char **argv);

CompilerMain loadCompiler() {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec).parent_path();
  std::string tried;
  for (const fs::path &p :
       {exe / "libllmc-compiler.so",
        exe / ".." / "lib" / "llmc" / "libllmc-compiler.so"}) {
    if (!fs::exists(p, ec))
      continue;
    void *h = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *e = dlerror();
      throw Error("cannot load " + p.string() + ": " + (e ? e : "?"));
    }
    if (auto fn =
            reinterpret_cast<CompilerMain>(dlsym(h, "llmc_compiler_main")))
      return fn;
    throw Error(p.string() + " has no llmc_compiler_main");
  }
  throw Error("this llmc has no compiler (libllmc-compiler.so is not next to "
              "it or in ../lib/llmc; build with -DLLMC_ENABLE_COMPILER=ON)");
}

Action forward(CLI::App &app, const char *command) {
  app.prefix_command();
  app.allow_extras();
  app.set_help_flag(); // the compiler's own --help describes the flags
  return [&app, command]() -> int {
    std::vector<std::string> args = app.remaining();
    std::vector<char *> argv;
    std::string self = std::string("llmc ") + command;
    argv.push_back(self.data());
    for (std::string &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    return loadCompiler()(command, int(argv.size() - 1), argv.data());
  };
}

} // namespace

Action addImport(CLI::App &app) { return forward(app, "import"); }
Action addCompile(CLI::App &app) { return forward(app, "compile"); }

} // namespace llmc::cli
