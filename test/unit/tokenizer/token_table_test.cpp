// The flat vocabulary and merge tables plans map: built, serialized and
// viewed back; every corruption of a serialized blob is refused with
// llmc::Error or yields tables that stay in bounds (ASan checks the reads).
// Below the public API: runtime/tokenizer is not an include directory, as
// its regex.h would shadow the system one.
#include "../../../runtime/tokenizer/token_table.h"

#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"
#include "llmc/tokenizer/tokenizer.h"

#include <gtest/gtest.h>

#include <cstring>

namespace llmc::tok::detail {
namespace {

struct Built {
  TokenTable tokens;
  MergeTable merges;
};

Built smallTables() {
  TokenTableBuilder b;
  const char *texts[] = {"a", "b", "ab", "c", "abc", "<s>", "", "a"};
  for (int32_t id = 0; id < 8; ++id)
    b.set(id, texts[id], id == 5, id != 7); // 7 repeats "a", not findable
  b.set(11, "sparse", false, true);         // ids 8..10 have no entry
  return {b.build(), MergeTable::build({{0, 1, 2}, {2, 3, 4}, {0, 1, 7}})};
}

// Looks at everything the tables hold; memory errors are ASan's to find.
void exercise(const TokenTable &t, const MergeTable &m) {
  for (int32_t id = -1; id <= t.size(); ++id) {
    std::string_view text = t.text(id);
    (void)t.special(id);
    (void)t.find(text);
    for (int32_t other = -1; other <= t.size(); ++other)
      (void)m.find(id, other);
  }
  (void)t.find("abc");
  (void)t.find("definitely not there");
}

TEST(TokenTable, ServesTextsIdsAndMerges) {
  Built b = smallTables();
  EXPECT_EQ(b.tokens.size(), 12);
  EXPECT_EQ(b.tokens.text(4), "abc");
  EXPECT_EQ(b.tokens.find("a"), 0); // the first entry with the text
  EXPECT_EQ(b.tokens.text(7), "a");
  EXPECT_EQ(b.tokens.find(""), 6);
  EXPECT_EQ(b.tokens.find("sparse"), 11);
  EXPECT_FALSE(b.tokens.present(9));
  EXPECT_EQ(b.tokens.text(9), "");
  EXPECT_TRUE(b.tokens.special(5));
  EXPECT_FALSE(b.tokens.special(4));
  EXPECT_FALSE(b.tokens.find("d"));
  auto m = b.merges.find(0, 1);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->rank, 0); // the repeated pair keeps its first rank
  EXPECT_EQ(m->merged, 2);
  EXPECT_EQ(b.merges.find(2, 3)->merged, 4);
  EXPECT_FALSE(b.merges.find(1, 0));
}

TEST(TokenTable, SerializedTablesViewBackInPlaceAndCopied) {
  Built b = smallTables();
  auto blob =
      std::make_shared<std::string>(serializeTables(b.tokens, b.merges));
  for (bool inPlace : {true, false}) {
    SCOPED_TRACE(inPlace ? "in place" : "copied");
    std::string shifted = " " + *blob;
    std::string_view bytes =
        inPlace ? std::string_view(*blob) : std::string_view(shifted).substr(1);
    TokenTable t;
    MergeTable m;
    viewTables(bytes, inPlace ? blob : nullptr, "blob", t, m);
    if (!inPlace)
      shifted.assign(shifted.size(), '\0');
    for (int32_t id = 0; id < b.tokens.size(); ++id) {
      EXPECT_EQ(t.text(id), b.tokens.text(id));
      EXPECT_EQ(t.special(id), b.tokens.special(id));
      EXPECT_EQ(t.find(b.tokens.text(id)), b.tokens.find(b.tokens.text(id)));
    }
    EXPECT_EQ(m.size(), b.merges.size());
    EXPECT_EQ(m.find(2, 3)->merged, 4);
    EXPECT_FALSE(m.find(3, 2));
  }
}

TEST(TokenTable, EveryCorruptedWordIsRefusedOrStaysInBounds) {
  Built b = smallTables();
  const std::string blob = serializeTables(b.tokens, b.merges);
  ASSERT_EQ(blob.size() % 4, 0u);
  int refused = 0, tries = 0;
  for (size_t at = 0; at < blob.size(); at += 4) {
    uint32_t original;
    std::memcpy(&original, blob.data() + at, 4);
    for (uint32_t value : {0u, 1u, 3u, 0x7FFFFFFFu, 0xFFFFFFFFu, original + 1,
                           original - 1, original ^ 0x80000000u}) {
      if (value == original)
        continue;
      std::string bad = blob;
      std::memcpy(bad.data() + at, &value, 4);
      ++tries;
      try {
        TokenTable t;
        MergeTable m;
        viewTables(bad, nullptr, "bad.blob", t, m);
        exercise(t, m);
      } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find("bad.blob"), std::string::npos);
        ++refused;
      }
    }
  }
  for (size_t n = 0; n < blob.size(); ++n) {
    ++tries;
    try {
      TokenTable t;
      MergeTable m;
      viewTables(std::string_view(blob).substr(0, n), nullptr, "cut.blob", t,
                 m);
      exercise(t, m);
    } catch (const Error &) {
      ++refused;
    }
  }
  // Most corruptions break a size, offset or slot check.
  EXPECT_GT(refused, tries / 2);
}

TEST(CompiledTokenizer, CorruptionIsRefusedOrStaysInBounds) {
  auto files = findTokenizerFiles(std::string(LLMC_DATA_DIR) +
                                  "/models/tokenizers/gpt2-2k");
  const std::string compiled = compileTokenizerJson(files.fileBytes);
  // A few thousand loads: every 97th word, and the header words.
  for (size_t at = 0; at < compiled.size(); at += at < 64 ? 4 : 97 * 4) {
    for (uint32_t value : {0u, 0xFFFFFFFFu, 0x00010000u}) {
      std::string bad = compiled;
      std::memcpy(bad.data() + at, &value,
                  std::min<size_t>(4, bad.size() - at));
      try {
        auto t = loadTokenizerFromBytes(TokenizerKind::HFTables, bad,
                                        files.configJson, "bad");
        t->decode(t->encode("Hello, world! 123 caf\xC3\xA9 \xF0\x9F\x98\x80"));
        t->decode({-1, 0, 1, 2, 1 << 30}, true);
      } catch (const Error &) {
      }
    }
  }
  EXPECT_THROW(loadTokenizerFromBytes(TokenizerKind::HFTables,
                                      compiled.substr(0, 20), "{}", "short"),
               Error);
  EXPECT_THROW(loadTokenizerFromBytes(TokenizerKind::HFTables, files.fileBytes,
                                      "{}", "not compiled"),
               Error);
}

} // namespace
} // namespace llmc::tok::detail
