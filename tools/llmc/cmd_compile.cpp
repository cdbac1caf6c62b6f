//===- cmd_compile.cpp - llmc compile MODEL -o PLAN
//------------------------===//

#include "commands.h"
#include "compile_report.h"
#include "llmc/Passes/EmitPlan.h"
#include "llmc/Passes/Passes.h"
#include "llmc/import/Importer.h"
#include "llmc/support/error.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

namespace llmc::cli {

Action addCompile(CLI::App &app) {
  struct Options {
    std::string model, output, target = "cpu", dtype = "f32", quant = "auto",
                               kvDtype;
    int64_t group = 32, tp = 1;
    bool printAll = false, noQuantizeHead = false, verbose = false,
         quiet = false;
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
                 "Weight dtype: f32, bf16 or f16 (with --quant: the weights "
                 "--quant leaves)")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  app.add_option("--kv-dtype", o->kvDtype,
                 "KV-cache dtype: f32, bf16, f16, int8 (a scale per token "
                 "and kv head) or fp8 (e4m3, the same scales); default: "
                 "bf16 for quantized weights, else --dtype. A run may "
                 "choose another (llmc run --kv-dtype)")
      ->check(CLI::IsMember({"f32", "bf16", "f16", "int8", "fp8"}));
  app.add_option("--quant", o->quant,
                 "Weight quantization: none, int8, int4, or auto (the "
                 "default: GGUF weights in block formats stay quantized: "
                 "Q4_K, Q5_K, Q6_K and MXFP4 as they are, the others as int8 "
                 "or int4 in groups of 32; none otherwise)")
      ->check(CLI::IsMember({"auto", "none", "int8", "int4"}));
  app.add_option("--group", o->group, "int4 group size: 32 or 128")
      ->check(CLI::IsMember({32, 128}));
  app.add_option("--tp", o->tp,
                 "Tensor-parallel ranks: attention heads and MLPs split "
                 "over N ranks (llmc-shard), run with mpirun -n N")
      ->check(CLI::Range(1, 1024));
  app.add_flag("--no-quantize-head", o->noQuantizeHead,
               "Keep the LM head and the embedding in f32 (by default the "
               "head takes --dtype or --quant like every other linear, and "
               "the embedding bf16 or --dtype f16)");
  app.add_flag("-v,--verbose", o->verbose,
               "Report the error of every weight converted from a GGUF block "
               "format (by default: the worst per format)");
  app.add_flag("-q,--quiet", o->quiet,
               "Print only warnings and errors (no progress, no summary)");
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
    CompileReport report(o->quiet, o->verbose);
    report.phase("importing " + o->model);
    auto module = import::importModel(context, o->model);

    mlir::llmc::PipelineOptions po;
    po.dtype = o->dtype;
    const std::string quant = mlir::llmc::resolveQuant(*module, o->quant);
    po.quant = quant;
    po.kvDtype = o->kvDtype.empty()
                     ? mlir::llmc::defaultKvDtype(*module, o->dtype, quant)
                     : o->kvDtype;
    po.group = o->group;
    po.tp = o->tp;
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
    report.phase("running the passes");
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
    eo.progress = [&report](const WriteProgress &p) { report.progress(p); };
    eo.converted = [&report](const mlir::llmc::Conversion &c) {
      report.converted(c);
    };
    report.phase("writing " + o->output + " (" +
                 std::to_string(lowered->weights.size()) + " weights)");
    mlir::llmc::emitPlan(*module, *lowered, eo, o->output);
    report.finished(o->output, lowered->weights.size(), lowered->graphs.size());
    return 0;
  };
}

} // namespace llmc::cli
