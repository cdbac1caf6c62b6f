//===- backend_abi_test.cpp - A plugin older than the plan is refused -----===//
#include "llmc/runtime/engine.h"
#include "llmc/support/error.h"

#include <gtest/gtest.h>

namespace llmc {
namespace {

Graph graphWith(llmc_op_desc op) {
  Graph g;
  g.name = "prefill";
  g.ops.push_back(op);
  return g;
}

llmc_op_desc op(llmc_op_kind kind) {
  llmc_op_desc d{};
  d.kind = kind;
  return d;
}

llmc_backend_api apiOfMinor(uint32_t minor) {
  llmc_backend_api api{};
  api.abi_major = LLMC_BACKEND_ABI_MAJOR;
  api.abi_minor = minor;
  return api;
}

TEST(BackendAbi, EachNewAttributeNeedsItsMinorVersion) {
  EXPECT_EQ(abiNeeded(op(LLMC_OP_LINEAR)).minor, 0u);
  llmc_op_desc norm = op(LLMC_OP_RMS_NORM);
  EXPECT_EQ(abiNeeded(norm).minor, 0u);
  norm.i[0] = 32; // per head (Qwen3)
  EXPECT_EQ(abiNeeded(norm).minor, 1u);
  llmc_op_desc glu = op(LLMC_OP_SWIGLU);
  EXPECT_EQ(abiNeeded(glu).minor, 0u);
  glu.i[0] = 1; // GeGLU
  EXPECT_EQ(abiNeeded(glu).minor, 2u);
  for (llmc_op_kind k : {LLMC_OP_PREFILL_ATTENTION, LLMC_OP_DECODE_ATTENTION}) {
    llmc_op_desc a = op(k);
    a.f[0] = 0.125;
    EXPECT_EQ(abiNeeded(a).minor, 0u);
    a.f[1] = 50; // Gemma 2's score cap
    EXPECT_EQ(abiNeeded(a).minor, 2u);
    EXPECT_NE(abiNeeded(a).feature.find("soft-capping"), std::string::npos);
  }
  EXPECT_EQ(abiNeeded(op(LLMC_OP_SCALE)).minor, 2u);
  EXPECT_EQ(abiNeeded(op(LLMC_OP_SOFTCAP)).minor, 2u);
  // Mixture of experts: three ops, and SWIGLU over one run per expert.
  for (llmc_op_kind k :
       {LLMC_OP_MOE_GATING, LLMC_OP_EXPERT_LINEAR, LLMC_OP_MOE_COMBINE}) {
    EXPECT_EQ(abiNeeded(op(k)).minor, 4u);
    EXPECT_NE(abiNeeded(op(k)).feature.find("mixture of experts"),
              std::string::npos);
  }
  glu.i[1] = 8;
  EXPECT_EQ(abiNeeded(glu).minor, 4u);
}

TEST(BackendAbi, GptOssNeedsAbi17) {
  llmc_op_desc glu = op(LLMC_OP_SWIGLU);
  glu.i[0] = 2; // the clamped unit
  EXPECT_EQ(abiNeeded(glu).minor, 7u);
  EXPECT_EQ(abiNeeded(op(LLMC_OP_EXPERT_BIAS)).minor, 7u);
  for (llmc_op_kind k : {LLMC_OP_PREFILL_ATTENTION, LLMC_OP_DECODE_ATTENTION}) {
    llmc_op_desc a = op(k);
    a.num_operands = 2; // q and the sinks
    EXPECT_EQ(abiNeeded(a).minor, 7u);
    EXPECT_NE(abiNeeded(a).feature.find("sinks"), std::string::npos);
  }
  // An MXFP4 weight, which a 1.6 plugin would read as another dtype.
  llmc_weight_desc w{};
  w.name = "blk.0.ffn_down_exps.weight";
  w.dtype = LLMC_MXFP4;
  llmc_graph_desc desc{};
  desc.num_weights = 1;
  desc.weights = &w;
  EXPECT_NO_THROW(checkWeightAbi("g.plan", desc, "cpu", apiOfMinor(7)));
  try {
    checkWeightAbi("g.plan", desc, "oldcpu", apiOfMinor(6));
    FAIL() << "a 1.6 plugin was given an MXFP4 weight";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "g.plan: weight 'blk.0.ffn_down_exps.weight' is "
                           "MXFP4, which needs backend ABI 1.7; backend "
                           "'oldcpu' speaks 1.6: rebuild the plugin with this "
                           "llmc");
  }
}

TEST(BackendAbi, KQuantWeightsNeedAbi18) {
  llmc_weight_desc w{};
  w.name = "blk.0.ffn_up.weight";
  w.dtype = LLMC_Q4_K;
  llmc_graph_desc desc{};
  desc.num_weights = 1;
  desc.weights = &w;
  EXPECT_NO_THROW(checkWeightAbi("g.plan", desc, "cpu", apiOfMinor(8)));
  try {
    checkWeightAbi("g.plan", desc, "oldcpu", apiOfMinor(7));
    FAIL() << "a 1.7 plugin was given a Q4_K weight";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "g.plan: weight 'blk.0.ffn_up.weight' is Q4_K, "
                           "which needs backend ABI 1.8; backend 'oldcpu' "
                           "speaks 1.7: rebuild the plugin with this llmc");
  }
}

TEST(BackendAbi, AnMoePlanNeedsAbi14) {
  try {
    checkBackendAbi("moe.plan", graphWith(op(LLMC_OP_EXPERT_LINEAR)), "oldcpu",
                    apiOfMinor(3));
    FAIL() << "a 1.3 plugin was accepted for an MoE graph";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(),
                 "moe.plan: graph 'prefill' needs backend ABI 1.4 (mixture of "
                 "experts (op expert_linear)); backend 'oldcpu' speaks 1.3: "
                 "rebuild the plugin with this llmc");
  }
}

TEST(BackendAbi, AnOlderPluginIsRefusedWithWhatItLacks) {
  Graph g = graphWith(op(LLMC_OP_SOFTCAP));
  try {
    checkBackendAbi("m.plan", g, "oldcpu", apiOfMinor(1));
    FAIL() << "a 1.1 plugin was accepted for a 1.2 graph";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "m.plan: graph 'prefill' needs backend ABI 1.2 "
                           "(op softcap); backend 'oldcpu' speaks 1.1: "
                           "rebuild the plugin with this llmc");
  }
  EXPECT_NO_THROW(checkBackendAbi("m.plan", g, "cpu", apiOfMinor(2)));
  EXPECT_NO_THROW(checkBackendAbi("m.plan", graphWith(op(LLMC_OP_LINEAR)),
                                  "oldcpu", apiOfMinor(0)));
}

TEST(BackendAbi, ScaledKvCachesNeedAbi13) {
  for (llmc_dtype kv : {LLMC_F32, LLMC_BF16, LLMC_F16})
    EXPECT_NO_THROW(checkKvAbi(kv, "oldcpu", apiOfMinor(0)));
  for (llmc_dtype kv : {LLMC_I8, LLMC_FP8_E4M3}) {
    EXPECT_NO_THROW(checkKvAbi(kv, "cpu", apiOfMinor(3)));
    try {
      checkKvAbi(kv, "oldcpu", apiOfMinor(2));
      FAIL() << "a 1.2 plugin was given an 8-bit KV cache";
    } catch (const Error &e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("backend 'oldcpu' speaks ABI 1.2; an ") +
                    llmc_kv_dtype_name(kv) +
                    " KV cache needs 1.3: rebuild the plugin with this llmc");
    }
  }
}

} // namespace
} // namespace llmc
