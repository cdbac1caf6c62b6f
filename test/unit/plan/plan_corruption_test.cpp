// Every way a plan file can be damaged or forged must end in llmc::Error
// with a message that says what is wrong, never in a crash.
#include "plan_test_util.h"

#include "checksum.h"
#include "plan_format.h"
#include "plan_generated.h"

#include "llmc/support/error.h"

#include <gmock/gmock.h>

#include <cstring>

namespace llmc::test {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class PlanCorruptionTest : public PlanTest {
protected:
  void SetUp() override {
    PlanTest::SetUp();
    good_ = path("good.plan");
    testWriter().write(good_);
    bytes_ = readBytes(good_);
    header_ = detail::decodeHeader(
        reinterpret_cast<const uint8_t *>(bytes_.data()), bytes_.size());
  }
  /// Loads `bytes` from a file and expects an error containing `message`
  /// and naming the file.
  void expectRefused(const std::string &bytes, const std::string &message,
                     const PlanLoadOptions &options = {}) {
    std::string p = path("bad.plan");
    writeBytes(p, bytes);
    EXPECT_THAT(
        [&] { Plan::load(p, options); },
        ThrowsMessage<Error>(AllOf(HasSubstr(p + ": "), HasSubstr(message))));
  }
  void expectWriterPlanRefused(
      const std::function<void(std::vector<Graph> &)> &mutate,
      const std::string &message) {
    std::string p = path("bad.plan");
    testWriter(mutate).write(p);
    EXPECT_THAT(
        [&] { Plan::load(p); },
        ThrowsMessage<Error>(AllOf(HasSubstr(p + ": "), HasSubstr(message))));
  }
  std::string good_, bytes_;
  detail::PlanHeader header_;
};

TEST_F(PlanCorruptionTest, TheGoodPlanLoads) {
  EXPECT_NO_THROW(Plan::load(good_));
}

TEST_F(PlanCorruptionTest, EmptyFile) {
  expectRefused("", "truncated plan: 0 bytes, a plan header is 64");
}

TEST_F(PlanCorruptionTest, TruncatedHeader) {
  expectRefused(bytes_.substr(0, 8),
                "truncated plan: 8 bytes, a plan header is 64");
  expectRefused(bytes_.substr(0, 63), "truncated plan: 63 bytes");
}

TEST_F(PlanCorruptionTest, TruncatedMetadataAndWeights) {
  uint64_t fbEnd = header_.flatBufferOffset + header_.flatBufferSize;
  for (uint64_t n :
       {uint64_t(72), uint64_t(100), fbEnd - 1, fbEnd, header_.weightsOffset,
        header_.weightsOffset + 1, uint64_t(bytes_.size() - 1)}) {
    SCOPED_TRACE(n);
    expectRefused(bytes_.substr(0, n), "truncated plan: " + std::to_string(n) +
                                           " bytes, but its weight section "
                                           "ends at byte " +
                                           std::to_string(bytes_.size()));
  }
  expectRefused(bytes_.substr(0, 64),
                "truncated plan: 64 bytes, but its header is 72");
}

TEST_F(PlanCorruptionTest, TrailingBytes) {
  expectRefused(bytes_ + "xyz", "3 unexpected bytes after the weight section");
}

TEST_F(PlanCorruptionTest, BadMagic) {
  std::string b = bytes_;
  b[3] ^= 0x20;
  expectRefused(b, "not an llmc plan (bad magic)");
}

TEST_F(PlanCorruptionTest, NotAPlan) {
  expectRefused(std::string(200, 'x'), "not an llmc plan (bad magic)");
  expectRefused("GGUF\x03\x00\x00\x00" + std::string(100, '\0'),
                "not an llmc plan (bad magic)");
  expectRefused("hello\n", "truncated plan: 6 bytes");
}

TEST_F(PlanCorruptionTest, Directory) {
  EXPECT_THAT([&] { Plan::load(dir_); },
              ThrowsMessage<Error>(HasSubstr(dir_ + ": is a directory")));
}

TEST_F(PlanCorruptionTest, MissingFile) {
  EXPECT_THAT([&] { Plan::load(path("missing.plan")); },
              ThrowsMessage<Error>(HasSubstr("missing.plan: cannot open")));
}

void patch32(std::string &b, size_t offset, uint32_t v) {
  detail::writeLE(reinterpret_cast<uint8_t *>(b.data()) + offset, v);
}

void patch64(std::string &b, size_t offset, uint64_t v) {
  detail::writeLE(reinterpret_cast<uint8_t *>(b.data()) + offset, v);
}

TEST_F(PlanCorruptionTest, NewerMajorVersion) {
  std::string b = bytes_;
  patch32(b, detail::kMajorOffset, 2);
  patch32(b, detail::kMinorOffset, 7);
  expectRefused(b, "plan format 2.7 is newer than this llmc supports (1.x): "
                   "recompile the model with this llmc or upgrade llmc");
}

TEST_F(PlanCorruptionTest, OlderMajorVersion) {
  std::string b = bytes_;
  patch32(b, detail::kMajorOffset, 0);
  patch32(b, detail::kMinorOffset, 9);
  expectRefused(b, "plan format 0.9 is older than this llmc supports (1.x)");
}

TEST_F(PlanCorruptionTest, NewerMinorVersionLoads) {
  std::string b = bytes_;
  patch32(b, detail::kMinorOffset, kPlanFormatMinor + 7);
  writeBytes(path("minor.plan"), b);
  auto plan = Plan::load(path("minor.plan"));
  EXPECT_EQ(plan->formatMinor(), kPlanFormatMinor + 7);
}

TEST_F(PlanCorruptionTest, InconsistentHeader) {
  std::string b = bytes_;
  patch32(b, detail::kHeaderSizeOffset, 16);
  expectRefused(b, "corrupted plan header: header size 16");
  b = bytes_;
  patch64(b, detail::kFlatBufferSizeOffset, header_.weightsOffset);
  expectRefused(b, "corrupted plan header: sections overlap");
  b = bytes_;
  patch64(b, detail::kWeightsOffsetOffset, header_.weightsOffset + 1);
  expectRefused(b, "corrupted plan header");
  b = bytes_;
  patch64(b, detail::kWeightsSizeOffset, ~uint64_t(0) - 100);
  expectRefused(b, "truncated plan");
}

TEST_F(PlanCorruptionTest, FlippedMetadataByteFailsTheVerifierOrChecksum) {
  std::string b = bytes_;
  // The root table offset: the verifier must catch it.
  const size_t fb = header_.flatBufferOffset;
  patch32(b, fb, 0x7ffffff0);
  expectRefused(b, "corrupted plan metadata");
  // The file identifier.
  b = bytes_;
  b[fb + 4] = 'X';
  expectRefused(b, "corrupted plan metadata");
  // A byte inside a string is structurally fine: only the checksum sees it.
  b = bytes_;
  size_t at = b.find("llama", fb);
  ASSERT_LT(at, header_.weightsOffset);
  b[at] = 'L';
  expectRefused(b, "checksum mismatch: the plan's metadata is corrupted");
}

TEST_F(PlanCorruptionTest, EveryFlippedMetadataByteIsRefused) {
  // Whatever byte of the metadata changes, loading fails cleanly (verifier,
  // structural checks or checksum), never crashes; without the checksum a
  // flip either still passes every structural check or is refused.
  std::vector<uint64_t> storage((bytes_.size() + 7) / 8);
  auto *data = reinterpret_cast<uint8_t *>(storage.data());
  std::memcpy(data, bytes_.data(), bytes_.size());
  PlanLoadOptions skip;
  skip.verifyChecksum = false;
  size_t refusedWithoutChecksum = 0;
  for (uint64_t k = header_.flatBufferOffset;
       k < header_.flatBufferOffset + header_.flatBufferSize; ++k) {
    data[k] ^= 0x41;
    EXPECT_THROW(Plan::loadFromMemory(data, bytes_.size(), "flip.plan"), Error)
        << "byte " << k;
    try {
      Plan::loadFromMemory(data, bytes_.size(), "flip.plan", skip);
    } catch (const Error &) {
      ++refusedWithoutChecksum;
    }
    data[k] ^= 0x41;
  }
  EXPECT_GT(refusedWithoutChecksum, 0u);
}

TEST_F(PlanCorruptionTest, FlippedWeightByte) {
  // Found by the whole-file hash (llmc inspect --verify); a plain load hashes
  // the metadata only, so that GB-sized plans start at once.
  PlanLoadOptions verify;
  verify.verifyWeights = true;
  for (uint64_t k : {header_.weightsOffset, header_.weightsOffset + 4000,
                     uint64_t(bytes_.size() - 1)}) {
    std::string b = bytes_;
    b[k] ^= 1;
    expectRefused(b, "checksum mismatch: the plan is corrupted", verify);
    std::string p = path("weight-flip.plan");
    writeBytes(p, b);
    EXPECT_NO_THROW(Plan::load(p));
  }
}

TEST_F(PlanCorruptionTest, FlippedWholeFileChecksum) {
  std::string b = bytes_;
  b[detail::kChecksumOffset] ^= 1;
  PlanLoadOptions verify;
  verify.verifyWeights = true;
  expectRefused(b, "checksum mismatch: the plan is corrupted", verify);
}

TEST_F(PlanCorruptionTest, Format10PlansAreHashedWhole) {
  // A 1.0 header (64 bytes, no metadata checksum): the whole-file checksum
  // is all there is, so a plain load still runs it.
  std::string b = bytes_;
  patch32(b, detail::kHeaderSizeOffset, 64);
  patch32(b, detail::kMinorOffset, 0);
  // As a 1.0 writer would have hashed it: from byte 64 on.
  patch64(b, detail::kChecksumOffset,
          detail::checksum(b.data() + 64, b.size() - 64));
  std::string p = path("v10.plan");
  writeBytes(p, b);
  EXPECT_NO_THROW(Plan::load(p));
  b[header_.weightsOffset] ^= 1;
  expectRefused(b, "checksum mismatch: the plan is corrupted");
}

TEST_F(PlanCorruptionTest, FlippedPaddingByte) {
  std::string b = bytes_;
  b[header_.weightsOffset - 1] = 1;
  expectRefused(b, "checksum mismatch: the plan's metadata is corrupted");
}

TEST_F(PlanCorruptionTest, BadOpKind) {
  expectWriterPlanRefused(
      [](std::vector<Graph> &g) { g[1].ops[2].kind = 99; },
      "corrupted plan metadata: graph 'decode' op 2: unknown op kind 99");
  expectWriterPlanRefused(
      [](std::vector<Graph> &g) { g[0].ops[0].kind = LLMC_OP_COUNT; },
      "unknown op kind " + std::to_string(LLMC_OP_COUNT));
}

TEST_F(PlanCorruptionTest, OperandOutOfRange) {
  expectWriterPlanRefused(
      [](std::vector<Graph> &g) { g[0].ops[1].operands[0].index = 17; },
      "graph 'prefill' op 1 (rms_norm): operand 0 is buffer 17 but the graph "
      "has 3");
  expectWriterPlanRefused(
      [](std::vector<Graph> &g) { g[0].ops[2].operands[1].index = 8; },
      "graph 'prefill' op 2 (linear): operand 1 is weight 8 but the plan has "
      "8");
  expectWriterPlanRefused(
      [](std::vector<Graph> &g) { g[0].ops[0].operands[1].index = 2; },
      "operand 1 is input 2");
  expectWriterPlanRefused(
      [](std::vector<Graph> &g) { g[0].ops[0].operands[1].kind = 7; },
      "operand 1 is of unknown kind 7");
}

TEST_F(PlanCorruptionTest, ResultOrLogitsOutOfRange) {
  expectWriterPlanRefused(
      [](std::vector<Graph> &g) { g[1].ops[0].results[0] = 3; },
      "graph 'decode' op 0 (embedding): result 0 is buffer 3 but the graph "
      "has 3");
  expectWriterPlanRefused(
      [](std::vector<Graph> &g) { g[1].logitsBuffer = 5; },
      "graph 'decode': logits buffer 5 but the graph has 3");
}

TEST_F(PlanCorruptionTest, BadBuffersAndWorkspace) {
  expectWriterPlanRefused(
      [](std::vector<Graph> &g) { g[0].buffers[1].dtype = 12; },
      "graph 'prefill' buffer 1: unknown dtype 12");
  expectWriterPlanRefused(
      [](std::vector<Graph> &g) { g[0].buffers[2].cols = -1; },
      "graph 'prefill' buffer 2: size or offset out of range");
  expectWriterPlanRefused([](std::vector<Graph> &g) { g[0].workspaceT = -5; },
                          "graph 'prefill': workspace size out of range");
}

TEST_F(PlanCorruptionTest, WriterRefusesOverfullOps) {
  EXPECT_THAT(
      [&] {
        testWriter([](std::vector<Graph> &g) {
          g[0].ops[0].num_operands = LLMC_MAX_OPERANDS + 1;
        }).write(path("x.plan"));
      },
      ThrowsMessage<Error>(HasSubstr("more operands or results")));
}

/// Writes a plan whose metadata the writer would never produce: one weight
/// entry as given, over a weight section of `sectionBytes`.
/// The MoE fields of a forged config (format 1.2).
struct ForgedMoe {
  int64_t experts = 0, perToken = 0, layers = 0, total = 0, active = 0;
};

void writeForgedPlan(const std::string &p, uint32_t dtype,
                     std::vector<int64_t> shape, uint64_t offset,
                     uint64_t nbytes, uint64_t sectionBytes,
                     uint32_t kvDtype = LLMC_F32, int64_t layers = 2,
                     ForgedMoe moe = {}) {
  flatbuffers::FlatBufferBuilder fbb;
  fb::ConfigBuilder cb(fbb);
  cb.add_num_layers(layers);
  cb.add_kv_dtype(kvDtype);
  cb.add_num_experts(moe.experts);
  cb.add_experts_per_token(moe.perToken);
  cb.add_moe_layers(moe.layers);
  cb.add_total_parameters(moe.total);
  cb.add_active_parameters(moe.active);
  auto config = cb.Finish();
  auto weight = fb::CreateWeight(fbb, fbb.CreateString("w"), dtype,
                                 fbb.CreateVector(shape), offset, nbytes);
  std::vector<flatbuffers::Offset<fb::Weight>> weights = {weight};
  auto weightsOff = fbb.CreateVector(weights);
  fb::FinishPlanBuffer(fbb, fb::CreatePlan(fbb, config, 0, 0, weightsOff, 0));
  detail::writePlanFile(p, fbb.GetBufferPointer(), fbb.GetSize(),
                        {{0, sectionBytes, {}}});
}

TEST_F(PlanCorruptionTest, ForgedWeightEntries) {
  std::string p = path("forged.plan");
  auto refused = [&](const std::string &message) {
    EXPECT_THAT(
        [&] { Plan::load(p); },
        ThrowsMessage<Error>(AllOf(HasSubstr(p + ": "), HasSubstr(message))));
  };
  writeForgedPlan(p, LLMC_F32, {4}, 0, 16, 16);
  EXPECT_NO_THROW(Plan::load(p));
  writeForgedPlan(p, LLMC_F32, {4}, 0, 15, 16);
  refused("corrupted plan metadata: weight 0 'w': 15 bytes, but its dtype "
          "and shape make 16");
  writeForgedPlan(p, LLMC_I4, {3, 5}, 0, 7, 16);
  refused("7 bytes, but its dtype and shape make 8");
  writeForgedPlan(p, LLMC_F32, {4}, 64, 16, 16);
  refused("weight 0 'w': bytes 64..80 lie outside the weight section (16 "
          "bytes)");
  writeForgedPlan(p, LLMC_F32, {4}, ~uint64_t(0) - 63, 16, 16);
  refused("lie outside the weight section");
  writeForgedPlan(p, LLMC_F32, {1}, 8, 4, 16);
  refused("offset 8 is not 64-byte aligned");
  writeForgedPlan(p, 77, {4}, 0, 16, 16);
  refused("weight 0 'w': unknown dtype 77");
  writeForgedPlan(p, LLMC_F32, {1, 1, 1, 1, 1}, 0, 4, 16);
  refused("rank 5");
  writeForgedPlan(p, LLMC_F32, {int64_t(1) << 40, int64_t(1) << 40}, 0, 0, 16);
  refused("bad shape");
  writeForgedPlan(p, LLMC_F32, {-4}, 0, 0, 16);
  refused("bad shape");
  writeForgedPlan(p, LLMC_F32, {4}, 0, 16, 16, LLMC_I4);
  refused("KV-cache dtype 4 is not f32, bf16, f16, int8 or fp8");
  for (uint32_t kv : {LLMC_I8, LLMC_FP8_E4M3}) {
    writeForgedPlan(p, LLMC_F32, {4}, 0, 16, 16, kv);
    EXPECT_EQ(Plan::load(p)->config().kvDtype, kv);
  }
  writeForgedPlan(p, LLMC_F32, {4}, 0, 16, 16, LLMC_F32, -2);
  refused("config num_layers = -2 is out of range");
  // MoE counts that no compiler writes.
  writeForgedPlan(p, LLMC_F32, {4}, 0, 16, 16, LLMC_F32, 2, {8, 2, 2, 100, 40});
  EXPECT_EQ(Plan::load(p)->config().expertsPerToken, 2);
  writeForgedPlan(p, LLMC_F32, {4}, 0, 16, 16, LLMC_F32, 2, {8, 9, 2, 0, 0});
  refused("config: 9 experts per token of 8 in 2 of 2 layers");
  writeForgedPlan(p, LLMC_F32, {4}, 0, 16, 16, LLMC_F32, 2, {8, 2, 3, 0, 0});
  refused("config: 2 experts per token of 8 in 3 of 2 layers");
  writeForgedPlan(p, LLMC_F32, {4}, 0, 16, 16, LLMC_F32, 2, {0, 2, 0, 0, 0});
  refused("config: 2 experts per token of 0");
  writeForgedPlan(p, LLMC_F32, {4}, 0, 16, 16, LLMC_F32, 2, {-8, 0, 0, 0, 0});
  refused("config num_experts = -8 is out of range");
  writeForgedPlan(p, LLMC_F32, {4}, 0, 16, 16, LLMC_F32, 2, {8, 2, 2, 10, 40});
  refused("config: parameter counts out of range");
}

} // namespace
} // namespace llmc::test
