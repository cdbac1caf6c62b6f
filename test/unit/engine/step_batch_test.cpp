// buildStep: a mixed step's metadata in vLLM's layout, checked field by
// field, and the graph each kind of step runs.
#include "llmc/runtime/step_batch.h"
#include "llmc/support/error.h"

#include <gtest/gtest.h>

namespace llmc {
namespace {

using V = std::vector<int32_t>;

void reserve(KvManager &kv, int32_t seq, int64_t n) {
  std::vector<BlockCopy> copies;
  ASSERT_TRUE(kv.reserve(seq, n, copies));
}

TEST(StepBatch, GraphForEachKindOfStep) {
  V one = {1}, three = {1, 2, 3};
  StepWork decode{0, one, 1}, chunk{1, three, 0}, last{1, three, 1},
      all{1, three, 3};
  EXPECT_EQ(graphFor(std::vector<StepWork>{decode, decode}), "decode");
  EXPECT_EQ(graphFor(std::vector<StepWork>{decode, chunk}), "prefill");
  EXPECT_EQ(graphFor(std::vector<StepWork>{last}), "prefill");
  StepWork quiet{0, one, 0}; // a one-token prefill chunk without logits
  EXPECT_EQ(graphFor(std::vector<StepWork>{quiet}), "prefill");
  EXPECT_EQ(graphFor(std::vector<StepWork>{decode, all}), "verify");
}

TEST(StepBatch, MixedPrefillAndDecode) {
  KvManager kv({16, 4, false});
  int32_t a = kv.create(), b = kv.create(), c = kv.create();
  // a holds 5 tokens and decodes one; b prefills 6 (a middle chunk, no
  // logits); c prefills its last 2 tokens after 2 cached.
  reserve(kv, a, 5);
  kv.append(a, V{1, 2, 3, 4, 5});
  reserve(kv, c, 2);
  kv.append(c, V{9, 9});
  V ta = {6}, tb = {10, 11, 12, 13, 14, 15}, tc = {20, 21};
  reserve(kv, a, 1);
  reserve(kv, b, 6);
  reserve(kv, c, 2);
  std::vector<StepWork> work = {{a, ta, 1}, {b, tb, 0}, {c, tc, 1}};
  StepBatch s = buildStep(kv, work);
  EXPECT_EQ(s.graph, "prefill");
  EXPECT_EQ(s.tokens, (V{6, 10, 11, 12, 13, 14, 15, 20, 21}));
  EXPECT_EQ(s.positions, (V{5, 0, 1, 2, 3, 4, 5, 2, 3}));
  EXPECT_EQ(s.queryStart, (V{0, 1, 7, 9}));
  EXPECT_EQ(s.contextLens, (V{6, 6, 4}));
  // Every slot is block * 4 + offset of that sequence's table.
  for (size_t i = 0; i < 1; ++i)
    EXPECT_EQ(s.slots[i], kv.slot(a, 5));
  for (int64_t p = 0; p < 6; ++p)
    EXPECT_EQ(s.slots[1 + p], kv.slot(b, p));
  EXPECT_EQ(s.slots[7], kv.slot(c, 2));
  EXPECT_EQ(s.slots[8], kv.slot(c, 3));
  // Tables padded with 0 to the longest (2 blocks).
  EXPECT_EQ(s.maxBlocks, 2);
  ASSERT_EQ(s.blockTables.size(), 6u);
  EXPECT_EQ(s.blockTables[0], kv.blockTable(a)[0]);
  EXPECT_EQ(s.blockTables[5], 0);
  // Logits for a's token and c's last token, in work order.
  EXPECT_EQ(s.logitsRows, (V{0, 8}));
  EXPECT_EQ(s.outputRows, 2);
  float logits = 0;
  llmc_step_args args = s.args(&logits);
  EXPECT_EQ(args.num_tokens, 9);
  EXPECT_EQ(args.num_seqs, 3);
  EXPECT_EQ(args.num_logits, 2);
  EXPECT_EQ(args.logits, &logits);
  EXPECT_EQ(args.block_tables, s.blockTables.data());
}

TEST(StepBatch, VerifyReturnsEveryRow) {
  KvManager kv({8, 4, false});
  int32_t a = kv.create(), b = kv.create();
  V ta = {1, 2, 3}, tb = {4};
  reserve(kv, a, 3);
  reserve(kv, b, 1);
  StepBatch s = buildStep(kv, std::vector<StepWork>{{a, ta, 3}, {b, tb, 1}});
  EXPECT_EQ(s.graph, "verify");
  EXPECT_EQ(s.logitsRows, (V{0, 1, 2, 3}));
  EXPECT_EQ(s.outputRows, 4);
}

TEST(StepBatch, RefusesWhatNoStepCanBe) {
  KvManager kv({8, 4, false});
  int32_t a = kv.create();
  V none, two = {1, 2};
  reserve(kv, a, 2);
  EXPECT_THROW(buildStep(kv, std::vector<StepWork>{}), Error);
  EXPECT_THROW(buildStep(kv, std::vector<StepWork>{{a, none, 0}}), Error);
  EXPECT_THROW(buildStep(kv, std::vector<StepWork>{{a, two, 3}}), Error);
}

} // namespace
} // namespace llmc
