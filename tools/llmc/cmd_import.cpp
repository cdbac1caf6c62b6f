//===- cmd_import.cpp - llmc import MODEL --emit=mlir
//----------------------===//

#include "commands.h"
#include "llmc/import/Importer.h"
#include "llmc/support/error.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace llmc::cli {

Action addImport(CLI::App &app) {
  struct Options {
    std::string model, emit = "mlir", output = "-";
    bool generic = false;
  };
  auto opts = std::make_shared<Options>();
  app.add_option("MODEL", opts->model,
                 "config.json, a checkpoint folder, or a .gguf file")
      ->required();
  app.add_option("--emit", opts->emit, "What to print: mlir")
      ->check(CLI::IsMember({"mlir"}));
  app.add_option("-o,--output", opts->output, "Output file (- for stdout)");
  app.add_flag("--generic", opts->generic, "Print ops in MLIR's generic form");
  return [opts]() -> int {
    mlir::MLIRContext context;
    auto module = import::importModel(context, opts->model);
    std::error_code ec;
    llvm::raw_fd_ostream out(opts->output, ec, llvm::sys::fs::OF_Text);
    if (ec)
      throw Error(opts->output + ": cannot write: " + ec.message());
    mlir::OpPrintingFlags flags;
    if (opts->generic)
      flags.printGenericOpForm();
    module->print(out, flags);
    out << "\n";
    return 0;
  };
}

} // namespace llmc::cli
