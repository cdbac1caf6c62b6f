//===- profile.cpp - Per-op time of the cpu backend -----------------------===//
#include "profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace llmc::cpu {

bool OpProfile::enabled() {
  static const bool on = [] {
    const char *v = std::getenv("LLMC_CPU_PROFILE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

std::string OpProfile::report() const {
  std::map<std::string, double> graphTotal;
  for (const auto &[key, e] : entries_)
    graphTotal[key.first] += e.seconds;
  std::vector<std::pair<std::pair<std::string, std::string>, Entry>> rows(
      entries_.begin(), entries_.end());
  std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
    return a.first.first != b.first.first ? a.first.first < b.first.first
                                          : a.second.seconds > b.second.seconds;
  });
  std::string out = "cpu op profile (LLMC_CPU_PROFILE): graph, op, calls, "
                    "total ms, ms per call, share of the graph\n";
  char line[256];
  for (const auto &[key, e] : rows) {
    std::snprintf(
        line, sizeof line, "  %-8s %-18s %8lld %10.1f %10.3f %5.1f%%\n",
        key.first.c_str(), key.second.c_str(), static_cast<long long>(e.calls),
        e.seconds * 1e3, e.seconds * 1e3 / double(e.calls),
        100.0 * e.seconds / graphTotal[key.first]);
    out += line;
  }
  return out;
}

} // namespace llmc::cpu
