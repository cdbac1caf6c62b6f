#include "llmc/runtime/sampler.h"
#include "llmc/support/error.h"

#include <charconv>
#include <cmath>

namespace llmc::sample {
namespace {

// Shortest round-trip form, so the message shows "1.5", not "1.500000".
std::string show(float v) {
  if (std::isnan(v))
    return "nan";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

} // namespace

std::string paramName(const char *flag, ParamNames names) {
  std::string s = flag;
  if (names == ParamNames::Flags)
    return s;
  s = s.substr(2); // "--top-p" -> "top_p"
  for (char &c : s)
    if (c == '-')
      c = '_';
  return s;
}

void SamplingParams::validate(ParamNames names) const {
  auto reject = [&](const char *flag, const char *rule, float v) {
    throw Error(paramName(flag, names) + " must be " + rule + ", got " +
                show(v));
  };
  auto checkRange = [&](const char *flag, float v, float lo, float hi,
                        const char *rule) {
    if (!(v >= lo && v <= hi)) // also catches NaN
      reject(flag, rule, v);
  };
  if (!(temperature >= 0.0f) || std::isinf(temperature))
    reject("--temperature", "a finite number >= 0", temperature);
  if (topK < 0)
    throw Error(paramName("--top-k", names) +
                " must be >= 0 (0 disables it), got " + std::to_string(topK));
  if (!(topP > 0.0f && topP <= 1.0f))
    reject("--top-p", "in (0, 1]", topP);
  checkRange("--min-p", minP, 0.0f, 1.0f, "in [0, 1]");
  if (!(repetitionPenalty > 0.0f) || std::isinf(repetitionPenalty))
    reject("--repetition-penalty", "a finite number > 0", repetitionPenalty);
  checkRange("--presence-penalty", presencePenalty, -2.0f, 2.0f, "in [-2, 2]");
  checkRange("--frequency-penalty", frequencyPenalty, -2.0f, 2.0f,
             "in [-2, 2]");
}

} // namespace llmc::sample
