// llmc-make-gguf MODEL_DIR -o OUT.gguf [--type f32|f16|bf16|q8_0|q4_0]
//                [--per-expert] [--fused-gate-up]
#include "convert.h"

#include "llmc/support/error.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <map>

using namespace llmc;

int main(int argc, char **argv) {
  CLI::App app{"Convert a Hugging Face checkpoint to GGUF (as llama.cpp's "
               "convert_hf_to_gguf.py)"};
  std::string dir, out, type = "f32";
  app.add_option("model_dir", dir,
                 "checkpoint folder (config.json, "
                 "*.safetensors, tokenizer files)")
      ->required();
  app.add_option("-o,--output", out, "GGUF file to write")->required();
  const std::map<std::string, weights::DType> types = {
      {"f32", weights::DType::F32},
      {"f16", weights::DType::F16},
      {"bf16", weights::DType::BF16},
      {"q8_0", weights::DType::Q8_0},
      {"q4_0", weights::DType::Q4_0}};
  app.add_option("--type", type, "storage type of 2-D weights")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "q8_0", "q4_0"}));
  bool perExpert = false;
  app.add_flag("--per-expert", perExpert,
               "write an MoE's experts one tensor each (ffn_gate.E.weight, "
               "llama.cpp's older layout) instead of stacked (*_exps)");
  bool fusedGateUp = false;
  app.add_flag("--fused-gate-up", fusedGateUp,
               "gpt-oss: gate and up as one ffn_gate_up_exps (gate rows, then "
               "up rows, per expert) instead of ffn_gate_exps + ffn_up_exps");
  CLI11_PARSE(app, argc, argv);
  try {
    nlohmann::json config = make_gguf::readJson(dir, "config.json");
    weights::GGUFWriter writer;
    make_gguf::convertModel(dir, config, types.at(type), perExpert, fusedGateUp,
                            writer);
    make_gguf::convertTokenizer(dir, config, writer);
    writer.write(out);
  } catch (const Error &e) {
    std::cerr << "llmc-make-gguf: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
