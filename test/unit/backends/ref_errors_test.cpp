//===- ref_errors_test.cpp - Bad graphs and steps are refused, not run
//-----===//
#include "op_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace llmc::testing {
namespace {

using ::testing::HasSubstr;

// A full little step: embeddings, KV write, prefill attention, take_rows.
class RefErrors : public ::testing::Test {
protected:
  void SetUp() override {
    std::mt19937 rng(3);
    table = randomVector(rng, 16 * 8);
    uint32_t x = graph.feed(table, 8);
    uint32_t attn = graph.buffer(rowsT(), 8);
    logits = graph.buffer(rowsB(), 8);
    graph.add(makeOp(LLMC_OP_KV_WRITE, {buf(x), buf(x)}, {}, {0}));
    graph.add(makeOp(LLMC_OP_PREFILL_ATTENTION, {buf(x)}, {attn},
                     {0, 2, 2, 4, 0}, {0.5}));
    graph.add(makeOp(LLMC_OP_TAKE_ROWS, {buf(attn)}, {logits}));
    step = StepData::simple(4, 1);
    step.logitsRows = {3};
    step.blockTables = {1, 0};
    step.maxBlocks = 2;
    step.slots = {4, 5, 6, 7};
  }

  // Runs the step after `edit` and returns the status; the message is in
  // `message`.
  llmc_status run(const std::function<void(llmc_step_args &)> &edit) {
    llmc_graph_desc desc = graph.desc(logits);
    PreparedGraph prepared = backend.prepare(desc);
    llmc_step_args args = step.args(8);
    edit(args);
    llmc_status status = backend.api().execute(backend.get(), prepared.get(),
                                               cache.get(), &args);
    message = backend.api().last_error(backend.get());
    return status;
  }

  /// Expects prepare to refuse g (result `out`) with `message` in the error.
  void expectRefused(OpGraph &g, uint32_t out, const char *what,
                     const char *message) {
    llmc_graph_desc desc = g.desc(out);
    llmc_prepared *prepared = nullptr;
    EXPECT_EQ(backend.api().prepare(backend.get(), &desc, &prepared),
              LLMC_INVALID_ARGUMENT)
        << what;
    EXPECT_THAT(backend.api().last_error(backend.get()), HasSubstr(message))
        << what;
  }

  BackendInstance backend = openBackend("ref");
  DeviceKvCache cache =
      backend.createKvCache({1, 2, 4, LLMC_F32, 4, 2, 0, nullptr});
  OpGraph graph;
  std::vector<float> table;
  uint32_t logits = 0;
  StepData step;
  std::string message;
};

TEST_F(RefErrors, TheUneditedStepRuns) {
  EXPECT_EQ(run([](llmc_step_args &) {}), LLMC_OK) << message;
}

TEST_F(RefErrors, EachBadStepArgumentIsInvalid) {
  std::vector<int32_t> bad = {0, 1, 2, 9};
  std::vector<int32_t> shortLen = {3};
  std::vector<int32_t> badBlock = {7, 0};
  std::vector<int32_t> badSlot = {4, 5, 6, 8};
  std::vector<int32_t> badRow = {4};
  struct Case {
    const char *what;
    std::function<void(llmc_step_args &)> edit;
    const char *message;
  } cases[] = {
      {"T = 0", [](llmc_step_args &a) { a.num_tokens = 0; }, "num_tokens"},
      {"B = 0", [](llmc_step_args &a) { a.num_seqs = 0; }, "num_seqs"},
      {"query_start past T",
       [&](llmc_step_args &a) { a.query_start = bad.data(); }, "query_start"},
      {"context shorter than new tokens",
       [&](llmc_step_args &a) { a.context_lens = shortLen.data(); },
       "context_lens"},
      {"block outside pool",
       [&](llmc_step_args &a) { a.block_tables = badBlock.data(); },
       "block_tables"},
      {"slot outside pool",
       [&](llmc_step_args &a) { a.slot_mapping = badSlot.data(); },
       "slot_mapping"},
      {"logits row outside T",
       [&](llmc_step_args &a) { a.logits_rows = badRow.data(); },
       "logits_rows"},
      {"too many logits",
       [&](llmc_step_args &a) {
         static const int32_t rows[] = {0, 1};
         a.num_logits = 2;
         a.logits_rows = rows;
       },
       "num_logits"},
      {"no block tables", [](llmc_step_args &a) { a.block_tables = nullptr; },
       "block_tables"},
      {"token outside the table",
       [&](llmc_step_args &a) {
         static const int32_t tokens[] = {0, 1, 16, 2};
         a.tokens = tokens;
       },
       "outside the table"},
  };
  for (const Case &c : cases) {
    EXPECT_EQ(run(c.edit), LLMC_INVALID_ARGUMENT) << c.what;
    EXPECT_THAT(message, HasSubstr(c.message)) << c.what;
  }
}

TEST_F(RefErrors, NoCacheForAGraphThatNeedsOne) {
  llmc_graph_desc desc = graph.desc(logits);
  PreparedGraph prepared = backend.prepare(desc);
  llmc_step_args args = step.args(8);
  try {
    backend.execute(prepared, nullptr, args);
    FAIL() << "expected an error";
  } catch (const BackendError &e) {
    EXPECT_EQ(e.status(), LLMC_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("KV cache"));
  }
}

TEST_F(RefErrors, BadGraphsAreRefusedAtPrepare) {
  struct Case {
    const char *what;
    std::function<llmc_op_desc(llmc_op_desc)> edit;
  } cases[] = {
      {"unknown kind",
       [](llmc_op_desc op) {
         op.kind = 99;
         return op;
       }},
      {"missing buffer",
       [](llmc_op_desc op) {
         op.results[0] = 42;
         return op;
       }},
      {"operand kind",
       [](llmc_op_desc op) {
         op.operands[0] = wt(0);
         return op;
       }},
      {"heads not a multiple of kv heads",
       [](llmc_op_desc op) {
         op.i[2] = 3;
         return op;
       }},
      {"negative soft-cap",
       [](llmc_op_desc op) {
         op.f[1] = -1;
         return op;
       }},
      {"infinite soft-cap",
       [](llmc_op_desc op) {
         op.f[1] = INFINITY;
         return op;
       }},
  };
  for (const Case &c : cases) {
    OpGraph g;
    uint32_t x = g.feed(table, 8), out = g.buffer(rowsT(), 8);
    g.add(c.edit(makeOp(LLMC_OP_PREFILL_ATTENTION, {buf(x)}, {out},
                        {0, 2, 1, 4, 0}, {0.5})));
    llmc_graph_desc desc = g.desc(out);
    llmc_prepared *prepared = nullptr;
    EXPECT_EQ(backend.api().prepare(backend.get(), &desc, &prepared),
              LLMC_INVALID_ARGUMENT)
        << c.what;
    EXPECT_EQ(prepared, nullptr);
    EXPECT_THAT(backend.api().last_error(backend.get()), HasSubstr("op 1"))
        << c.what;
    // supports() agrees with prepare.
    llmc_op_desc op = c.edit(makeOp(LLMC_OP_PREFILL_ATTENTION, {buf(x)}, {out},
                                    {0, 2, 1, 4, 0}, {0.5}));
    EXPECT_EQ(backend.supports(op, desc), false) << c.what;
  }
}

// Gemma 2's ops with attributes they cannot take.
TEST_F(RefErrors, BadGemmaAttributesAreRefused) {
  struct Case {
    const char *what, *message;
    llmc_op_kind kind;
    int64_t i0;
    double f0;
    int64_t inCols;
  } cases[] = {
      {"activation 3",
       "i0 must be 0 (silu), 1 (tanh GELU) or 2 (gpt-oss's clamped SwiGLU), "
       "got 3",
       LLMC_OP_SWIGLU, 3, 0, 16},
      {"clamp limit 0",
       "the clamp limit f0 must be finite and > 0, alpha f1 finite",
       LLMC_OP_SWIGLU, 2, 0, 16},
      {"zero cap", "the cap f0 must be finite and > 0, got 0", LLMC_OP_SOFTCAP,
       0, 0, 8},
      {"negative cap", "the cap f0 must be finite and > 0, got -2",
       LLMC_OP_SOFTCAP, 0, -2, 8},
      {"infinite factor", "the factor f0 must be finite, got inf",
       LLMC_OP_SCALE, 0, INFINITY, 8},
  };
  for (const Case &c : cases) {
    OpGraph g;
    uint32_t x = g.feed(std::vector<float>(size_t(c.inCols)), c.inCols),
             out = g.buffer(rowsT(), 8);
    g.add(makeOp(c.kind, {buf(x)}, {out}, {c.i0}, {c.f0}));
    expectRefused(g, out, c.what, c.message);
  }
}

// K-quant weights with operands that do not hold their blocks, refused at
// prepare with what is wrong.
TEST_F(RefErrors, BadKQuantOperandsAreRefused) {
  struct Case {
    const char *what, *message;
    llmc_dtype headerDtype;
    int64_t K, group, headerBytes, i2;
  } cases[] = {
      {"group 32", "Q4_K has groups of 256 (i0) dividing K, got i0 = 32",
       LLMC_KQ_HEADER, 256, 32, 16, 1},
      {"K not whole blocks", "dividing K, got i0 = 256, K = 384",
       LLMC_KQ_HEADER, 384, 256, 16, 1},
      {"f32 headers", "Q4_K scales must be kq_header", LLMC_F32, 256, 256, 16,
       1},
      {"short headers", "the Q4_K headers must hold 64 bytes", LLMC_KQ_HEADER,
       256, 256, 8, 1},
      {"i2 = 2", "i2 (int8 activations) must be 0, or 1", LLMC_KQ_HEADER, 256,
       256, 16, 2},
  };
  for (const Case &c : cases) {
    OpGraph g;
    const int64_t N = 4;
    uint32_t x = g.feed(std::vector<float>(size_t(c.K)), c.K),
             out = g.buffer(rowsT(), N);
    uint32_t w = g.weight(LLMC_Q4_K, {N, c.K},
                          std::vector<uint8_t>(size_t(N * c.K / 2)));
    uint32_t h =
        c.headerDtype == LLMC_F32
            ? g.weight(LLMC_F32, {N, 1}, std::vector<float>(N))
            : g.weight(c.headerDtype, {N, c.headerBytes},
                       std::vector<uint8_t>(size_t(N * c.headerBytes)));
    g.add(makeOp(LLMC_OP_LINEAR, {buf(x), wt(w), wt(h)}, {out},
                 {c.group, 0, c.i2}));
    expectRefused(g, out, c.what, c.message);
  }
}

// MoE ops whose operands or attributes cannot work, refused at prepare
// with what is wrong (and supports() agrees).
TEST_F(RefErrors, BadMoeGraphsAreRefused) {
  struct Case {
    const char *what, *message;
    std::function<void(OpGraph &, uint32_t x, uint32_t &out)> build;
  } cases[] = {
      {"k above the experts", "k (i0 = 9) must be in 1..8",
       [](OpGraph &g, uint32_t x, uint32_t &out) {
         out = g.buffer(rowsT(), 9);
         uint32_t ids = g.buffer(rowsT(), 9);
         g.bufferDesc(ids).dtype = LLMC_I32;
         g.add(makeOp(LLMC_OP_MOE_GATING, {buf(x)}, {out, ids}, {9, 1, 0}));
       }},
      {"f32 expert ids", "result 1 must be an i32 buffer",
       [](OpGraph &g, uint32_t x, uint32_t &out) {
         out = g.buffer(rowsT(), 2);
         uint32_t ids = g.buffer(rowsT(), 2);
         g.add(makeOp(LLMC_OP_MOE_GATING, {buf(x)}, {out, ids}, {2, 1, 0}));
       }},
      {"top-k then softmax, renormalised",
       "top-k then softmax (i2 = 1) takes no renormalisation",
       [](OpGraph &g, uint32_t x, uint32_t &out) {
         out = g.buffer(rowsT(), 2);
         uint32_t ids = g.buffer(rowsT(), 2);
         g.bufferDesc(ids).dtype = LLMC_I32;
         g.add(makeOp(LLMC_OP_MOE_GATING, {buf(x)}, {out, ids}, {2, 1, 1}));
       }},
      {"2-D experts", "W must stack the experts: [E, N, K]",
       [](OpGraph &g, uint32_t x, uint32_t &out) {
         uint32_t w = g.buffer(rowsT(), 2), ids = g.buffer(rowsT(), 2);
         g.bufferDesc(ids).dtype = LLMC_I32;
         g.add(makeOp(LLMC_OP_MOE_GATING, {buf(x)}, {w, ids}, {2, 1, 0}));
         uint32_t W = g.weight(LLMC_F32, {16, 8}, std::vector<float>(128));
         out = g.buffer(rowsT(), 32);
         g.add(makeOp(LLMC_OP_EXPERT_LINEAR, {buf(x), wt(W), none(), buf(ids)},
                      {out}, {0, 2}));
       }},
      {"f32 ids operand", "operand 3 must be an i32 buffer",
       [](OpGraph &g, uint32_t x, uint32_t &out) {
         uint32_t w = g.buffer(rowsT(), 2), ids = g.buffer(rowsT(), 2);
         g.bufferDesc(ids).dtype = LLMC_I32;
         g.add(makeOp(LLMC_OP_MOE_GATING, {buf(x)}, {w, ids}, {2, 1, 0}));
         uint32_t W = g.weight(LLMC_F32, {8, 4, 8}, std::vector<float>(256));
         out = g.buffer(rowsT(), 8);
         g.add(makeOp(LLMC_OP_EXPERT_LINEAR, {buf(x), wt(W), none(), buf(w)},
                      {out}, {0, 2}));
       }},
      {"x of another width", "x has 8 columns, expected K = 6 or k * K = 12",
       [](OpGraph &g, uint32_t x, uint32_t &out) {
         uint32_t w = g.buffer(rowsT(), 2), ids = g.buffer(rowsT(), 2);
         g.bufferDesc(ids).dtype = LLMC_I32;
         g.add(makeOp(LLMC_OP_MOE_GATING, {buf(x)}, {w, ids}, {2, 1, 0}));
         uint32_t W = g.weight(LLMC_F32, {8, 4, 6}, std::vector<float>(192));
         out = g.buffer(rowsT(), 8);
         g.add(makeOp(LLMC_OP_EXPERT_LINEAR, {buf(x), wt(W), none(), buf(ids)},
                      {out}, {0, 2}));
       }},
      {"combine of another width", "y has 8 columns, expected 6",
       [](OpGraph &g, uint32_t x, uint32_t &out) {
         uint32_t w = g.buffer(rowsT(), 2), ids = g.buffer(rowsT(), 2);
         g.bufferDesc(ids).dtype = LLMC_I32;
         g.add(makeOp(LLMC_OP_MOE_GATING, {buf(x)}, {w, ids}, {2, 1, 0}));
         out = g.buffer(rowsT(), 3);
         g.add(makeOp(LLMC_OP_MOE_COMBINE, {buf(x), buf(w)}, {out}, {2}));
       }},
      {"swiglu runs", "the runs per row i1 (3) must divide the result's 4",
       [](OpGraph &g, uint32_t x, uint32_t &out) {
         out = g.buffer(rowsT(), 4);
         g.add(makeOp(LLMC_OP_SWIGLU, {buf(x)}, {out}, {0, 3}));
       }},
  };
  for (const Case &c : cases) {
    OpGraph g;
    uint32_t x = g.feed(table, 8), out = 0;
    c.build(g, x, out);
    expectRefused(g, out, c.what, c.message);
    llmc_graph_desc desc = g.desc(out);
    EXPECT_FALSE(backend.supports(desc.ops[desc.num_ops - 1], desc)) << c.what;
  }
}

TEST_F(RefErrors, LinearShapeMismatchNamesTheWeight) {
  OpGraph g;
  uint32_t x = g.feed(table, 8), out = g.buffer(rowsT(), 4);
  uint32_t w = g.weight(LLMC_F32, {4, 7}, std::vector<float>(28));
  g.add(makeOp(LLMC_OP_LINEAR, {buf(x), wt(w), none(), none()}, {out}));
  try {
    backend.prepare(g.desc(out));
    FAIL() << "expected an error";
  } catch (const BackendError &e) {
    EXPECT_EQ(e.status(), LLMC_INVALID_ARGUMENT);
    EXPECT_THAT(e.what(), HasSubstr("W must be [4, 8]"));
  }
}

TEST_F(RefErrors, SupportsEveryOpKind) {
  // The graphs of the other tests, op by op: every kind is implemented.
  OpGraph g;
  uint32_t x = g.feed(table, 8);
  llmc_graph_desc desc = g.desc(x);
  llmc_op_desc embedding =
      makeOp(LLMC_OP_EMBEDDING, {wt(0), tokensInput()}, {x});
  EXPECT_TRUE(backend.supports(embedding, desc));
  llmc_op_desc silu = makeOp(LLMC_OP_SILU, {buf(x)}, {x});
  EXPECT_TRUE(backend.supports(silu, desc));
  llmc_op_desc bad = silu;
  bad.kind = LLMC_OP_COUNT;
  EXPECT_FALSE(backend.supports(bad, desc));
}

} // namespace
} // namespace llmc::testing
