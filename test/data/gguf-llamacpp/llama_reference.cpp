// llama.cpp's own reading of a GGUF, for test/e2e/gguf_llamacpp_test.cpp:
// for a prompt of token ids, the argmax of the logits at every position,
// the gap between the two largest at the last one, the greedy
// continuation (stopping at an end-of-generation token) and each greedy
// token's top-1/top-2 gap (greedy_margins). Built and run by
// make.sh against the prebuilt libllama of bench/e2e/peers.
#include "ggml-backend.h"
#include "llama.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

static int argmax(const float *l, int n) {
  return int(std::max_element(l, l + n) - l);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MODEL.gguf IDS(a,b,...) N_GEN\n", argv[0]);
    return 2;
  }
  std::vector<llama_token> ids;
  std::stringstream ss(argv[2]);
  for (std::string t; std::getline(ss, t, ',');)
    ids.push_back(std::atoi(t.c_str()));
  const int nGen = std::atoi(argv[3]);
  llama_backend_init();
  if (const char *bins = std::getenv("NLC_BINS"))
    ggml_backend_load_all_from_path(bins);
  llama_model *model =
      llama_model_load_from_file(argv[1], llama_model_default_params());
  if (!model)
    return 1;
  llama_context_params cp = llama_context_default_params();
  cp.n_ctx = 256;
  cp.n_batch = 256;
  cp.n_threads = cp.n_threads_batch = 2;
  llama_context *ctx = llama_init_from_model(model, cp);
  const llama_vocab *vocab = llama_model_get_vocab(model);
  const int nv = llama_vocab_n_tokens(vocab);
  const int n = int(ids.size());
  llama_batch b = llama_batch_init(n, 0, 1);
  for (int i = 0; i < n; ++i) {
    b.token[i] = ids[i];
    b.pos[i] = i;
    b.n_seq_id[i] = 1;
    b.seq_id[i][0] = 0;
    b.logits[i] = 1;
  }
  b.n_tokens = n;
  if (llama_decode(ctx, b))
    return 1;
  std::printf("{\"prompt_ids\":[");
  for (int i = 0; i < n; ++i)
    std::printf("%s%d", i ? "," : "", ids[i]);
  std::printf("],\"argmax\":[");
  for (int i = 0; i < n; ++i)
    std::printf("%s%d", i ? "," : "", argmax(llama_get_logits_ith(ctx, i), nv));
  std::vector<float> last(llama_get_logits_ith(ctx, n - 1),
                          llama_get_logits_ith(ctx, n - 1) + nv);
  std::partial_sort(last.begin(), last.begin() + 2, last.end(),
                    std::greater<float>());
  std::printf("],\"last_top2_margin\":%.6f,\"greedy\":[", last[0] - last[1]);
  // Each greedy token's top-1/top-2 gap: a step decided by less than a
  // backend's rounding is no fair comparison (nor is anything after it).
  auto margin = [&](const float *l) {
    std::vector<float> v(l, l + nv);
    std::partial_sort(v.begin(), v.begin() + 2, v.end(), std::greater<float>());
    return v[0] - v[1];
  };
  std::vector<float> margins{margin(llama_get_logits_ith(ctx, n - 1))};
  llama_token tok = argmax(llama_get_logits_ith(ctx, n - 1), nv);
  for (int j = 0; j < nGen; ++j) {
    std::printf("%s%d", j ? "," : "", tok);
    if (llama_vocab_is_eog(vocab, tok) || j + 1 == nGen)
      break;
    llama_batch one = llama_batch_get_one(&tok, 1);
    if (llama_decode(ctx, one))
      return 1;
    tok = argmax(llama_get_logits_ith(ctx, -1), nv);
    margins.push_back(margin(llama_get_logits_ith(ctx, -1)));
  }
  std::printf("],\"greedy_margins\":[");
  for (size_t j = 0; j < margins.size(); ++j)
    std::printf("%s%.6f", j ? "," : "", margins[j]);
  std::printf("]}\n");
  llama_batch_free(b);
  llama_free(ctx);
  llama_model_free(model);
  return 0;
}
