// Writes what ggml itself makes of fixed inputs, for each block format llmc
// reads: <TYPE>.bin = u32 ggml type, u32 value count, ggml_quantize_chunk's
// bytes, then ggml's own to_float of them (f32). Built and run by make.sh
// against llama.cpp's prebuilt libggml-base (bench/e2e/peers/setup.sh).
#include "ggml.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const int64_t rows = 3, perRow = 512, n = rows * perRow;
  // Rows of different scales, signs and offsets (the K-quants' mins), and
  // one outlier per row; a fixed LCG so the file never changes.
  std::vector<float> x(n);
  uint64_t s = 12345;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    float u = float((s >> 40) & 0xffffff) / float(1 << 24) - 0.5f;
    int64_t r = i / perRow;
    x[i] = u * (r == 0 ? 0.05f : r == 1 ? 1.7f : 0.3f) + (r == 2 ? 0.2f : 0.0f);
    if (i % perRow == 77)
      x[i] = 9.0f * (r == 1 ? -1.0f : 1.0f);
  }
  const ggml_type types[] = {GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,
                             GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_IQ4_NL,
                             GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K,
                             GGML_TYPE_Q5_K, GGML_TYPE_Q6_K};
  for (ggml_type t : types) {
    const ggml_type_traits *tr = ggml_get_type_traits(t);
    std::vector<uint8_t> q(ggml_row_size(t, perRow) * rows);
    size_t wrote =
        ggml_quantize_chunk(t, x.data(), q.data(), 0, rows, perRow, nullptr);
    std::vector<float> y(n);
    tr->to_float(q.data(), y.data(), n);
    std::string path = std::string(argv[1]) + "/" + tr->type_name + ".bin";
    FILE *f = std::fopen(path.c_str(), "wb");
    uint32_t head[2] = {uint32_t(t), uint32_t(n)};
    std::fwrite(head, 4, 2, f);
    std::fwrite(q.data(), 1, wrote, f);
    std::fwrite(y.data(), 4, y.size(), f);
    std::fclose(f);
    std::printf("%s: %zu bytes\n", path.c_str(), wrote);
  }
  ggml_quantize_free();
  return 0;
}
