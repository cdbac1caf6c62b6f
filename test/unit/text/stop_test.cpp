#include "llmc/support/error.h"
#include "llmc/text/stop.h"

#include <gtest/gtest.h>
#include <random>

using llmc::text::StopMatcher;

namespace {

// Pushes `pieces` and returns everything emitted, flushing if no stop hit.
std::string run(const std::vector<std::string> &stops,
                const std::vector<std::string> &pieces,
                bool *stopped = nullptr) {
  StopMatcher m(stops);
  std::string out;
  bool hit = false;
  for (const std::string &piece : pieces) {
    auto r = m.push(piece);
    out += r.emit;
    if (r.stopped) {
      hit = true;
      break;
    }
  }
  if (!hit)
    out += m.flush();
  if (stopped)
    *stopped = hit;
  return out;
}

bool validUtf8(const std::string &s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    size_t n = c < 0x80         ? 1
               : (c >> 5) == 6  ? 2
               : (c >> 4) == 14 ? 3
               : (c >> 3) == 30 ? 4
                                : 0;
    if (n == 0 || i + n > s.size())
      return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80)
        return false;
    i += n;
  }
  return true;
}

} // namespace

TEST(StopMatcher, NoStopsPassesEverythingThrough) {
  StopMatcher m({});
  auto r = m.push("hello");
  EXPECT_EQ(r.emit, "hello");
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(m.flush(), "");
}

TEST(StopMatcher, StopInsideOnePush) {
  StopMatcher m({"wor"});
  auto r = m.push("hello world");
  EXPECT_EQ(r.emit, "hello ");
  EXPECT_TRUE(r.stopped);
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matchedStop(), "wor");
}

TEST(StopMatcher, StopSplitAcrossPushes) {
  StopMatcher m({"</s>"});
  auto r = m.push("abc<");
  EXPECT_EQ(r.emit, "abc");
  EXPECT_FALSE(r.stopped);
  r = m.push("/");
  EXPECT_EQ(r.emit, "");
  EXPECT_EQ(m.heldBytes(), 2u);
  r = m.push("s>tail");
  EXPECT_EQ(r.emit, "");
  EXPECT_TRUE(r.stopped);
  // After the stop nothing more comes out.
  r = m.push("more");
  EXPECT_EQ(r.emit, "");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(m.flush(), "");
}

TEST(StopMatcher, FalseAlarmReleasesHeldText) {
  StopMatcher m({"</s>"});
  EXPECT_EQ(m.push("a<").emit, "a");
  EXPECT_EQ(m.push("/b").emit, "</b");
  EXPECT_EQ(m.heldBytes(), 0u);
}

TEST(StopMatcher, NoStopFlushReturnsHeldText) {
  StopMatcher m({"</s>"});
  EXPECT_EQ(m.push("hi </").emit, "hi ");
  EXPECT_EQ(m.flush(), "</");
  EXPECT_FALSE(m.stopped());
  EXPECT_EQ(m.matchedStop(), "");
}

TEST(StopMatcher, MultipleStopsFirstToCompleteWins) {
  EXPECT_EQ(run({"STOP", "END"}, {"xxENDyySTOP"}), "xx");
  StopMatcher m({"STOP", "END"});
  m.push("xxENDyySTOP");
  EXPECT_EQ(m.matchedStop(), "END");
}

TEST(StopMatcher, OverlappingPrefixes) {
  StopMatcher m({"abc", "ab"});
  EXPECT_EQ(m.push("xa").emit, "x");
  auto r = m.push("bc");
  EXPECT_EQ(r.emit, "");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(m.matchedStop(), "ab"); // completes one byte before "abc"
}

TEST(StopMatcher, SameEndPrefersEarlierStart) {
  StopMatcher m({"bc", "abc"});
  auto r = m.push("xabc");
  EXPECT_EQ(r.emit, "x");
  EXPECT_EQ(m.matchedStop(), "abc");
}

TEST(StopMatcher, EarliestCompletionNotEarliestStart) {
  // "bc" completes at byte 3, before "abcd" could; streaming byte by byte
  // would stop there, so a single push must too.
  EXPECT_EQ(run({"abcd", "bc"}, {"abcd"}), "a");
  EXPECT_EQ(run({"abcd", "bc"}, {"a", "b", "c", "d"}), "a");
}

TEST(StopMatcher, HoldBackIsMinimal) {
  StopMatcher m({"abc"});
  EXPECT_EQ(m.push("xxab").emit, "xx");
  EXPECT_EQ(m.heldBytes(), 2u);
  EXPECT_EQ(m.push("ab").emit, "ab"); // "abab": only the last "ab" can match
  EXPECT_EQ(m.heldBytes(), 2u);
  EXPECT_EQ(m.push("x").emit, "abx");
  EXPECT_EQ(m.heldBytes(), 0u);
}

TEST(StopMatcher, HoldsTheLongestPartialAcrossStops) {
  StopMatcher m({"abc", "bcd"});
  EXPECT_EQ(m.push("xbc").emit, "x"); // "bc" may become "bcd"
  StopMatcher self({"aab"});
  EXPECT_EQ(self.push("aaa").emit, "a"); // "aa" may become "aab"
  EXPECT_TRUE(self.push("b").stopped);
}

TEST(StopMatcher, EmptyStopIsRejected) {
  try {
    StopMatcher m({"ok", ""});
    FAIL();
  } catch (const llmc::Error &e) {
    EXPECT_NE(std::string(e.what()).find("--stop"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("1 is empty"), std::string::npos);
  }
}

TEST(StopMatcher, StopStartingMidCharacterIsRejected) {
  EXPECT_THROW(StopMatcher({"\xA9x"}), llmc::Error);
}

TEST(StopMatcher, Utf8MultibyteStops) {
  // U+3002 IDEOGRAPHIC FULL STOP is three bytes.
  EXPECT_EQ(run({"\u3002"}, {"\u4f60\u597d", "\u3002", "\u518d"}),
            "\u4f60\u597d");
  // "é" is held (it may begin "éx") as a whole character, then released.
  StopMatcher m({"\u00e9x"});
  EXPECT_EQ(m.push("caf").emit, "caf");
  EXPECT_EQ(m.push("\u00e9").emit, "");
  EXPECT_EQ(m.heldBytes(), 2u);
  EXPECT_EQ(m.flush(), "\u00e9");
  // Same lead byte, different character: nothing to hold.
  StopMatcher n({"\u00e9"});
  EXPECT_EQ(n.push("\u00e3").emit, "\u00e3");
}

// Property: for random multibyte text, stops and splits, the output equals
// the one-shot result, and every emitted piece is valid UTF-8 when whole
// characters are pushed.
TEST(StopMatcher, ChunkingDoesNotChangeTheResult) {
  const std::vector<std::string> alphabet = {"a", "b", "\u00e9", "\u4f60",
                                             "\U0001F600"};
  std::mt19937 gen(1234); // only picks test inputs; any sequence will do
  auto pick = [&](size_t n) { return static_cast<size_t>(gen() % n); };
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<std::string> stops;
    for (size_t s = 0, ns = 1 + pick(3); s < ns; ++s) {
      std::string stop;
      for (size_t k = 0, len = 1 + pick(3); k < len; ++k)
        stop += alphabet[pick(alphabet.size())];
      stops.push_back(stop);
    }
    std::vector<std::string> chars;
    std::string text;
    for (size_t k = 0, len = pick(20); k < len; ++k) {
      chars.push_back(alphabet[pick(alphabet.size())]);
      text += chars.back();
    }
    bool wholeStopped = false, splitStopped = false;
    std::string whole = run(stops, {text}, &wholeStopped);

    std::vector<std::string> pieces;
    for (size_t i = 0; i < chars.size();) {
      size_t n = 1 + pick(3);
      std::string piece;
      for (size_t k = 0; k < n && i < chars.size(); ++k)
        piece += chars[i++];
      pieces.push_back(piece);
    }
    StopMatcher m(stops);
    std::string out;
    for (const std::string &piece : pieces) {
      auto r = m.push(piece);
      ASSERT_TRUE(validUtf8(r.emit));
      out += r.emit;
      splitStopped |= r.stopped;
      if (r.stopped)
        break;
    }
    if (!splitStopped)
      out += m.flush();
    ASSERT_EQ(out, whole) << "text " << text;
    ASSERT_EQ(splitStopped, wholeStopped);
    // The output never contains a stop string.
    for (const std::string &s : stops)
      ASSERT_EQ(out.find(s), std::string::npos);
  }
}
