//===- step_message_test.cpp - What rank 0 broadcasts ---------------------===//
//
// A step's metadata, a block copy and the stop come back as they went, and
// bytes that are not a message are an error, never a wrong step.
//
//===----------------------------------------------------------------------===//
#include "step_message.h"

#include "llmc/support/error.h"

#include <gmock/gmock.h>

namespace llmc {
namespace {

using ::testing::HasSubstr;

TEST(StepMessage, RoundTrips) {
  StepMessage m;
  m.batch.graph = "prefill";
  m.batch.tokens = {5, 6, 7};
  m.batch.positions = {0, 1, 2};
  m.batch.slots = {16, 17, 18};
  m.batch.queryStart = {0, 3};
  m.batch.contextLens = {3};
  m.batch.blockTables = {1, 4};
  m.batch.logitsRows = {2};
  m.batch.ropeLong = {1};
  m.batch.slidingSlots = {3, 4, 5};
  m.batch.slidingTables = {2, 0};
  m.batch.maxBlocks = 2;
  m.batch.outputRows = 1;
  StepMessage back = decodeStepMessage(encodeExecute(m.batch));
  EXPECT_EQ(back.kind, StepMessage::Execute);
  EXPECT_EQ(back.batch.graph, "prefill");
  EXPECT_EQ(back.batch.tokens, m.batch.tokens);
  EXPECT_EQ(back.batch.positions, m.batch.positions);
  EXPECT_EQ(back.batch.slots, m.batch.slots);
  EXPECT_EQ(back.batch.queryStart, m.batch.queryStart);
  EXPECT_EQ(back.batch.contextLens, m.batch.contextLens);
  EXPECT_EQ(back.batch.blockTables, m.batch.blockTables);
  EXPECT_EQ(back.batch.logitsRows, m.batch.logitsRows);
  EXPECT_EQ(back.batch.ropeLong, m.batch.ropeLong);
  EXPECT_EQ(back.batch.slidingSlots, m.batch.slidingSlots);
  EXPECT_EQ(back.batch.slidingTables, m.batch.slidingTables);
  EXPECT_EQ(back.batch.maxBlocks, 2);
  EXPECT_EQ(back.batch.outputRows, 1);

  back = decodeStepMessage(encodeCopyBlock({3, 9, true}));
  EXPECT_EQ(back.kind, StepMessage::CopyBlock);
  EXPECT_EQ(back.copy.src, 3);
  EXPECT_EQ(back.copy.dst, 9);
  EXPECT_TRUE(back.copy.sliding);
  EXPECT_EQ(decodeStepMessage(encodeStop()).kind, StepMessage::Stop);
}

TEST(StepMessage, MalformedBytesAreErrors) {
  StepBatch batch;
  batch.graph = "decode";
  batch.tokens = {1, 2};
  const std::vector<uint8_t> good = encodeExecute(batch);
  for (size_t n = 0; n < good.size(); ++n) {
    std::vector<uint8_t> cut(good.begin(), good.begin() + long(n));
    EXPECT_THROW(decodeStepMessage(cut), Error) << n << " bytes";
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_THAT([&] { decodeStepMessage(longer); },
              ::testing::ThrowsMessage<Error>(HasSubstr("past its end")));
  EXPECT_THAT([&] { decodeStepMessage({9}); },
              ::testing::ThrowsMessage<Error>(HasSubstr("unknown kind 9")));
  // A vector length far beyond the bytes: refused before any allocation.
  std::vector<uint8_t> huge = {StepMessage::Execute};
  for (int i = 0; i < 8; ++i)
    huge.push_back(0xff);
  EXPECT_THAT([&] { decodeStepMessage(huge); },
              ::testing::ThrowsMessage<Error>(HasSubstr("past its end")));
}

} // namespace
} // namespace llmc
