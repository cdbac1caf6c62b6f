//===- stop.h - Stop strings matched across streamed text -------*- C++ -*-===//
//
// Detokenized text arrives in pieces; a stop string may straddle them. The
// matcher passes text through, holding back only what could still turn out
// to be the start of a stop string, and cuts the output at the first stop
// string to complete. The stop string and everything after it is never
// emitted.
//
// Which stop wins: the one that completes first in the byte stream (ties:
// the one that starts earliest). That makes the output independent of how
// the text was split into pushes: pushing "abcd" at once or byte by byte
// gives the same result.
//
// UTF-8: matching is on bytes. Every cut the matcher makes is at the first
// byte of a stop string, and stop strings may not start with a continuation
// byte, so when the caller pushes whole characters (as llmc's streaming
// detokenizer does) every emitted piece ends on a character boundary. A
// character the caller splits across pushes is passed through split.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace llmc::text {

class StopMatcher {
public:
  /// Throws llmc::Error (naming --stop) on an empty stop string or one that
  /// starts with a UTF-8 continuation byte. No stops: everything passes.
  explicit StopMatcher(std::vector<std::string> stops);

  struct Result {
    std::string emit; // safe to show now
    bool stopped;     // a stop string completed; generation should end
  };

  /// Feeds the next piece of text. After a stop, returns {"", true} and
  /// ignores further text.
  Result push(std::string_view newText);

  /// End of generation without a stop: returns the held-back text (it can
  /// no longer become a stop string). Empty after a stop.
  std::string flush();

  bool stopped() const { return stopped_; }
  /// The stop string that ended the text; empty while not stopped.
  const std::string &matchedStop() const;
  /// Bytes currently held back.
  size_t heldBytes() const { return held_.size(); }

private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
  size_t matched_ = 0;
};

} // namespace llmc::text
