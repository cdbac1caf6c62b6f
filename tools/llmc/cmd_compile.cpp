//===- cmd_compile.cpp - llmc compile MODEL -o PLAN
//------------------------===//

#include "commands.h"
#include "llmc/Passes/EmitPlan.h"
#include "llmc/Passes/Passes.h"
#include "llmc/import/Importer.h"
#include "llmc/support/error.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <unistd.h>

namespace llmc::cli {
namespace {

/// "[=====     ] 12/40 weights" on a terminal; a summary line otherwise.
void progressBar(size_t done, size_t total) {
  if (!isatty(STDERR_FILENO)) {
    if (done == total)
      std::fprintf(stderr, "converted %zu weights\n", total);
    return;
  }
  const int width = 30;
  int filled = total ? static_cast<int>(width * done / total) : width;
  std::fprintf(stderr, "\r[%.*s%*s] %zu/%zu weights", filled,
               "==============================", width - filled, "", done,
               total);
  if (done == total)
    std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

/// Per GGUF block format: how many weights were converted and the worst
/// one; with --verbose, every weight.
class ConversionReport {
public:
  explicit ConversionReport(bool verbose) : verbose_(verbose) {}

  void add(const mlir::llmc::Conversion &c) {
    float rel = c.maxAbs > 0 ? c.maxAbsError / c.maxAbs : 0;
    if (verbose_)
      std::fprintf(stderr,
                   "  %s: %s -> %s, max abs error %.3g (%.2f%% of "
                   "max |w|)\n",
                   c.weight.c_str(), c.ggmlType.c_str(), c.format.c_str(),
                   double(c.maxAbsError), 100.0 * double(rel));
    Kind &k = kinds_[c.ggmlType];
    k.format = c.format;
    ++k.count;
    if (k.count == 1 || rel > k.worstRel)
      k.worst = c, k.worstRel = rel;
  }

  void print() const {
    for (const auto &[type, k] : kinds_) {
      if (k.worst.maxAbsError == 0) {
        std::fprintf(stderr, "%s -> %s (groups of 32): %zu weights, exact\n",
                     type.c_str(), k.format.c_str(), k.count);
        continue;
      }
      std::fprintf(stderr,
                   "%s -> %s (groups of 32): %zu weights, converted with "
                   "error; worst %s: max abs error %.3g (%.2f%% of its max "
                   "|w|)%s\n",
                   type.c_str(), k.format.c_str(), k.count,
                   k.worst.weight.c_str(), double(k.worst.maxAbsError),
                   100.0 * double(k.worstRel),
                   verbose_ ? "" : " (--verbose: every weight)");
    }
  }

private:
  struct Kind {
    std::string format;
    size_t count = 0;
    mlir::llmc::Conversion worst;
    float worstRel = 0;
  };
  bool verbose_;
  std::map<std::string, Kind> kinds_;
};

} // namespace

Action addCompile(CLI::App &app) {
  struct Options {
    std::string model, output, target = "cpu", dtype = "f32", quant = "auto";
    int64_t group = 32;
    bool printAll = false, noQuantizeHead = false, verbose = false;
    std::vector<std::string> printAfter, disable;
  };
  auto o = std::make_shared<Options>();
  app.add_option("MODEL", o->model,
                 "config.json, a checkpoint folder, or a .gguf file")
      ->required();
  app.add_option("-o,--output", o->output, "The plan file to write")
      ->required();
  app.add_option("--target", o->target,
                 "ref, cpu or cuda (the default backend)")
      ->check(CLI::IsMember({"ref", "cpu", "cuda"}));
  app.add_option("--dtype", o->dtype,
                 "Weight and KV-cache dtype: f32, bf16 or f16 (with --quant: "
                 "the KV cache and the weights --quant leaves)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  app.add_option("--quant", o->quant,
                 "Weight quantization: none, int8, int4, or auto (the "
                 "default: GGUF weights in block formats stay quantized, as "
                 "int8 or int4 in groups of 32; none otherwise)")
      ->check(CLI::IsMember({"auto", "none", "int8", "int4"}));
  app.add_option("--group", o->group, "int4 group size: 32 or 128")
      ->check(CLI::IsMember({32, 128}));
  app.add_flag("--no-quantize-head", o->noQuantizeHead,
               "Keep the LM head and the embedding in f32 (by default the "
               "head takes --dtype or --quant like every other linear, and "
               "the embedding bf16 or --dtype f16)");
  app.add_flag("-v,--verbose", o->verbose,
               "Report the error of every weight converted from a GGUF block "
               "format (by default: the worst per format)");
  app.add_flag("--print-ir-after-all", o->printAll,
               "Print the IR after every pass (to stdout)");
  app.add_option("--print-ir-after", o->printAfter,
                 "Print the IR after this pass (repeatable)");
  app.add_option("--disable-pass", o->disable,
                 "Skip an optimisation pass (repeatable): llmc-fuse, "
                 "llmc-quantize, llmc-plan-memory");
  return [o]() -> int {
    mlir::MLIRContext context;
    // Without a handler MLIR prints errors but drops warnings, and a warning
    // here matters (a layer the int4 quantizer had to keep in int8).
    mlir::ScopedDiagnosticHandler diagnostics(
        &context, [](mlir::Diagnostic &d) -> mlir::LogicalResult {
          const char *kind =
              d.getSeverity() == mlir::DiagnosticSeverity::Error     ? "error"
              : d.getSeverity() == mlir::DiagnosticSeverity::Warning ? "warning"
                                                                     : nullptr;
          if (!kind)
            return mlir::failure();
          if (!llvm::isa<mlir::UnknownLoc>(d.getLocation()))
            llvm::errs() << d.getLocation() << ": ";
          llvm::errs() << kind << ": " << d << "\n";
          return mlir::success();
        });
    mlir::DialectRegistry registry;
    auto module = import::importModel(context, o->model);

    mlir::llmc::PipelineOptions po;
    po.dtype = o->dtype;
    const std::string quant = mlir::llmc::resolveQuant(*module, o->quant);
    po.quant = quant;
    po.group = o->group;
    po.quantizeHead = !o->noQuantizeHead;
    po.disabled = o->disable;
    mlir::PassManager pm(&context);
    std::string error;
    if (failed(mlir::llmc::buildPipeline(pm, po, error)))
      throw Error(error); // it names the flag at fault
    if (o->printAll || !o->printAfter.empty()) {
      context.disableMultithreading();
      auto after = [o](mlir::Pass *pass, mlir::Operation *) {
        return o->printAll ||
               std::find(o->printAfter.begin(), o->printAfter.end(),
                         pass->getArgument().str()) != o->printAfter.end();
      };
      pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                          after, /*printModuleScope=*/true,
                          /*printAfterOnlyOnChange=*/false,
                          /*printAfterOnlyOnFailure=*/false, llvm::outs());
    }
    if (failed(pm.run(*module)))
      throw Error(o->model +
                  ": compilation failed (see the diagnostics above)");
    auto lowered = mlir::llmc::lowerToGraphs(*module);
    if (failed(lowered))
      throw Error(o->model + ": lowering failed (see the diagnostics above)");

    mlir::llmc::EmitOptions eo;
    eo.target = o->target;
    eo.dtype = o->dtype;
    eo.quant = quant;
    eo.progress = progressBar;
    ConversionReport report(o->verbose);
    eo.converted = [&report](const mlir::llmc::Conversion &c) {
      report.add(c);
    };
    auto start = std::chrono::steady_clock::now();
    mlir::llmc::emitPlan(*module, *lowered, eo, o->output);
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    report.print();
    std::fprintf(stderr, "wrote %s (%zu weights, %zu graphs) in %.2f s\n",
                 o->output.c_str(), lowered->weights.size(),
                 lowered->graphs.size(), s);
    return 0;
  };
}

} // namespace llmc::cli
