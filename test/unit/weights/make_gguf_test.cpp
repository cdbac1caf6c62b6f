// Runs the llmc-make-gguf tool on test checkpoints and reads the result back.
#include "llmc/weights/gguf.h"
#include "llmc/weights/rope_permute.h"
#include "llmc/weights/safetensors.h"

#include "test_util.h"

#include <cstdlib>

namespace llmc::weights::test {
namespace {

std::vector<float> floats(const TensorRef &t) {
  std::vector<float> v(static_cast<size_t>(t.numElements()));
  toFloat32(t, v.data());
  return v;
}

int makeGguf(const std::string &model, const std::string &out,
             const std::string &type) {
  std::string cmd = std::string(LLMC_BIN_DIR) + "/llmc-make-gguf " +
                    modelDir(model) + " -o " + out + " --type " + type +
                    " 2>/dev/null";
  return std::system(cmd.c_str());
}

TEST(MakeGGUF, LlamaGqaF32) {
  TempDir d;
  std::string out = d.file("gqa.gguf");
  ASSERT_EQ(makeGguf("llama-gqa", out, "f32"), 0);
  GGUFFile f(out);
  EXPECT_EQ(f.getString("general.architecture"), "llama");
  EXPECT_EQ(f.getString("general.name"), "llama-gqa");
  EXPECT_EQ(f.getInt("llama.block_count"), 3);
  EXPECT_EQ(f.getInt("llama.context_length"), 2048);
  EXPECT_EQ(f.getInt("llama.embedding_length"), 128);
  EXPECT_EQ(f.getInt("llama.feed_forward_length"), 256);
  EXPECT_EQ(f.getInt("llama.attention.head_count"), 8);
  EXPECT_EQ(f.getInt("llama.attention.head_count_kv"), 2);
  EXPECT_EQ(f.getInt("llama.rope.dimension_count"), 16);
  EXPECT_EQ(f.getInt("llama.vocab_size"), 2048);
  EXPECT_FLOAT_EQ(f.getFloat("llama.rope.freq_base"), 10000.0f);
  EXPECT_FLOAT_EQ(f.getFloat("llama.attention.layer_norm_rms_epsilon"), 1e-5f);
  EXPECT_EQ(f.getString("tokenizer.ggml.model"), "gpt2");
  auto tokens = f.getStringArray("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 2048u);
  EXPECT_EQ(tokens[2047], "<|endoftext|>");
  auto types = f.getIntArray("tokenizer.ggml.token_type");
  EXPECT_EQ(types[0], 1);
  EXPECT_EQ(types[2047], 3);
  EXPECT_EQ(f.getStringArray("tokenizer.ggml.merges").size(), 1791u);
  EXPECT_EQ(f.getStringArray("tokenizer.ggml.merges")[0], "\xc4\xa0 t");
  EXPECT_EQ(f.getInt("tokenizer.ggml.bos_token_id"), 2047);
  EXPECT_EQ(f.getInt("tokenizer.ggml.eos_token_id"), 2047);

  EXPECT_EQ(f.tensors().size(), 2u + 1 + 3 * 9);
  EXPECT_EQ(f.find("token_embd.weight")->shape,
            (std::vector<int64_t>{2048, 128}));
  EXPECT_EQ(f.find("output.weight")->shape, (std::vector<int64_t>{2048, 128}));
  EXPECT_EQ(f.find("blk.2.attn_k.weight")->shape,
            (std::vector<int64_t>{32, 128}));
  EXPECT_EQ(f.find("blk.0.ffn_down.weight")->shape,
            (std::vector<int64_t>{128, 256}));
  EXPECT_EQ(f.find("output_norm.weight")->dtype, DType::F32);

  // Q/K rows are permuted (K with the KV head count); the inverse gives HF's.
  auto ck = Checkpoint::open(modelDir("llama-gqa"));
  struct Case {
    const char *gg, *hf;
    int64_t heads;
  };
  for (Case c : {Case{"blk.1.attn_q.weight",
                      "model.layers.1.self_attn.q_proj.weight", 8},
                 Case{"blk.1.attn_k.weight",
                      "model.layers.1.self_attn.k_proj.weight", 2}}) {
    const TensorRef &g = *f.find(c.gg);
    auto permuted = floats(g);
    std::vector<float> back(permuted.size());
    unpermuteGGUFRope(permuted.data(), back.data(), g.shape[0], g.shape[1],
                      c.heads);
    EXPECT_EQ(back, floats(*ck.find(c.hf))) << c.gg;
    EXPECT_NE(permuted, back) << c.gg;
  }
  EXPECT_EQ(floats(*f.find("blk.1.attn_v.weight")),
            floats(*ck.find("model.layers.1.self_attn.v_proj.weight")));
}

TEST(MakeGGUF, QuantizedTypes) {
  TempDir d;
  for (const char *type : {"q8_0", "q4_0", "f16", "bf16"}) {
    std::string out = d.file(std::string(type) + ".gguf");
    ASSERT_EQ(makeGguf("llama-gqa", out, type), 0) << type;
    GGUFFile f(out);
    DType want = std::string(type) == "q8_0"   ? DType::Q8_0
                 : std::string(type) == "q4_0" ? DType::Q4_0
                 : std::string(type) == "f16"  ? DType::F16
                                               : DType::BF16;
    EXPECT_EQ(f.find("blk.0.ffn_up.weight")->dtype, want) << type;
    EXPECT_EQ(f.find("blk.0.ffn_up.weight")->shape,
              (std::vector<int64_t>{256, 128}));
    EXPECT_EQ(f.find("blk.0.attn_norm.weight")->dtype, DType::F32);
  }
  // Rows of 172 are not whole blocks: stored F16, as convert_hf_to_gguf.
  std::string out = d.file("mha.gguf");
  ASSERT_EQ(makeGguf("llama-mha", out, "q8_0"), 0);
  GGUFFile f(out);
  EXPECT_EQ(f.find("blk.0.ffn_down.weight")->dtype, DType::F16);
  EXPECT_EQ(f.find("blk.0.ffn_up.weight")->dtype, DType::Q8_0);
}

TEST(MakeGGUF, SentencePieceTokenizer) {
  TempDir d;
  std::string out = d.file("mha.gguf");
  ASSERT_EQ(makeGguf("llama-mha", out, "f32"), 0);
  GGUFFile f(out);
  EXPECT_EQ(f.getString("tokenizer.ggml.model"), "llama");
  auto tokens = f.getStringArray("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 2000u);
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[3], "<0x00>");
  auto types = f.getIntArray("tokenizer.ggml.token_type");
  EXPECT_EQ(types[0], 2);
  EXPECT_EQ(types[1], 3);
  EXPECT_EQ(types[3], 6);
  EXPECT_EQ(types[300], 1);
  EXPECT_EQ(f.getFloatArray("tokenizer.ggml.scores").size(), 2000u);
  EXPECT_EQ(f.getInt("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(f.getInt("tokenizer.ggml.eos_token_id"), 2);
  EXPECT_EQ(f.getInt("tokenizer.ggml.unknown_token_id"), 0);
  EXPECT_TRUE(f.getBool("tokenizer.ggml.add_bos_token"));
}

TEST(MakeGGUF, Qwen2TiedWithBiases) {
  TempDir d;
  std::string out = d.file("qwen.gguf");
  ASSERT_EQ(makeGguf("qwen2-bias-tied", out, "f32"), 0);
  GGUFFile f(out);
  EXPECT_EQ(f.getString("general.architecture"), "qwen2");
  EXPECT_EQ(f.getInt("qwen2.attention.head_count_kv"), 2);
  EXPECT_FLOAT_EQ(f.getFloat("qwen2.rope.freq_base"), 1e6f);
  EXPECT_EQ(f.find("output.weight"), nullptr);
  ASSERT_NE(f.find("blk.0.attn_q.bias"), nullptr);
  auto ck = Checkpoint::open(modelDir("qwen2-bias-tied"));
  // No permutation for qwen2.
  EXPECT_EQ(floats(*f.find("blk.0.attn_q.bias")),
            floats(*ck.find("model.layers.0.self_attn.q_proj.bias")));
}

TEST(MakeGGUF, ShardedAndBf16Inputs) {
  TempDir d;
  ASSERT_EQ(makeGguf("llama-sharded", d.file("s.gguf"), "f32"), 0);
  ASSERT_EQ(makeGguf("llama-bf16", d.file("b.gguf"), "bf16"), 0);
  GGUFFile b(d.file("b.gguf"));
  auto ck = Checkpoint::open(modelDir("llama-bf16"));
  // BF16 -> float -> BF16 is exact.
  EXPECT_EQ(floats(*b.find("blk.0.attn_v.weight")),
            floats(*ck.find("model.layers.0.self_attn.v_proj.weight")));
}

TEST(MakeGGUF, Gpt2AsLlamaCppWritesIt) {
  TempDir d;
  ASSERT_EQ(makeGguf("gpt2", d.file("g.gguf"), "f32"), 0);
  GGUFFile g(d.file("g.gguf"));
  EXPECT_EQ(g.getString("general.architecture"), "gpt2");
  EXPECT_EQ(g.getInt("gpt2.feed_forward_length"), 256);
  auto ck = Checkpoint::open(modelDir("gpt2"));
  // Conv1D [in, out] is stored [out, in].
  const TensorRef *qkv = g.find("blk.0.attn_qkv.weight");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->shape, (std::vector<int64_t>{192, 64}));
  std::vector<float> in =
                         floats(*ck.find("transformer.h.0.attn.c_attn.weight")),
                     out = floats(*qkv);
  EXPECT_EQ(out[1 * 64 + 2], in[2 * 192 + 1]);
  EXPECT_EQ(g.find("blk.0.attn.bias"), nullptr);
}

TEST(MakeGGUF, ErrorsExitNonZero) {
  TempDir d;
  // Mistral's sliding window has no place in llama.cpp's "llama" keys.
  EXPECT_NE(makeGguf("mistral-swa", d.file("g.gguf"), "f32"), 0);
  EXPECT_NE(makeGguf("no-such-model", d.file("g.gguf"), "f32"), 0);
}

} // namespace
} // namespace llmc::weights::test
