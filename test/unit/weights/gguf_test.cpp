#include "llmc/weights/gguf.h"
#include "llmc/weights/gguf_writer.h"

#include "gguf_bytes.h"
#include "test_util.h"

#include <cmath>

namespace llmc::weights::test {
namespace {

GGUFFile parseBytes(const std::string &b, const std::string &name = "t.gguf") {
  return GGUFFile::parse(reinterpret_cast<const uint8_t *>(b.data()), b.size(),
                         name);
}

std::vector<float> ramp(size_t n, float scale = 0.01f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = std::sin(static_cast<float>(i) * 0.37f) * scale * (1 + i % 7);
  return v;
}

std::vector<float> floats(const TensorRef &t) {
  std::vector<float> v(static_cast<size_t>(t.numElements()));
  toFloat32(t, v.data());
  return v;
}

GGUFWriter everyKindWriter() {
  GGUFWriter w;
  w.addString("general.architecture", "llama");
  w.addU8("u8", 200);
  w.addI8("i8", -100);
  w.addU16("u16", 60000);
  w.addI16("i16", -30000);
  w.addU32("u32", 4000000000u);
  w.addI32("i32", -2000000000);
  w.addU64("u64", 1ull << 60);
  w.addI64("i64", -(1ll << 60));
  w.addF32("f32", 0.5f);
  w.addF64("f64", 1e-300);
  w.addBool("yes", true);
  w.addBool("no", false);
  w.addString("empty", "");
  w.addStringArray("strs", {"a", "", "\xe2\x96\x81hello"});
  w.addFloatArray("floats", {1.5f, -2.0f});
  w.addIntArray("ints", {1, -2, 3});
  w.addI64Array("i64s", {1ll << 40});
  GGUFArray inner1{GGUFType::U8, {{GGUFType::U8, uint64_t{1}}}};
  GGUFArray inner2{GGUFType::U8, {}};
  GGUFArray outer{GGUFType::Array,
                  {{GGUFType::Array, inner1}, {GGUFType::Array, inner2}}};
  w.addValue("nested", {GGUFType::Array, outer});
  return w;
}

TEST(GGUF, RoundTripsEveryValueType) {
  TempDir d;
  everyKindWriter().write(d.file("kv.gguf"));
  GGUFFile f(d.file("kv.gguf"));
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.getString("general.architecture"), "llama");
  EXPECT_EQ(f.getInt("u8"), 200);
  EXPECT_EQ(f.getInt("i8"), -100);
  EXPECT_EQ(f.getInt("u16"), 60000);
  EXPECT_EQ(f.getInt("i16"), -30000);
  EXPECT_EQ(f.getInt("u32"), 4000000000ll);
  EXPECT_EQ(f.getInt("i32"), -2000000000);
  EXPECT_EQ(f.getInt("u64"), 1ll << 60);
  EXPECT_EQ(f.getInt("i64"), -(1ll << 60));
  EXPECT_EQ(f.getFloat("f32"), 0.5);
  EXPECT_EQ(f.getFloat("f64"), 1e-300);
  EXPECT_TRUE(f.getBool("yes"));
  EXPECT_FALSE(f.getBool("no"));
  EXPECT_EQ(f.getString("empty"), "");
  EXPECT_EQ(f.getStringArray("strs"),
            (std::vector<std::string>{"a", "", "\xe2\x96\x81hello"}));
  EXPECT_EQ(f.getFloatArray("floats"), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(f.getIntArray("ints"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(f.getIntArray("i64s"), (std::vector<int64_t>{1ll << 40}));
  const GGUFValue *nested = f.get("nested");
  ASSERT_NE(nested, nullptr);
  const auto &outer = std::get<GGUFArray>(nested->value);
  EXPECT_EQ(outer.elemType, GGUFType::Array);
  ASSERT_EQ(outer.items.size(), 2u);
  EXPECT_EQ(std::get<GGUFArray>(outer.items[0].value).items.size(), 1u);
  EXPECT_EQ(f.metadata().size(), 19u);
  EXPECT_EQ(f.metadata()[1].first, "u8");
  EXPECT_FALSE(f.has("absent"));
  EXPECT_EQ(f.findInt("absent"), std::nullopt);
  EXPECT_EQ(f.findInt("u8"), 200);
}

TEST(GGUF, GetterErrorsNameFileKeyAndType) {
  auto bytes = everyKindWriter().serialize();
  auto f = GGUFFile::parse(bytes.data(), bytes.size(), "m.gguf");
  expectError([&] { f.getInt("absent"); }, {"m.gguf", "'absent'", "missing"});
  expectError([&] { f.getInt("f32"); },
              {"m.gguf", "'f32'", "is float32", "expected an integer"});
  expectError([&] { f.getString("u8"); }, {"'u8'", "is uint8"});
  expectError([&] { f.getStringArray("ints"); },
              {"'ints'", "array of int32", "array of strings"});
  expectError([&] { f.getFloatArray("strs"); }, {"array of string"});
  expectError([&] { f.getBool("i8"); }, {"'i8'", "int8"});
  expectError([&] { f.findFloat("strs"); }, {"'strs'"});
}

TEST(GGUF, RoundTripsTensorsOfEveryType) {
  auto w = ramp(3 * 64);
  GGUFWriter g;
  g.addTensor("f32", {3, 64}, w.data(), DType::F32);
  g.addTensor("f16", {3, 64}, w.data(), DType::F16);
  g.addTensor("bf16", {3, 64}, w.data(), DType::BF16);
  g.addTensor("q8", {3, 64}, w.data(), DType::Q8_0);
  g.addTensor("q4", {3, 64}, w.data(), DType::Q4_0);
  g.addTensor("vec", {5}, w.data(), DType::F32);
  g.addTensor("4d", {2, 1, 3, 32}, w.data(), DType::F32);
  for (uint32_t version : {2u, 3u}) {
    auto bytes = g.serialize(version);
    auto f = GGUFFile::parse(bytes.data(), bytes.size(), "t.gguf");
    EXPECT_EQ(f.version(), version);
    ASSERT_EQ(f.tensors().size(), 7u);
    const float tol[] = {0, 1e-4f, 1e-3f, 1e-3f, 1e-2f};
    const char *names[] = {"f32", "f16", "bf16", "q8", "q4"};
    const DType types[] = {DType::F32, DType::F16, DType::BF16, DType::Q8_0,
                           DType::Q4_0};
    for (int i = 0; i < 5; ++i) {
      const TensorRef *t = f.find(names[i]);
      ASSERT_NE(t, nullptr);
      EXPECT_EQ(t->dtype, types[i]);
      EXPECT_EQ(t->shape, (std::vector<int64_t>{3, 64}));
      EXPECT_EQ((t->data - bytes.data()) % 32, 0) << names[i];
      auto back = floats(*t);
      for (size_t j = 0; j < w.size(); ++j)
        ASSERT_NEAR(back[j], w[j], tol[i]) << names[i] << " " << j;
    }
    EXPECT_EQ(floats(*f.find("f32")), w);
    EXPECT_EQ(f.find("4d")->shape, (std::vector<int64_t>{2, 1, 3, 32}));
    EXPECT_EQ(f.find("vec")->shape, std::vector<int64_t>{5});
  }
}

TEST(GGUFWriter, RejectsBadInput) {
  GGUFWriter g;
  g.addU32("k", 1);
  expectError([&] { g.addString("k", "x"); }, {"'k'", "twice"});
  float x[48] = {};
  expectError(
      [&] {
        g.addTensor("q", {1, 48}, x, DType::Q8_0);
      },
      {"'q'", "multiple of 32"});
  g.addTensor("t", {48}, x, DType::F32);
  expectError([&] { g.addTensor("t", {48}, x, DType::F32); }, {"'t'", "twice"});
  expectError(
      [&] {
        g.addValue("bad", {GGUFType::String, int64_t{1}});
      },
      {"'bad'", "does not match"});
  expectError([&] { g.serialize(1); }, {"version 1"});
  expectError([&] { g.write("/nonexistent-dir/x.gguf"); },
              {"/nonexistent-dir/x.gguf"});
}

TEST(GGUFBad, MissingFile) {
  expectError([] { GGUFFile f("/nonexistent/m.gguf"); },
              {"/nonexistent/m.gguf"});
}

TEST(GGUFBad, VersionAndMagic) {
  expectError([] { parseBytes(RawGGUF(1).bytes); },
              {"t.gguf", "unsupported GGUF version 1 (supported: 2, 3)"});
  expectError([] { parseBytes(RawGGUF(4).bytes); },
              {"unsupported GGUF version 4 (supported: 2, 3)"});
  std::string b = RawGGUF().bytes;
  b[0] = 'X';
  expectError([&] { parseBytes(b); },
              {"t.gguf", "not a GGUF file (magic", "\\x58\\x47\\x55\\x46"});
  expectError([] { parseBytes("GG"); }, {"not a GGUF file", "2 bytes"});
}

TEST(GGUFBad, AbsurdCounts) {
  expectError([] { parseBytes(RawGGUF(3, 0, 1ull << 62).bytes); },
              {"4611686018427387904 metadata entries"});
  expectError([] { parseBytes(RawGGUF(3, ~0ull, 0).bytes); },
              {"18446744073709551615 tensors"});
  expectError([] { parseBytes(RawGGUF(3, 0, 1).u64(~0ull).u64(0).bytes); },
              {"key #0", "length 18446744073709551615"});
  auto arr = [](uint32_t elem, uint64_t n) {
    return RawGGUF(3, 0, 1).str("a").u32(9).u32(elem).u64(n).bytes;
  };
  expectError([&] { parseBytes(arr(0, 1ull << 61)); },
              {"array 'a'", "2305843009213693952 elements"});
  expectError([&] { parseBytes(arr(8, 1ull << 60)); }, {"array 'a'"});
  expectError([&] { parseBytes(arr(9, ~0ull)); }, {"array 'a'"});
  expectError([&] { parseBytes(arr(13, 1)); },
              {"'a'", "unknown value type 13"});
}

TEST(GGUFBad, NestingDepthBounded) {
  RawGGUF r(3, 0, 1);
  r.str("deep").u32(9);
  for (int i = 0; i < 100; ++i)
    r.u32(9).u64(1);
  expectError([&] { parseBytes(r.bytes); }, {"'deep'", "nested deeper"});
}

TEST(GGUFBad, KeyProblems) {
  expectError([] { parseBytes(RawGGUF(3, 0, 1).str("k").u32(13).bytes); },
              {"'k'", "unknown value type 13"});
  expectError(
      [] {
        parseBytes(RawGGUF(3, 0, 2)
                       .str("k")
                       .u32(4)
                       .u32(1)
                       .str("k")
                       .u32(4)
                       .u32(2)
                       .bytes);
      },
      {"duplicate metadata key 'k'"});
  expectError(
      [] {
        parseBytes(RawGGUF(3, 0, 1).str("b").u32(7).put<uint8_t>(2).bytes);
      },
      {"'b'", "bool", "byte value 2"});
}

TEST(GGUFBad, Alignment) {
  auto withAlign = [](uint32_t type, uint64_t v) {
    RawGGUF r(3, 0, 1);
    r.str("general.alignment").u32(type);
    type == 4 ? (void)r.u32(static_cast<uint32_t>(v)) : (void)r.u64(v);
    return r.bytes;
  };
  expectError([&] { parseBytes(withAlign(4, 48)); },
              {"general.alignment", "power of two"});
  expectError([&] { parseBytes(withAlign(4, 0)); }, {"general.alignment"});
  expectError([&] { parseBytes(withAlign(11, 64)); },
              {"general.alignment", "int64"});
  EXPECT_EQ(parseBytes(withAlign(4, 64)).alignment(), 64u);
  // A 64-aligned file: the tensor at offset 64 lies after 64-byte padding.
  RawGGUF r(3, 1, 1);
  r.str("general.alignment").u32(4).u32(64);
  r.tensor("w", {8}, 0, 64).padTo(64);
  size_t dataStart = r.bytes.size();
  r.bytes.append(128, '\0');
  auto f = parseBytes(r.bytes);
  EXPECT_EQ(f.find("w")->data -
                reinterpret_cast<const uint8_t *>(r.bytes.data()),
            static_cast<ptrdiff_t>(dataStart + 64));
  RawGGUF m(3, 1, 1);
  m.str("general.alignment").u32(4).u32(64);
  m.tensor("w", {8}, 0, 32).padTo(64).bytes.append(128, '\0');
  expectError([&] { parseBytes(m.bytes); },
              {"'w'", "offset 32", "alignment 64"});
}

TEST(GGUFBad, TensorInfoProblems) {
  auto one = [](std::initializer_list<uint64_t> ne, uint32_t type, uint64_t off,
                size_t dataBytes = 64) {
    RawGGUF r(3, 1, 0);
    r.tensor("w", ne, type, off).padTo(32).bytes.append(dataBytes, '\0');
    return r.bytes;
  };
  EXPECT_NO_THROW(parseBytes(one({16}, 0, 0)));
  expectError([&] { parseBytes(one({16}, 16, 0)); },
              {"t.gguf", "'w' is IQ2_XXS (type 16), which llmc cannot read"});
  expectError([&] { parseBytes(one({16}, 99, 0)); },
              {"t.gguf", "'w' is unknown type 99"});
  expectError(
      [&] { parseBytes(one({16}, 12, 0)); },
      {"t.gguf", "'w'", "16 of a Q4_K tensor is not a multiple of 256"});
  expectError([&] { parseBytes(one({16}, 0, 32)); },
              {"'w'", "runs past the end"});
  expectError([&] { parseBytes(one({16}, 0, 8)); },
              {"'w'", "offset 8", "not a multiple", "32"});
  expectError([&] { parseBytes(one({16}, 0, ~0ull & ~31ull)); },
              {"'w'", "runs past the end"});
  expectError(
      [&] {
        parseBytes(one({1ull << 62, 1ull << 62}, 0, 0));
      },
      {"'w'", "overflow"});
  expectError([&] { parseBytes(one({~0ull}, 0, 0)); }, {"'w'", "overflow"});
  expectError(
      [&] {
        parseBytes(one({1, 1, 1, 1, 1}, 0, 0));
      },
      {"'w'", "5 dims"});
  expectError([&] { parseBytes(one({48}, 8, 0)); },
              {"'w'", "48", "Q8_0", "multiple of 32"});
  RawGGUF dup(3, 2, 0);
  dup.tensor("w", {8}, 0, 0).tensor("w", {8}, 0, 32).padTo(32);
  dup.bytes.append(64, '\0');
  expectError([&] { parseBytes(dup.bytes); }, {"duplicate tensor 'w'"});
}

TEST(GGUF, ReversesDimsToHFOrder) {
  RawGGUF r(2, 1, 0);
  r.tensor("w", {32, 3}, 8, 0).padTo(32).bytes.append(3 * 34, '\0');
  auto f = parseBytes(r.bytes);
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.find("w")->shape, (std::vector<int64_t>{3, 32}));
  EXPECT_EQ(f.find("w")->nbytes, 3u * 34);
}

} // namespace
} // namespace llmc::weights::test
