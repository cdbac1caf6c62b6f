#include "llmc/text/stop.h"
#include "llmc/support/error.h"

namespace llmc::text {
namespace {

bool isContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

} // namespace

StopMatcher::StopMatcher(std::vector<std::string> stops)
    : stops_(std::move(stops)) {
  for (size_t i = 0; i < stops_.size(); ++i) {
    if (stops_[i].empty())
      throw Error("--stop: stop string " + std::to_string(i) +
                  " is empty; an empty string would match everywhere");
    if (isContinuationByte(stops_[i][0]))
      throw Error("--stop: stop string " + std::to_string(i) +
                  " starts in the middle of a UTF-8 character");
  }
}

const std::string &StopMatcher::matchedStop() const {
  static const std::string none;
  return stopped_ ? stops_[matched_] : none;
}

StopMatcher::Result StopMatcher::push(std::string_view newText) {
  if (stopped_)
    return {"", true};
  held_.append(newText);

  // Earliest end wins, then earliest start: see the header. A match cannot
  // begin in text already emitted, because the longest partial match was
  // held back, so searching the held text is enough.
  size_t bestEnd = std::string::npos, bestPos = 0;
  for (size_t i = 0; i < stops_.size(); ++i) {
    size_t pos = held_.find(stops_[i]);
    if (pos == std::string::npos)
      continue;
    size_t end = pos + stops_[i].size();
    if (end < bestEnd || (end == bestEnd && pos < bestPos)) {
      bestEnd = end;
      bestPos = pos;
      matched_ = i;
    }
  }
  if (bestEnd != std::string::npos) {
    stopped_ = true;
    std::string emit = held_.substr(0, bestPos);
    held_.clear();
    return {std::move(emit), true};
  }

  // Hold back the longest suffix that is a proper prefix of some stop.
  size_t hold = 0;
  for (const std::string &s : stops_) {
    for (size_t len = std::min(held_.size(), s.size() - 1); len > hold; --len) {
      if (held_.compare(held_.size() - len, len, s, 0, len) == 0) {
        hold = len;
        break;
      }
    }
  }
  std::string emit = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
  return {std::move(emit), false};
}

std::string StopMatcher::flush() {
  std::string out;
  out.swap(held_);
  return out;
}

} // namespace llmc::text
