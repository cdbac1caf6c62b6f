#include "llmc/weights/safetensors.h"

#include "test_util.h"

#include <cstring>

namespace llmc::weights::test {
namespace {

class SafetensorsBad : public ::testing::Test {
protected:
  // Writes a file and expects opening it to fail naming `substrings`.
  void expectBad(const std::string &bytes,
                 std::vector<std::string> substrings) {
    std::string path = dir_.file("bad.safetensors");
    writeBytes(path, bytes);
    substrings.push_back("bad.safetensors");
    expectError([&] { SafetensorsFile f(path); }, substrings);
  }
  TempDir dir_;
};

TEST(Safetensors, ParsesTwoTensorsAndMetadata) {
  float vals[3] = {1.0f, -2.5f, 3.25f};
  std::string data(reinterpret_cast<char *>(vals), 12);
  data += std::string("\x80\x3f\x00\xc0", 4); // bf16 1.0, -2.0
  std::string bytes = safetensorsBytes(
      R"({"__metadata__":{"format":"pt"},)"
      R"("a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},)"
      R"("b":{"dtype":"BF16","shape":[1,2],"data_offsets":[12,16]}})",
      data);
  std::map<std::string, std::string> meta;
  auto ts = parseSafetensors(reinterpret_cast<const uint8_t *>(bytes.data()),
                             bytes.size(), "mem", &meta);
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(meta.at("format"), "pt");
  EXPECT_EQ(ts[0].name, "a");
  EXPECT_EQ(ts[1].shape, (std::vector<int64_t>{1, 2}));
  float out[3];
  toFloat32(ts[0], out);
  EXPECT_EQ(out[1], -2.5f);
  toFloat32(ts[1], out);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
}

TEST(Safetensors, ZeroSizedTensorAndScalar) {
  std::string bytes = safetensorsBytes(
      R"({"e":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]},)"
      R"("s":{"dtype":"I64","shape":[],"data_offsets":[0,8]}})",
      std::string(8, '\0'));
  auto ts = parseSafetensors(reinterpret_cast<const uint8_t *>(bytes.data()),
                             bytes.size(), "mem");
  ASSERT_EQ(ts.size(), 2u);
  EXPECT_EQ(ts[0].numElements() + ts[1].numElements(), 1);
}

TEST_F(SafetensorsBad, MissingFile) {
  expectError([&] { SafetensorsFile f(dir_.file("nope.safetensors")); },
              {"nope.safetensors"});
}

TEST_F(SafetensorsBad, TruncatedBelowEightBytes) {
  expectBad("\x01\x02\x03", {"3 bytes", "at least 8"});
  expectBad("", {"0 bytes"});
}

TEST_F(SafetensorsBad, HeaderLengthLargerThanFile) {
  std::string b = safetensorsBytes("{}");
  b[0] = 100;
  expectBad(b, {"header length 100", "larger than the file"});
  std::string huge(8, '\xff');
  expectBad(huge + "{}", {"header length 18446744073709551615"});
}

TEST_F(SafetensorsBad, JsonSyntaxErrorHasLineAndColumn) {
  expectBad(safetensorsBytes("{\n  \"a\": {\"dtype\": \"F32\",,}\n}"),
            {"JSON syntax error", "line 2, column 24"});
  expectBad(safetensorsBytes("{\"a\": "), {"JSON syntax error", "line 1"});
}

TEST_F(SafetensorsBad, DeepNestingIsRejected) {
  expectBad(safetensorsBytes(std::string(10000, '[')), {"nested deeper"});
}

TEST_F(SafetensorsBad, WrongTypes) {
  expectBad(safetensorsBytes("[1,2]"), {"must be a JSON object", "array"});
  expectBad(safetensorsBytes(R"({"t":5})"), {"tensor 't'", "number"});
  expectBad(
      safetensorsBytes(R"({"t":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})"),
      {"tensor 't'", "'dtype' must be a string"});
  expectBad(
      safetensorsBytes(
          R"({"t":{"dtype":"F32","shape":"1","data_offsets":[0,4]}})", "abcd"),
      {"tensor 't'", "'shape' must be an array"});
  expectBad(safetensorsBytes(
                R"({"t":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})",
                "abcd"),
            {"tensor 't'", "'shape' must be an array of integers"});
  expectBad(
      safetensorsBytes(
          R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", "abcd"),
      {"tensor 't'", "data_offsets"});
  expectBad(safetensorsBytes(R"({"t":{"dtype":"F32","shape":[1]}})", "abcd"),
            {"tensor 't'", "missing 'data_offsets'"});
  expectBad(safetensorsBytes(R"({"__metadata__":{"format":1}})"),
            {"__metadata__", "format", "must be a string"});
}

TEST_F(SafetensorsBad, UnknownDtype) {
  expectBad(
      safetensorsBytes(
          R"({"w":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}})", "a"),
      {"unsupported dtype 'F8_E4M3' for tensor 'w'", "supported: F64", "BF16"});
}

TEST_F(SafetensorsBad, OffsetsPastEndOfFile) {
  expectBad(
      safetensorsBytes(
          R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", "abcd"),
      {"tensor 'w'", "[0, 8]", "past the end", "4 data bytes"});
  expectBad(safetensorsBytes(
                R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})",
                "abcdefgh"),
            {"tensor 'w'", "begin after end"});
  expectBad(safetensorsBytes(
                R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})"),
            {"tensor 'w'", "non-negative"});
}

TEST_F(SafetensorsBad, OverlappingTensors) {
  expectBad(safetensorsBytes(
                R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                std::string(12, '\0')),
            {"'a'", "'b'", "overlap"});
}

TEST_F(SafetensorsBad, SizeDisagreesWithShape) {
  expectBad(safetensorsBytes(
                R"({"w":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,8]}})",
                std::string(8, '\0')),
            {"tensor 'w'", "span 8 bytes", "[2,3]", "needs 12"});
}

TEST_F(SafetensorsBad, NegativeDim) {
  expectBad(safetensorsBytes(
                R"({"w":{"dtype":"F32","shape":[-1,4],"data_offsets":[0,0]}})"),
            {"tensor 'w'", "negative dimension -1"});
}

TEST_F(SafetensorsBad, ElementCountOverflow) {
  expectBad(
      safetensorsBytes(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],)"
                       R"("data_offsets":[0,0]}})"),
      {"tensor 'w'", "too many elements"});
}

TEST_F(SafetensorsBad, DuplicateNames) {
  expectBad(safetensorsBytes(
                R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                std::string(8, '\0')),
            {"duplicate tensor 'w'"});
}

TEST(SafetensorsToFloat, RejectsNonFloatDtype) {
  int64_t v = 7;
  TensorRef t{"ids", DType::I64,     {1}, reinterpret_cast<uint8_t *>(&v),
              8,     "f.safetensors"};
  float out;
  expectError([&] { toFloat32(t, &out); }, {"'ids'", "f.safetensors", "I64"});
}

} // namespace
} // namespace llmc::weights::test
