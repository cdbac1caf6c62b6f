//===- profile.h - Per-op time of the cpu backend (LLMC_CPU_PROFILE) -----===//
//
// With LLMC_CPU_PROFILE=1 (what `llmc bench --profile` sets) every op's
// wall time is added up per graph and op kind, and the table goes to stderr
// when the backend is destroyed. Off, it costs one branch per op.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace llmc::cpu {

class OpProfile {
public:
  static bool enabled();
  /// Called from the thread that runs the step (ops do not overlap).
  void add(const std::string &graph, const std::string &op, double seconds) {
    Entry &e = entries_[{graph, op}];
    e.seconds += seconds;
    ++e.calls;
  }
  /// The table, slowest first, with each row's share of its graph's time.
  std::string report() const;

private:
  struct Entry {
    double seconds = 0;
    int64_t calls = 0;
  };
  std::map<std::pair<std::string, std::string>, Entry> entries_;
};

} // namespace llmc::cpu
