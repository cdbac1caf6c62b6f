#include "compile_report.h"

#include "llmc/support/memory.h"

#include <cstdio>
#include <filesystem>
#include <unistd.h>

namespace llmc::cli {
namespace {

std::string humanBytes(double b) {
  char buf[32];
  if (b >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f GB", b / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.1f MB", b / 1e6);
  return buf;
}

} // namespace

CompileReport::CompileReport(bool quiet, bool verbose)
    : quiet_(quiet), verbose_(verbose), tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {}

double CompileReport::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                       start_)
      .count();
}

void CompileReport::phase(const std::string &what) {
  phaseStart_ = std::chrono::steady_clock::now();
  if (!quiet_)
    std::fprintf(stderr, "[%6.2f s] %s\n", seconds(), what.c_str());
}

void CompileReport::progress(const WriteProgress &p) {
  if (quiet_ || !tty_)
    return;
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           phaseStart_)
                 .count();
  double rate = s > 0 ? double(p.bytesDone) / s : 0;
  double eta = rate > 0 ? double(p.bytesTotal - p.bytesDone) / rate : 0;
  const int width = 24;
  int filled = p.bytesTotal
                   ? int(width * double(p.bytesDone) / double(p.bytesTotal))
                   : width;
  std::fprintf(
      stderr, "\r[%.*s%*s] %zu/%zu weights, %s / %s, %.0f MB/s, ETA %.0f s ",
      filled, "========================", width - filled, "", p.weightsDone,
      p.weightsTotal, humanBytes(double(p.bytesDone)).c_str(),
      humanBytes(double(p.bytesTotal)).c_str(), rate / 1e6, eta);
  if (p.weightsDone == p.weightsTotal)
    std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

void CompileReport::converted(const mlir::llmc::Conversion &c) {
  float rel = c.maxAbs > 0 ? c.maxAbsError / c.maxAbs : 0;
  if (verbose_ && !quiet_)
    std::fprintf(stderr,
                 "  %s: %s -> %s, max abs error %.3g (%.2f%% of max |w|)\n",
                 c.weight.c_str(), c.ggmlType.c_str(), c.format.c_str(),
                 double(c.maxAbsError), 100.0 * double(rel));
  Kind &k = kinds_[c.ggmlType];
  k.format = c.format;
  ++k.count;
  if (k.count == 1 || rel > k.worstRel)
    k.worst = c, k.worstRel = rel;
}

void CompileReport::finished(const std::string &path, size_t weights,
                             size_t graphs) {
  if (quiet_)
    return;
  for (const auto &[type, k] : kinds_) {
    if (k.worst.maxAbsError == 0) {
      std::fprintf(stderr, "%s -> %s (groups of 32): %zu weights, exact\n",
                   type.c_str(), k.format.c_str(), k.count);
      continue;
    }
    std::fprintf(stderr,
                 "%s -> %s (groups of 32): %zu weights, converted with "
                 "error; worst %s: max abs error %.3g (%.2f%% of its max "
                 "|w|)%s\n",
                 type.c_str(), k.format.c_str(), k.count,
                 k.worst.weight.c_str(), double(k.worst.maxAbsError),
                 100.0 * double(k.worstRel),
                 verbose_ ? "" : " (--verbose: every weight)");
  }
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  std::fprintf(stderr,
               "wrote %s (%zu weights, %zu graphs, %s) in %.2f s, peak "
               "memory %.0f MiB\n",
               path.c_str(), weights, graphs,
               humanBytes(ec ? 0.0 : double(size)).c_str(), seconds(),
               double(peakRssBytes()) / (1 << 20));
}

} // namespace llmc::cli
