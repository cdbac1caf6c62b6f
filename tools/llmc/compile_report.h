//===- compile_report.h - What llmc compile says while it works -*- C++ -*-===//
//
// On stderr: on a terminal, a one-line progress bar while weights are
// written; otherwise one line per phase. Then the conversions of GGUF
// blocks and a summary (time, plan size, peak memory). `quiet` keeps only
// warnings and errors. Used by the compiling thread only.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/Passes/EmitPlan.h"

#include <chrono>
#include <map>
#include <string>

namespace llmc::cli {

class CompileReport {
public:
  CompileReport(bool quiet, bool verbose);

  /// A phase starts ("importing model.gguf", ...).
  void phase(const std::string &what);
  /// After each weight written (in the phase that writes them).
  void progress(const WriteProgress &p);
  /// A weight converted from a GGUF block format.
  void converted(const mlir::llmc::Conversion &c);
  /// The plan is written.
  void finished(const std::string &path, size_t weights, size_t graphs);

private:
  struct Kind {
    std::string format;
    size_t count = 0;
    mlir::llmc::Conversion worst;
    float worstRel = 0;
  };
  double seconds() const;

  bool quiet_, verbose_, tty_;
  std::chrono::steady_clock::time_point start_, phaseStart_;
  std::map<std::string, Kind> kinds_;
};

} // namespace llmc::cli
