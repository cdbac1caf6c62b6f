// Quantize a GGUF with llama.cpp's own quantizer (libllama from
// node-llama-cpp), e.g. to Q4_K_M. Usage: llama_quantize IN.gguf OUT.gguf FTYPE
// (FTYPE: Q4_K_M Q5_K_M Q6_K Q4_K_S Q8_0 Q4_0 Q2_K Q3_K_M IQ4_NL)
#include "ggml-backend.h"
#include "llama.h"
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s IN OUT FTYPE\n", argv[0]);
    return 2;
  }
  std::map<std::string, llama_ftype> t = {
      {"Q4_0", LLAMA_FTYPE_MOSTLY_Q4_0},
      {"Q8_0", LLAMA_FTYPE_MOSTLY_Q8_0},
      {"Q4_K_M", LLAMA_FTYPE_MOSTLY_Q4_K_M},
      {"Q4_K_S", LLAMA_FTYPE_MOSTLY_Q4_K_S},
      {"Q5_K_M", LLAMA_FTYPE_MOSTLY_Q5_K_M},
      {"Q6_K", LLAMA_FTYPE_MOSTLY_Q6_K},
      {"Q2_K", LLAMA_FTYPE_MOSTLY_Q2_K},
      {"Q3_K_M", LLAMA_FTYPE_MOSTLY_Q3_K_M},
      {"IQ4_NL", LLAMA_FTYPE_MOSTLY_IQ4_NL}};
  if (!t.count(argv[3])) {
    fprintf(stderr, "unknown ftype %s\n", argv[3]);
    return 2;
  }
  llama_backend_init();
  const char *bins = getenv("NLC_BINS");
  ggml_backend_load_all_from_path(
      bins ? bins
           : "/tmp/llmc-peer/node_modules/@node-llama-cpp/linux-x64/bins/"
             "linux-x64");
  llama_model_quantize_params p = llama_model_quantize_default_params();
  p.ftype = t[argv[3]];
  p.nthread = 2;
  uint32_t rc = llama_model_quantize(argv[1], argv[2], &p);
  fprintf(stderr, "llama_model_quantize rc=%u\n", rc);
  return rc ? 1 : 0;
}
