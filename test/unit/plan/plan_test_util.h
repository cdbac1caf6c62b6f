// Shared by the plan tests: a small plan with two graphs and weights of every
// dtype, and a temporary folder.
#pragma once

#include "llmc/runtime/plan.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace llmc::test {

inline uint8_t patternByte(uint32_t weight, uint64_t k) {
  return static_cast<uint8_t>(weight * 31 + k * 7 + 1);
}

struct TestWeight {
  const char *name;
  llmc_dtype dtype;
  std::vector<int64_t> shape;
  uint64_t nbytes;
};

inline const std::vector<TestWeight> &testWeights() {
  static const std::vector<TestWeight> w = {
      {"embed", LLMC_F32, {32, 64}, 32 * 64 * 4},
      {"norm", LLMC_F16, {64}, 128},
      {"w_q", LLMC_I4, {3, 5}, 8}, // odd element count: 15 nibbles
      {"w_q.scales", LLMC_F32, {3}, 12},
      {"w8", LLMC_I8, {7, 3}, 21},
      {"bf", LLMC_BF16, {5}, 10},
      {"ids", LLMC_I32, {3}, 12},
      {"empty", LLMC_F32, {0}, 0},
  };
  return w;
}

inline PlanConfig testConfig() {
  PlanConfig c;
  c.architecture = "llama";
  c.vocabSize = 32;
  c.hiddenSize = 64;
  c.numLayers = 2;
  c.numHeads = 4;
  c.numKVHeads = 4;
  c.headDim = 16;
  c.intermediateSize = 128;
  c.contextLength = 256;
  c.bosTokenId = 1;
  c.eosTokenIds = {2, 7};
  c.target = "cpu";
  c.computeDtype = "f32";
  c.quantization = "int4";
  c.kvDtype = LLMC_F32;
  c.compilerVersion = "llmc 0.1.0-test";
  return c;
}

inline PlanTokenizer testTokenizer() {
  PlanTokenizer t;
  t.kind = "sentencepiece";
  t.fileBytes = std::string("\x0a\x00\xff binary\x00", 11);
  t.configJson = R"({"add_bos_token": true})";
  t.chatTemplate = "{% for m in messages %}{{ m.content }}{% endfor %}";
  return t;
}

inline llmc_operand operand(llmc_operand_kind kind, uint32_t index) {
  return {static_cast<uint32_t>(kind), index};
}

inline llmc_op_desc makeOp(llmc_op_kind kind,
                           std::vector<llmc_operand> operands,
                           std::vector<uint32_t> results) {
  llmc_op_desc op{};
  op.kind = kind;
  op.num_operands = static_cast<uint32_t>(operands.size());
  for (size_t i = 0; i < operands.size(); ++i)
    op.operands[i] = operands[i];
  op.num_results = static_cast<uint32_t>(results.size());
  for (size_t i = 0; i < results.size(); ++i)
    op.results[i] = results[i];
  return op;
}

inline llmc_buffer_desc makeBuffer(int32_t t, int32_t b, int64_t cols,
                                   int64_t offsetT) {
  llmc_buffer_desc d{};
  d.rows = {t, b, 0};
  d.cols = cols;
  d.dtype = LLMC_F32;
  d.offset_t = offsetT;
  return d;
}

/// prefill: embedding -> rms_norm -> linear over rows T; decode: the same
/// over rows B.
inline Graph testGraph(const std::string &name, bool decode) {
  Graph g;
  g.name = name;
  int32_t t = decode ? 0 : 1, b = decode ? 1 : 0;
  g.buffers = {makeBuffer(t, b, 64, 0), makeBuffer(t, b, 64, 256),
               makeBuffer(t, b, 32, 512)};
  g.ops.push_back(makeOp(
      LLMC_OP_EMBEDDING,
      {operand(LLMC_OPERAND_WEIGHT, 0), operand(LLMC_OPERAND_INPUT, 0)}, {0}));
  llmc_op_desc norm = makeOp(
      LLMC_OP_RMS_NORM,
      {operand(LLMC_OPERAND_BUFFER, 0), operand(LLMC_OPERAND_WEIGHT, 1)}, {1});
  norm.f[0] = 1e-5;
  g.ops.push_back(norm);
  llmc_op_desc linear =
      makeOp(LLMC_OP_LINEAR,
             {operand(LLMC_OPERAND_BUFFER, 1), operand(LLMC_OPERAND_WEIGHT, 2),
              operand(LLMC_OPERAND_WEIGHT, 3), operand(LLMC_OPERAND_NONE, 0)},
             {2});
  linear.i[0] = 32;
  linear.i[5] = -3; // a trailing non-zero slot must survive trimming
  linear.f[1] = -0.0;
  g.ops.push_back(linear);
  g.logitsBuffer = 2;
  if (decode) {
    g.workspaceB = 2048;
    g.workspaceC = 64;
  } else {
    g.workspaceT = 1024;
    g.workspaceC = 4096;
  }
  return g;
}

/// A writer holding the test plan; `mutate` may change the graphs before
/// they are added.
inline PlanWriter
testWriter(const std::function<void(std::vector<Graph> &)> &mutate = {}) {
  PlanWriter w;
  w.setConfig(testConfig());
  w.setTokenizer(testTokenizer());
  const auto &ws = testWeights();
  for (uint32_t i = 0; i < ws.size(); ++i) {
    uint64_t n = ws[i].nbytes;
    w.addWeight(ws[i].name, ws[i].dtype, ws[i].shape, n, [i, n](uint8_t *dst) {
      for (uint64_t k = 0; k < n; ++k)
        dst[k] = patternByte(i, k);
    });
  }
  std::vector<Graph> graphs = {testGraph("prefill", false),
                               testGraph("decode", true)};
  if (mutate)
    mutate(graphs);
  for (Graph &g : graphs)
    w.addGraph(std::move(g));
  return w;
}

class PlanTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "llmc-plan-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string &name) const {
    return (std::filesystem::path(dir_) / name).string();
  }
  static std::string readBytes(const std::string &p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void writeBytes(const std::string &p, const std::string &bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  std::string dir_;
};

} // namespace llmc::test
