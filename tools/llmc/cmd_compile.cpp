//===- cmd_compile.cpp - llmc compile MODEL -o PLAN ------------------------===//

#include "commands.h"
#include "llmc/support/error.h"

namespace llmc::cli {

Action addCompile(CLI::App &app) {
  struct Options {
    std::string model, output, target = "cpu", dtype = "f32", quant = "none";
  };
  auto opts = std::make_shared<Options>();
  app.add_option("MODEL", opts->model,
                 "config.json, a checkpoint folder, or a .gguf file")
      ->required();
  app.add_option("-o,--output", opts->output, "The plan file to write")
      ->required();
  app.add_option("--target", opts->target, "ref, cpu or cuda")
      ->check(CLI::IsMember({"ref", "cpu", "cuda"}));
  app.add_option("--dtype", opts->dtype, "Compute dtype: f32, bf16 or f16")
      ->check(CLI::IsMember({"f32", "bf16", "f16"}));
  app.add_option("--quant", opts->quant, "Weight quantization: none, int8, int4")
      ->check(CLI::IsMember({"none", "int8", "int4"}));
  return [opts]() -> int {
    throw Error("'llmc compile' cannot write plans yet: the plan format and "
                "the passes that lower to it are not implemented (use 'llmc "
                "import' to see the IR)");
  };
}

} // namespace llmc::cli
