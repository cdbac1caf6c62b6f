#include "llmc/weights/safetensors.h"

#include "llmc/support/half.h"
#include "test_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace llmc::weights::test {
namespace {

std::vector<float> floats(const TensorRef &t) {
  std::vector<float> v(static_cast<size_t>(t.numElements()));
  toFloat32(t, v.data());
  return v;
}

struct ModelCase {
  const char *dir;
  int64_t hidden, kvDim, inter, vocab, layers;
  DType dtype;
  bool tied;
};

class AllModels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(AllModels, LoadsWithExpectedShapes) {
  const ModelCase &m = GetParam();
  auto ck = Checkpoint::open(modelDir(m.dir));
  auto names = ck.names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  const TensorRef *emb = ck.find("model.embed_tokens.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->dtype, m.dtype);
  EXPECT_EQ(emb->shape, (std::vector<int64_t>{m.vocab, m.hidden}));
  EXPECT_EQ(ck.find("lm_head.weight") == nullptr, m.tied);
  for (int64_t l = 0; l < m.layers; ++l) {
    std::string p = "model.layers." + std::to_string(l) + ".";
    const TensorRef *k = ck.find(p + "self_attn.k_proj.weight");
    ASSERT_NE(k, nullptr) << p;
    EXPECT_EQ(k->shape, (std::vector<int64_t>{m.kvDim, m.hidden}));
    const TensorRef *down = ck.find(p + "mlp.down_proj.weight");
    ASSERT_NE(down, nullptr);
    EXPECT_EQ(down->shape, (std::vector<int64_t>{m.hidden, m.inter}));
    EXPECT_EQ(down->nbytes, dtypeBytes(m.dtype, m.hidden * m.inter));
  }
  // Every tensor converts, and random-init weights are finite and small.
  for (const auto &n : names) {
    auto v = floats(*ck.find(n));
    for (float x : v)
      ASSERT_TRUE(std::isfinite(x) && std::fabs(x) < 100.0f) << n;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, AllModels,
    ::testing::Values(
        ModelCase{"llama-mha", 64, 64, 172, 2000, 2, DType::F32, false},
        ModelCase{"llama-gqa", 128, 32, 256, 2048, 3, DType::F32, false},
        ModelCase{"llama-mqa", 64, 16, 192, 2048, 2, DType::F32, false},
        ModelCase{"qwen2-bias-tied", 64, 32, 160, 2048, 2, DType::F32, true},
        ModelCase{"mistral-swa", 64, 32, 192, 2048, 2, DType::F32, false},
        ModelCase{"llama-bf16", 64, 32, 176, 2048, 2, DType::BF16, false},
        ModelCase{"llama-sharded", 64, 64, 172, 2048, 2, DType::F32, false}),
    [](const auto &info) {
      std::string s = info.param.dir;
      std::replace(s.begin(), s.end(), '-', '_');
      return s;
    });

TEST(Checkpoint, KnownValues) {
  auto gqa = Checkpoint::open(modelDir("llama-gqa"));
  auto v = floats(*gqa.find("model.norm.weight"));
  EXPECT_FLOAT_EQ(v[0], 0.9116847515106201f);
  EXPECT_FLOAT_EQ(v[3], 0.9979283213615417f);
  auto q = floats(*gqa.find("model.layers.0.self_attn.q_proj.weight"));
  EXPECT_FLOAT_EQ(q[2], -0.30632519721984863f);

  auto qwen = Checkpoint::open(modelDir("qwen2-bias-tied"));
  const TensorRef *bias = qwen.find("model.layers.0.self_attn.q_proj.bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->shape, std::vector<int64_t>{64});
  EXPECT_FLOAT_EQ(floats(*bias)[0], -0.1512879580259323f);
  EXPECT_EQ(qwen.find("model.layers.0.self_attn.o_proj.bias"), nullptr);
}

TEST(Checkpoint, Bf16ConvertsExactly) {
  auto ck = Checkpoint::open(modelDir("llama-bf16"));
  const TensorRef *t = ck.find("model.layers.0.self_attn.q_proj.weight");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dtype, DType::BF16);
  auto v = floats(*t);
  EXPECT_EQ(v[0], -0.1611328125f);
  EXPECT_EQ(v[3], 0.162109375f);
  // BF16 is the top half of a float32: every value round-trips bit-exactly.
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t raw;
    std::memcpy(&raw, t->data + 2 * i, 2);
    ASSERT_EQ(floatToBf16(v[i]), raw);
    uint32_t bits;
    std::memcpy(&bits, &v[i], 4);
    ASSERT_EQ(bits & 0xffffu, 0u);
  }
  EXPECT_EQ(floats(*ck.find("model.norm.weight"))[0], 0.98828125f);
}

TEST(Checkpoint, ShardedSplitsAcrossFiles) {
  auto ck = Checkpoint::open(modelDir("llama-sharded"));
  EXPECT_EQ(ck.files().size(), 2u);
  std::set<std::string> files;
  size_t total = 0;
  for (const auto &n : ck.names()) {
    files.insert(ck.find(n)->file);
    total += ck.find(n)->nbytes;
  }
  EXPECT_EQ(files.size(), 2u);
  EXPECT_EQ(total, 1445120u); // metadata.total_size in the index
}

TEST(Checkpoint, AcceptsASingleFilePath) {
  auto ck = Checkpoint::open(modelDir("llama-mha") + "/model.safetensors");
  EXPECT_NE(ck.find("lm_head.weight"), nullptr);
}

TEST(CheckpointBad, MissingDirNamesTheFiles) {
  TempDir d;
  expectError([&] { Checkpoint::open(d.path()); },
              {"model.safetensors", "model.safetensors.index.json", d.path()});
}

class ShardedBad : public ::testing::Test {
protected:
  void SetUp() override {
    std::string t1 =
        R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
    std::string t2 =
        R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
    writeBytes(d.file("s1.safetensors"), safetensorsBytes(t1, "abcd"));
    writeBytes(d.file("s2.safetensors"), safetensorsBytes(t2, "abcd"));
    std::string both =
        R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
        R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
    writeBytes(d.file("both.safetensors"), safetensorsBytes(both, "abcdefgh"));
  }
  void index(const std::string &weightMap) {
    writeBytes(d.file("model.safetensors.index.json"),
               R"({"metadata":{},"weight_map":)" + weightMap + "}");
  }
  TempDir d;
};

TEST_F(ShardedBad, GoodIndexLoads) {
  index(R"({"a":"s1.safetensors","b":"s2.safetensors"})");
  auto ck = Checkpoint::open(d.path());
  EXPECT_EQ(ck.names(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(ShardedBad, MissingShard) {
  index(R"({"a":"s1.safetensors","b":"s3.safetensors"})");
  expectError([&] { Checkpoint::open(d.path()); },
              {"s3.safetensors", "tensor 'b'", "does not exist"});
}

TEST_F(ShardedBad, ShardLacksTensor) {
  index(R"({"a":"s1.safetensors","b":"s1.safetensors"})");
  expectError([&] { Checkpoint::open(d.path()); },
              {"tensor 'b'", "s1.safetensors", "no tensor"});
}

TEST_F(ShardedBad, TensorInTwoShards) {
  index(R"({"a":"both.safetensors","b":"s2.safetensors"})");
  expectError(
      [&] { Checkpoint::open(d.path()); },
      {"tensor 'b'", "two shards", "both.safetensors", "s2.safetensors"});
}

TEST_F(ShardedBad, UnlistedTensor) {
  index(R"({"a":"both.safetensors"})");
  expectError([&] { Checkpoint::open(d.path()); },
              {"both.safetensors", "tensor 'b'", "does not list"});
}

TEST_F(ShardedBad, BadIndexJson) {
  index(R"({"a":"s1.safetensors",})");
  expectError([&] { Checkpoint::open(d.path()); },
              {"model.safetensors.index.json", "line 1"});
  writeBytes(d.file("model.safetensors.index.json"), R"({"weight_map":[1]})");
  expectError([&] { Checkpoint::open(d.path()); },
              {"model.safetensors.index.json", "weight_map"});
  index(R"({"a":7})");
  expectError([&] { Checkpoint::open(d.path()); },
              {"'a'", "must be a file name string"});
  index(R"({"a":"../s1.safetensors"})");
  expectError([&] { Checkpoint::open(d.path()); },
              {"../s1.safetensors", "plain file name"});
}

TEST_F(ShardedBad, BadShardNamesItself) {
  writeBytes(d.file("s2.safetensors"), "xyz");
  index(R"({"a":"s1.safetensors","b":"s2.safetensors"})");
  expectError([&] { Checkpoint::open(d.path()); },
              {"s2.safetensors", "too small"});
}

} // namespace
} // namespace llmc::weights::test
