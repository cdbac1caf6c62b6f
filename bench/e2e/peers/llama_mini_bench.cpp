// Minimal native llama.cpp bench (ours) linked against the SAME prebuilt
// libllama / libggml that the npm package @node-llama-cpp/linux-x64 ships, to
// measure llama.cpp without the Node.js layer. Mirrors llama-bench: ggml
// threadpool (poll=50) attached, pp = one llama_decode of a PP-token batch
// (logits for the last token only, n_ubatch = PP), tg = TG single-token
// llama_decode calls, here after a TGP-token prompt and with greedy argmax
// sampling. Warm-up run first; each rep timed separately.
//
// Build (headers from the llama.cpp source bundled in node-llama-cpp, see
// peers.md):
//   B=/tmp/llmc-bench/peer/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64;
//   S=/tmp/llmc-bench/peer/llama.cpp-src
//   g++ -O2 -std=c++17 -I$S/include -I$S/ggml/include -o
//   /tmp/llmc-bench/peer/llama_mini_bench \
//       bench-peers/llama_mini_bench.cpp -L$B -l:libllama.v0.4.0.so
//       -l:libggml.v0.4.0.so \ -l:libggml-base.so -Wl,-rpath,$B
// Run:  /tmp/llmc-bench/peer/llama_mini_bench MODEL.gguf [threads=2] [pp=512]
// [tg=128] [tgp=32] [reps=3] [fa=0|1|-1]
//        [batch=1]
// batch > 1 adds batched decode (llama-batched-bench's way): `batch` sequences
// in one unified KV cache, each prefilled with the same tgp-token prompt, then
// tg steps of one llama_batch holding one token of every sequence (greedy per
// sequence): tg_batch_median is tokens/s over all sequences.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "llama.h"

static double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}
static void quiet(ggml_log_level lvl, const char *text, void *) {
  if (lvl == GGML_LOG_LEVEL_WARN || lvl == GGML_LOG_LEVEL_ERROR ||
      getenv("MB_VERBOSE"))
    fputs(text, stderr);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s model.gguf [threads pp tg tgp reps fa]\n",
            argv[0]);
    return 2;
  }
  const char *path = argv[1];
  int nt = argc > 2 ? atoi(argv[2]) : 2, PP = argc > 3 ? atoi(argv[3]) : 512,
      TG = argc > 4 ? atoi(argv[4]) : 128;
  int TGP = argc > 5 ? atoi(argv[5]) : 32, REPS = argc > 6 ? atoi(argv[6]) : 3,
      fa = argc > 7 ? atoi(argv[7]) : 0;
  int NB = argc > 8 ? atoi(argv[8]) : 1;
  if (NB < 1) {
    fprintf(stderr, "batch must be at least 1\n");
    return 2;
  }

  llama_log_set(quiet, nullptr);
  const char *bins = getenv("NLC_BINS");
  // NLC_BINS: where setup.sh put the prebuilt libraries (run_bench.sh sets it).
  ggml_backend_load_all_from_path(
      bins ? bins
           : "/tmp/llmc-bench/peer/node_modules/@node-llama-cpp/linux-x64/bins/"
             "linux-x64");
  llama_backend_init();
  auto *cpu_dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
  if (!cpu_dev) {
    fprintf(stderr, "no CPU backend\n");
    return 1;
  }
  auto *cpu_reg = ggml_backend_dev_backend_reg(cpu_dev);
  auto *tp_new =
      (decltype(ggml_threadpool_new) *)ggml_backend_reg_get_proc_address(
          cpu_reg, "ggml_threadpool_new");

  llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  double t0 = now();
  llama_model *model = llama_model_load_from_file(path, mp);
  if (!model) {
    fprintf(stderr, "load failed\n");
    return 1;
  }
  double t_load = now() - t0;

  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = std::max(1024, std::max(PP, NB * (TGP + TG)) + 16);
  cp.n_batch = cp.n_ubatch = std::max(PP, NB * TGP);
  cp.n_seq_max = NB;
  cp.kv_unified = true;
  cp.n_threads = cp.n_threads_batch = nt;
  cp.flash_attn_type = fa < 0 ? LLAMA_FLASH_ATTN_TYPE_AUTO
                       : fa   ? LLAMA_FLASH_ATTN_TYPE_ENABLED
                              : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  llama_context *ctx = llama_init_from_model(model, cp);
  if (!ctx) {
    fprintf(stderr, "ctx failed\n");
    return 1;
  }
  ggml_threadpool_params tpp = ggml_threadpool_params_default(nt);
  tpp.poll = 50;
  ggml_threadpool *tp = tp_new(&tpp);
  if (!getenv("MB_NO_THREADPOOL"))
    llama_attach_threadpool(ctx, tp, nullptr); // llama-bench does attach

  const llama_vocab *vocab = llama_model_get_vocab(model);
  const int nv = llama_vocab_n_tokens(vocab);
  std::vector<llama_token> prompt(std::max(PP, TGP));
  srand(1);
  for (auto &t : prompt)
    t = rand() % nv;

  auto prefill = [&](int n) {
    llama_memory_clear(llama_get_memory(ctx), true);
    double a = now();
    if (llama_decode(ctx, llama_batch_get_one(prompt.data(), n))) {
      fprintf(stderr, "decode failed\n");
      exit(1);
    }
    llama_synchronize(ctx);
    return now() - a;
  };
  std::vector<llama_token> gen;
  auto decode = [&]() {
    llama_memory_clear(llama_get_memory(ctx), true);
    if (llama_decode(ctx, llama_batch_get_one(prompt.data(), TGP - 1)))
      exit(1);
    llama_synchronize(ctx);
    gen.clear();
    llama_token tok = prompt[TGP - 1];
    double a = now();
    for (int i = 0; i < TG; i++) {
      if (llama_decode(ctx, llama_batch_get_one(&tok, 1))) {
        fprintf(stderr, "decode failed\n");
        exit(1);
      }
      const float *lg = llama_get_logits_ith(ctx, -1);
      tok = (llama_token)(std::max_element(lg, lg + nv) - lg);
      gen.push_back(tok);
    }
    return now() - a;
  };

  // NB sequences, one token each per llama_decode.
  auto decodeBatch = [&]() {
    llama_memory_clear(llama_get_memory(ctx), true);
    llama_batch b = llama_batch_init(NB * TGP, 0, 1);
    b.n_tokens = 0;
    for (int s = 0; s < NB; s++)
      for (int i = 0; i < TGP; i++) {
        int k = b.n_tokens++;
        b.token[k] = prompt[i];
        b.pos[k] = i;
        b.n_seq_id[k] = 1;
        b.seq_id[k][0] = s;
        b.logits[k] = i == TGP - 1;
      }
    if (llama_decode(ctx, b)) {
      fprintf(stderr, "batched prefill failed\n");
      exit(1);
    }
    std::vector<llama_token> tok(NB);
    for (int s = 0; s < NB; s++) {
      const float *lg = llama_get_logits_ith(ctx, (s + 1) * TGP - 1);
      tok[s] = (llama_token)(std::max_element(lg, lg + nv) - lg);
    }
    double a = now();
    for (int i = 0; i < TG; i++) {
      b.n_tokens = NB;
      for (int s = 0; s < NB; s++) {
        b.token[s] = tok[s];
        b.pos[s] = TGP + i;
        b.n_seq_id[s] = 1;
        b.seq_id[s][0] = s;
        b.logits[s] = true;
      }
      if (llama_decode(ctx, b)) {
        fprintf(stderr, "batched decode failed\n");
        exit(1);
      }
      for (int s = 0; s < NB; s++) {
        const float *lg = llama_get_logits_ith(ctx, s);
        tok[s] = (llama_token)(std::max_element(lg, lg + nv) - lg);
      }
    }
    double t = now() - a;
    llama_batch_free(b);
    return t;
  };

  if (PP > 0)
    prefill(PP); // warm-up
  decode();
  std::vector<double> pp, tg, tgb;
  for (int r = 0; r < REPS && PP > 0; r++)
    pp.push_back(PP / prefill(PP));
  for (int r = 0; r < REPS; r++)
    tg.push_back(TG / decode());
  if (NB > 1) {
    decodeBatch(); // warm-up
    for (int r = 0; r < REPS; r++)
      tgb.push_back(double(NB) * TG / decodeBatch());
  }

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("{\"model\":\"%s\",\"threads\":%d,\"fa\":%d,\"pp\":%d,\"tg\":%d,\"tg_"
         "prompt\":%d,\"pp_tok_s\":[",
         path, nt, fa, PP, TG, TGP);
  for (size_t i = 0; i < pp.size(); i++)
    printf("%s%.3f", i ? "," : "", pp[i]);
  printf("],\"tg_tok_s\":[");
  for (size_t i = 0; i < tg.size(); i++)
    printf("%s%.3f", i ? "," : "", tg[i]);
  printf("]");
  if (NB > 1) {
    printf(",\"tg_batch\":%d,\"tg_batch_tok_s\":[", NB);
    for (size_t i = 0; i < tgb.size(); i++)
      printf("%s%.3f", i ? "," : "", tgb[i]);
    printf("],\"tg_batch_median\":%.3f,\"tg_batch_step_ms\":%.3f", median(tgb),
           1e3 * NB / median(tgb));
  }
  printf(",\"pp_median\":%.3f,\"tg_median\":%.3f,\"load_s\":%.3f,\"max_rss_"
         "bytes\":%ld,\"model_size\":%llu,\"n_params\":%llu,\"greedy_head\":[",
         pp.empty() ? 0.0 : median(pp), median(tg), t_load,
         ru.ru_maxrss * 1024L, (unsigned long long)llama_model_size(model),
         (unsigned long long)llama_model_n_params(model));
  for (int i = 0; i < 8 && i < (int)gen.size(); i++)
    printf("%s%d", i ? "," : "", gen[i]);
  printf("]}\n");
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
