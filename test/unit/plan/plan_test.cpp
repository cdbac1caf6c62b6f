#include "plan_test_util.h"

#include "plan_format.h"

#include "llmc/runtime/plan_info.h"
#include "llmc/support/error.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <cstring>
#include <sys/resource.h>

namespace llmc::test {
namespace {

using ::testing::HasSubstr;

void expectSameOp(const llmc_op_desc &a, const llmc_op_desc &b) {
  EXPECT_EQ(a.kind, b.kind);
  ASSERT_EQ(a.num_operands, b.num_operands);
  for (uint32_t j = 0; j < a.num_operands; ++j) {
    EXPECT_EQ(a.operands[j].kind, b.operands[j].kind);
    EXPECT_EQ(a.operands[j].index, b.operands[j].index);
  }
  ASSERT_EQ(a.num_results, b.num_results);
  for (uint32_t j = 0; j < a.num_results; ++j)
    EXPECT_EQ(a.results[j], b.results[j]);
  for (int j = 0; j < LLMC_MAX_INT_ATTRS; ++j)
    EXPECT_EQ(a.i[j], b.i[j]);
  for (int j = 0; j < LLMC_MAX_FLOAT_ATTRS; ++j)
    EXPECT_EQ(std::memcmp(&a.f[j], &b.f[j], sizeof(double)), 0);
}

void expectSameBuffer(const llmc_buffer_desc &a, const llmc_buffer_desc &b) {
  EXPECT_EQ(a.rows.t_coef, b.rows.t_coef);
  EXPECT_EQ(a.rows.b_coef, b.rows.b_coef);
  EXPECT_EQ(a.rows.constant, b.rows.constant);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.offset_t, b.offset_t);
  EXPECT_EQ(a.offset_b, b.offset_b);
  EXPECT_EQ(a.offset_const, b.offset_const);
}

TEST_F(PlanTest, RoundTripConfigAndTokenizer) {
  testWriter().write(path("m.plan"));
  auto plan = Plan::load(path("m.plan"));
  const PlanConfig &c = plan->config(), e = testConfig();
  EXPECT_EQ(c.architecture, e.architecture);
  EXPECT_EQ(c.vocabSize, e.vocabSize);
  EXPECT_EQ(c.hiddenSize, e.hiddenSize);
  EXPECT_EQ(c.numLayers, e.numLayers);
  EXPECT_EQ(c.numHeads, e.numHeads);
  EXPECT_EQ(c.numKVHeads, e.numKVHeads);
  EXPECT_EQ(c.headDim, e.headDim);
  EXPECT_EQ(c.intermediateSize, e.intermediateSize);
  EXPECT_EQ(c.contextLength, e.contextLength);
  EXPECT_EQ(c.bosTokenId, e.bosTokenId);
  EXPECT_EQ(c.eosTokenIds, e.eosTokenIds);
  EXPECT_EQ(c.target, e.target);
  EXPECT_EQ(c.computeDtype, e.computeDtype);
  EXPECT_EQ(c.quantization, e.quantization);
  EXPECT_EQ(c.kvDtype, e.kvDtype);
  EXPECT_EQ(c.compilerVersion, e.compilerVersion);
  const PlanTokenizer &t = plan->tokenizer(), et = testTokenizer();
  EXPECT_EQ(t.kind, et.kind);
  EXPECT_EQ(t.bytes(), et.bytes()); // binary, with NULs, viewed in place
  EXPECT_EQ(t.configJson, et.configJson);
  EXPECT_EQ(t.chatTemplate, et.chatTemplate);
  EXPECT_EQ(plan->formatMajor(), kPlanFormatMajor);
  EXPECT_EQ(plan->formatMinor(), kPlanFormatMinor);
  EXPECT_EQ(plan->path(), path("m.plan"));
  EXPECT_EQ(plan->fileSize(), readBytes(path("m.plan")).size());
}

TEST_F(PlanTest, RoundTripWithoutBosOrTokenizer) {
  PlanWriter w;
  PlanConfig c = testConfig();
  c.bosTokenId.reset();
  c.eosTokenIds.clear();
  w.setConfig(c);
  w.addGraph(testGraph("decode", true));
  w.addWeight("a", LLMC_F32, {1}, 4, {});
  w.addWeight("b", LLMC_F16, {1}, 2, {});
  w.addWeight("c", LLMC_I4, {1}, 1, {});
  w.addWeight("d", LLMC_F32, {1}, 4, nullptr); // no fill: zeros
  w.write(path("m.plan"));
  auto plan = Plan::load(path("m.plan"));
  EXPECT_FALSE(plan->config().bosTokenId.has_value());
  EXPECT_TRUE(plan->config().eosTokenIds.empty());
  EXPECT_EQ(plan->tokenizer().kind, "");
  EXPECT_EQ(plan->weightData(3)[0], 0);
  EXPECT_EQ(plan->graphs().size(), 1u);
}

TEST_F(PlanTest, RoundTripWeightsAndAlignment) {
  std::vector<std::pair<size_t, size_t>> progress;
  uint64_t written = 0;
  testWriter().write(path("m.plan"), [&](const WriteProgress &p) {
    progress.emplace_back(p.weightsDone, p.weightsTotal);
    EXPECT_GE(p.bytesDone, written);
    written = p.bytesDone;
    EXPECT_LE(p.bytesDone, p.bytesTotal);
  });
  const auto &ws = testWeights();
  ASSERT_EQ(progress.size(), ws.size());
  EXPECT_EQ(progress.back(), std::make_pair(ws.size(), ws.size()));

  auto plan = Plan::load(path("m.plan"));
  std::string bytes = readBytes(path("m.plan"));
  auto header = detail::decodeHeader(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  EXPECT_EQ(header.headerSize, 72u);
  EXPECT_EQ(header.flatBufferOffset, 72u);
  EXPECT_EQ(header.weightsOffset % 4096, 0u);
  EXPECT_GE(header.weightsOffset, 72 + header.flatBufferSize);
  EXPECT_EQ(header.weightsOffset + header.weightsSize, bytes.size());
  // The padding between metadata and weights is zeros.
  for (uint64_t k = 72 + header.flatBufferSize; k < header.weightsOffset; ++k)
    ASSERT_EQ(bytes[k], 0) << k;

  ASSERT_EQ(plan->weights().size(), ws.size());
  for (uint32_t i = 0; i < ws.size(); ++i) {
    const WeightInfo &w = plan->weights()[i];
    EXPECT_EQ(w.name, ws[i].name);
    EXPECT_EQ(w.dtype, ws[i].dtype);
    EXPECT_EQ(w.shape, ws[i].shape);
    EXPECT_EQ(w.nbytes, ws[i].nbytes);
    EXPECT_EQ(w.offset % 64, 0u) << w.name;
    const uint8_t *data = plan->weightData(i);
    // The mapping is page-aligned, so file alignment is address alignment.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u) << w.name;
    EXPECT_EQ(data, reinterpret_cast<const uint8_t *>(plan->weightData(0) +
                                                      w.offset));
    for (uint64_t k = 0; k < w.nbytes; ++k)
      ASSERT_EQ(data[k], patternByte(i, k)) << w.name << " byte " << k;
    EXPECT_EQ(0,
              std::memcmp(data, bytes.data() + header.weightsOffset + w.offset,
                          w.nbytes));
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(plan->weightData(0)) % 4096, 0u);
  EXPECT_THAT([&] { plan->weightData(99); },
              ::testing::ThrowsMessage<Error>(HasSubstr("no weight 99")));
}

TEST_F(PlanTest, RoundTripGraphsAndDescs) {
  testWriter().write(path("m.plan"));
  auto plan = Plan::load(path("m.plan"));
  ASSERT_EQ(plan->graphs().size(), 2u);
  for (bool decode : {false, true}) {
    Graph expected = testGraph(decode ? "decode" : "prefill", decode);
    const Graph *g = plan->graph(expected.name);
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(g->ops.size(), expected.ops.size());
    for (size_t k = 0; k < g->ops.size(); ++k)
      expectSameOp(g->ops[k], expected.ops[k]);
    ASSERT_EQ(g->buffers.size(), expected.buffers.size());
    for (size_t k = 0; k < g->buffers.size(); ++k)
      expectSameBuffer(g->buffers[k], expected.buffers[k]);
    EXPECT_EQ(g->logitsBuffer, expected.logitsBuffer);
    EXPECT_EQ(g->workspaceBytes(512, 1), expected.workspaceBytes(512, 1));
    EXPECT_EQ(g->workspaceBytes(1, 64), expected.workspaceBytes(1, 64));

    const llmc_graph_desc &d = plan->graphDesc(expected.name);
    EXPECT_STREQ(d.name, expected.name.c_str());
    EXPECT_EQ(d.num_ops, 3u);
    EXPECT_EQ(d.num_buffers, 3u);
    EXPECT_EQ(d.ops, g->ops.data());
    EXPECT_EQ(d.buffers, g->buffers.data());
    EXPECT_EQ(d.logits_buffer, 2u);
    EXPECT_EQ(d.workspace_t, expected.workspaceT);
    EXPECT_EQ(d.workspace_b, expected.workspaceB);
    EXPECT_EQ(d.workspace_c, expected.workspaceC);
    ASSERT_EQ(d.num_weights, testWeights().size());
    for (uint32_t i = 0; i < d.num_weights; ++i) {
      const llmc_weight_desc &w = d.weights[i];
      EXPECT_STREQ(w.name, testWeights()[i].name);
      EXPECT_EQ(w.dtype, testWeights()[i].dtype);
      ASSERT_EQ(w.rank, testWeights()[i].shape.size());
      for (uint32_t r = 0; r < w.rank; ++r)
        EXPECT_EQ(w.shape[r], testWeights()[i].shape[r]);
      EXPECT_EQ(w.data, plan->weightData(i));
      EXPECT_EQ(w.nbytes, testWeights()[i].nbytes);
    }
  }
  EXPECT_EQ(plan->graph("verify"), nullptr);
  EXPECT_THAT([&] { plan->graphDesc("verify"); },
              ::testing::ThrowsMessage<Error>(HasSubstr(
                  "plan has no graph 'verify' (has: prefill, decode)")));
}

TEST_F(PlanTest, LoadFromMemoryAndSkippingTheChecksum) {
  testWriter().write(path("m.plan"));
  std::string bytes = readBytes(path("m.plan"));
  std::vector<uint64_t> aligned((bytes.size() + 7) / 8);
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  auto *data = reinterpret_cast<uint8_t *>(aligned.data());
  auto plan = Plan::loadFromMemory(data, bytes.size(), "mem.plan");
  EXPECT_EQ(plan->config().architecture, "llama");
  // The image is the caller's: no plugin may drop its pages.
  EXPECT_EQ(plan->graphDesc("decode").flags, 0u);
  EXPECT_EQ(Plan::load(path("m.plan"))->graphDesc("decode").flags,
            LLMC_GRAPH_WEIGHTS_FILE_MAPPED);
  auto header = detail::decodeHeader(data, bytes.size());
  EXPECT_EQ(plan->weightData(0), data + header.weightsOffset);
  data[header.weightsOffset - 1] ^= 1; // in the metadata's padding
  EXPECT_THAT([&] { Plan::loadFromMemory(data, bytes.size(), "mem.plan"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("mem.plan: checksum mismatch")));
  PlanLoadOptions skip;
  skip.verifyChecksum = false;
  EXPECT_NO_THROW(Plan::loadFromMemory(data, bytes.size(), "mem.plan", skip));
  EXPECT_THAT([&] { Plan::loadFromMemory(data + 1, 100, "odd.plan"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("8-byte aligned")));
}

TEST_F(PlanTest, WriterRefusesBadWeights) {
  PlanWriter w;
  EXPECT_THAT(
      [&] {
        w.addWeight("x", LLMC_F32, {2, 3}, 25, {});
      },
      ::testing::ThrowsMessage<Error>(
          HasSubstr("weight 'x': 25 bytes, but f32 [2, 3] is 24")));
  EXPECT_THAT(
      [&] {
        w.addWeight("q", LLMC_I4, {3, 5}, 7, {});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("i4 [3, 5] is 8")));
  EXPECT_THAT(
      [&] {
        w.addWeight("r", LLMC_F32, {1, 1, 1, 1, 1}, 4, {});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("rank 5")));
  EXPECT_THAT([&] { w.addWeight("n", LLMC_F32, {-1}, 0, {}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("bad shape")));
  EXPECT_THAT(
      [&] { w.addWeight("d", static_cast<llmc_dtype>(13), {1}, 4, {}); },
      ::testing::ThrowsMessage<Error>(HasSubstr("unknown dtype 13")));
  w.addGraph(testGraph("decode", true));
  EXPECT_THAT([&] { w.addGraph(testGraph("decode", true)); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("already has a graph 'decode'")));
}

TEST_F(PlanTest, WriterLeavesNoFileWhenAFillThrows) {
  PlanWriter w;
  w.setConfig(testConfig());
  w.addWeight("boom", LLMC_F32, {1}, 4,
              [](uint8_t *) { throw Error("conversion failed"); });
  EXPECT_THAT([&] { w.write(path("m.plan")); },
              ::testing::ThrowsMessage<Error>(HasSubstr("conversion failed")));
  EXPECT_FALSE(std::filesystem::exists(path("m.plan")));
  EXPECT_FALSE(std::filesystem::exists(path("m.plan.partial")));
  EXPECT_THAT([&] { w.write(path("no/such/dir/m.plan")); },
              ::testing::ThrowsMessage<Error>(HasSubstr("cannot create")));
}

// Weights larger than the writer's 8 MiB chunks and of odd sizes, so the
// direct-I/O path's chunking, tail padding and truncation are all crossed;
// every byte must come back.
TEST_F(PlanTest, LargeAndOddWeightsRoundTrip) {
  PlanWriter w;
  w.setConfig(testConfig());
  const std::vector<uint64_t> sizes = {3, (9u << 20) + 5, 4096, 1, 123457};
  for (size_t i = 0; i < sizes.size(); ++i)
    w.addWeight("w" + std::to_string(i), LLMC_I8,
                {static_cast<int64_t>(sizes[i])}, sizes[i],
                [i, n = sizes[i]](uint8_t *dst) {
                  for (uint64_t j = 0; j < n; ++j)
                    dst[j] = static_cast<uint8_t>(j * 31 + i * 7 + 1);
                });
  w.write(path("big.plan"));
  PlanLoadOptions o;
  o.verifyWeights = true;
  auto plan = Plan::load(path("big.plan"), o);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const uint8_t *d = plan->weightData(static_cast<uint32_t>(i));
    for (uint64_t j = 0; j < sizes[i]; ++j)
      ASSERT_EQ(d[j], static_cast<uint8_t>(j * 31 + i * 7 + 1))
          << "weight " << i << " byte " << j;
  }
}

// A weight split over tensor-parallel ranks: each rank's load points its
// graphs at its own slice; a replicated weight is the same bytes on both;
// a rank the plan does not have is an error naming it.
TEST_F(PlanTest, SplitWeightsGiveEachRankItsSlice) {
  PlanWriter w;
  PlanConfig c = testConfig();
  c.tp = 2;
  c.kvHeadsPerRank = 1;
  w.setConfig(c);
  w.addWeight("whole", LLMC_I8, {3}, 3,
              [](uint8_t *d) { d[0] = 7, d[1] = 8, d[2] = 9; });
  w.addSplitWeight("split", LLMC_I8, {5}, 5, 2, [](int64_t rank, uint8_t *d) {
    for (int j = 0; j < 5; ++j)
      d[j] = static_cast<uint8_t>(10 * rank + j);
  });
  w.addWeight("third", LLMC_I8, {1}, 1, [](uint8_t *d) { d[0] = 1; });
  w.addWeight("fourth", LLMC_I8, {1}, 1, [](uint8_t *d) { d[0] = 2; });
  w.addGraph(testGraph("decode", true)); // reads weights 0..3
  w.write(path("tp.plan"));
  for (int64_t rank : {0, 1}) {
    PlanLoadOptions o;
    o.rank = rank;
    o.verifyWeights = true;
    auto plan = Plan::load(path("tp.plan"), o);
    EXPECT_EQ(plan->config().tp, 2);
    EXPECT_EQ(plan->config().rankKvHeads(), 1);
    const llmc_graph_desc &g = plan->graphDesc("decode");
    const auto *whole = static_cast<const uint8_t *>(g.weights[0].data);
    const auto *split = static_cast<const uint8_t *>(g.weights[1].data);
    EXPECT_EQ(whole[2], 9);
    for (int j = 0; j < 5; ++j)
      EXPECT_EQ(split[j], 10 * rank + j) << "rank " << rank << " byte " << j;
    EXPECT_EQ(plan->weights()[1].rankOffsets.size(), 2u);
  }
  PlanLoadOptions bad;
  bad.rank = 2;
  EXPECT_THAT([&] { Plan::load(path("tp.plan"), bad); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("rank 2 is not one of the plan's 2")));
  EXPECT_THAT(
      [&] {
        PlanWriter one;
        one.addSplitWeight("s", LLMC_I8, {1}, 1, 1, {});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("split over 1 ranks")));
}

// A disk that fills up (here: a file-size limit, EFBIG) is a clear error,
// and no file is left under either name.
TEST_F(PlanTest, WriterLeavesNoFileWhenTheDiskFills) {
  PlanWriter w;
  w.setConfig(testConfig());
  w.addWeight("big", LLMC_I8, {int64_t(16) << 20}, uint64_t(16) << 20,
              [](uint8_t *dst) { std::memset(dst, 1, size_t(16) << 20); });
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit small = old;
  small.rlim_cur = 1 << 20;
  auto previous = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    w.write(path("full.plan"));
  } catch (const Error &e) {
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  EXPECT_THAT(message, HasSubstr("full.plan.partial: cannot write"));
  EXPECT_FALSE(std::filesystem::exists(path("full.plan")));
  EXPECT_FALSE(std::filesystem::exists(path("full.plan.partial")));
}

TEST_F(PlanTest, DescribeText) {
  testWriter().write(path("m.plan"));
  auto plan = Plan::load(path("m.plan"));
  std::string text = describePlan(*plan);
  // 2 x layers 2 x kv heads 4 x head dim 16 x 4 bytes.
  EXPECT_THAT(text, HasSubstr("kv cache (f32): 1024 B (1.00 KiB) per token"));
  EXPECT_THAT(text, HasSubstr("full context (256 tokens): 262144 B"));
  EXPECT_THAT(text, HasSubstr("tokens per GiB: 1048576"));
  EXPECT_THAT(text, HasSubstr("architecture: llama"));
  EXPECT_THAT(text, HasSubstr("layers 2, heads 4, kv heads 4, head dim 16"));
  EXPECT_THAT(text, HasSubstr("context length: 256"));
  EXPECT_THAT(text, HasSubstr("target: cpu, compute dtype f32, quantization "
                              "int4, kv dtype f32"));
  EXPECT_THAT(text, HasSubstr("bos: 1, eos: 2, 7"));
  EXPECT_THAT(text, HasSubstr("tokenizer: sentencepiece (11 B)"));
  EXPECT_THAT(text, HasSubstr("chat template: yes"));
  EXPECT_THAT(text, HasSubstr("prefill: 3 ops, 3 buffers"));
  EXPECT_THAT(text, HasSubstr("embedding 1, linear 1, rms_norm 1"));
  // 1024 * 512 + 4096 and 2048 * 64 + 64.
  EXPECT_THAT(text,
              HasSubstr("1024*T + 0*B + 4096 bytes; T=512,B=1: 528384 B"));
  EXPECT_THAT(text, HasSubstr("T=1,B=64: 131136 B"));
  EXPECT_THAT(text, HasSubstr("weights: 8, 8383 B"));
  EXPECT_THAT(text, HasSubstr("i4: 1, 8 B"));
  EXPECT_THAT(text, HasSubstr("f32: 3, 8204 B"));
  EXPECT_THAT(text, HasSubstr("compiled by llmc 0.1.0-test"));
}

TEST_F(PlanTest, DescribeJson) {
  testWriter().write(path("m.plan"));
  auto plan = Plan::load(path("m.plan"));
  auto j = nlohmann::json::parse(describePlan(*plan, true));
  EXPECT_EQ(j["format"], "1." + std::to_string(kPlanFormatMinor));
  EXPECT_EQ(j["config"]["architecture"], "llama");
  EXPECT_EQ(j["config"]["kv_dtype"], "f32");
  EXPECT_EQ(j["config"]["bos_token_id"], 1);
  EXPECT_EQ(j["tokenizer"]["has_chat_template"], true);
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 1024);
  EXPECT_EQ(j["kv_cache"]["bytes_for_context"], 262144);
  EXPECT_EQ(j["kv_cache"]["tokens_per_gib"], 1048576);
  ASSERT_EQ(j["graphs"].size(), 2u);
  EXPECT_EQ(j["graphs"][0]["name"], "prefill");
  EXPECT_EQ(j["graphs"][0]["op_counts"]["linear"], 1);
  EXPECT_EQ(j["graphs"][0]["workspace"]["bytes_T512_B1"], 528384);
  EXPECT_EQ(j["graphs"][1]["workspace"]["bytes_T1_B64"], 131136);
  EXPECT_EQ(j["weights"]["count"], 8);
  EXPECT_EQ(j["weights"]["bytes"], 8383);
  EXPECT_EQ(j["weights"]["by_dtype"]["i4"]["bytes"], 8);
  EXPECT_EQ(j["weights"]["by_dtype"]["bf16"]["count"], 1);
}

TEST_F(PlanTest, DescribeJsonOfNamesThatAreNotUtf8) {
  PlanWriter w;
  PlanConfig c = testConfig();
  c.architecture = "ll\x92ma";
  w.setConfig(c);
  w.write(path("m.plan"));
  auto plan = Plan::load(path("m.plan"));
  auto j = nlohmann::json::parse(describePlan(*plan, true));
  EXPECT_EQ(j["config"]["architecture"], "ll\xef\xbf\xbdma"); // U+FFFD
  EXPECT_THAT(describePlan(*plan), HasSubstr("graphs: 0"));
}

TEST(GraphNames, OpKindsAndDtypes) {
  EXPECT_STREQ(opKindName(LLMC_OP_LINEAR), "linear");
  EXPECT_STREQ(opKindName(LLMC_OP_TAKE_ROWS), "take_rows");
  for (int k = 0; k < LLMC_OP_COUNT; ++k)
    EXPECT_STRNE(opKindName(static_cast<llmc_op_kind>(k)), "unknown") << k;
  EXPECT_STREQ(opKindName(LLMC_OP_COUNT), "unknown");
  EXPECT_STREQ(dtypeName(LLMC_BF16), "bf16");
  EXPECT_STREQ(dtypeName(LLMC_I4), "i4");
  EXPECT_STREQ(dtypeName(static_cast<llmc_dtype>(42)), "unknown");
  EXPECT_EQ(dtypeBytes(LLMC_F32, 3), 12u);
  EXPECT_EQ(dtypeBytes(LLMC_F16, 3), 6u);
  EXPECT_EQ(dtypeBytes(LLMC_BF16, 3), 6u);
  EXPECT_EQ(dtypeBytes(LLMC_I8, 3), 3u);
  EXPECT_EQ(dtypeBytes(LLMC_I4, 3), 2u);
  EXPECT_EQ(dtypeBytes(LLMC_I4, 4), 2u);
  EXPECT_EQ(dtypeBytes(LLMC_I4, 0), 0u);
  EXPECT_EQ(dtypeBytes(LLMC_I32, 3), 12u);
  EXPECT_THROW(dtypeBytes(static_cast<llmc_dtype>(42), 1), Error);
  EXPECT_THROW(dtypeBytes(LLMC_F32, -1), Error);
}

} // namespace
} // namespace llmc::test
