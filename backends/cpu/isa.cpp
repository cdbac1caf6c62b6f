//===- isa.cpp - CPU feature detection and the LLMC_CPU_ISA cap -----------===//
#include "isa.h"

#include "common/graph.h"

#include <cstdlib>
#include <cstring>
#include <fstream>

namespace llmc::cpu {
namespace {

/// The flags line of /proc/cpuinfo: it names what GCC 12's
/// __builtin_cpu_supports cannot ask about (AVX-VNNI, AMX), and what the
/// kernel has enabled (AMX needs the OS to save its tile state).
const std::string &cpuFlags() {
  static const std::string flags = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("flags", 0) == 0)
        return line + " ";
    return std::string();
  }();
  return flags;
}

bool has(const char *flag) {
  return cpuFlags().find(std::string(" ") + flag + " ") != std::string::npos;
}

const Isa kAll[] = {Isa::Avx2, Isa::AvxVnni, Isa::Avx512, Isa::Avx512Bf16,
                    Isa::Amx};

} // namespace

const char *isaName(Isa isa) {
  switch (isa) {
  case Isa::Avx2:
    return "avx2";
  case Isa::AvxVnni:
    return "avxvnni";
  case Isa::Avx512:
    return "avx512";
  case Isa::Avx512Bf16:
    return "avx512bf16";
  case Isa::Amx:
    return "amx";
  }
  return "?";
}

Isa detectIsa() {
  __builtin_cpu_init();
  // Levels are cumulative: a CPU with AVX-512 but no VNNI (Skylake-SP) gets
  // the AVX2 kernels, which are as fast there for these memory-bound dots.
  bool avx512 = __builtin_cpu_supports("avx512f") &&
                __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl") &&
                __builtin_cpu_supports("avx512vnni");
  if (avx512 && __builtin_cpu_supports("avx512bf16"))
    return has("amx_bf16") && has("amx_int8") && has("amx_tile")
               ? Isa::Amx
               : Isa::Avx512Bf16;
  if (avx512)
    return Isa::Avx512;
  return has("avx_vnni") ? Isa::AvxVnni : Isa::Avx2;
}

Isa selectIsa() {
  Isa best = detectIsa();
  const char *cap = std::getenv("LLMC_CPU_ISA");
  if (!cap || !*cap)
    return best;
  for (Isa isa : kAll)
    if (std::strcmp(cap, isaName(isa)) == 0) {
      // AVX-VNNI is a sideways step on AVX-512 parts that have it, not a
      // level below: capping at it there gives plain AVX2 unless the CPU
      // has the 256-bit form.
      if (isa == Isa::AvxVnni && best > Isa::AvxVnni)
        return has("avx_vnni") ? Isa::AvxVnni : Isa::Avx2;
      return isa < best ? isa : best;
    }
  throw common::InvalidArgument(
      std::string("LLMC_CPU_ISA='") + cap +
      "' is not a kernel level; use avx2, avxvnni, avx512, avx512bf16 or amx");
}

std::string describeCpu() {
  std::string model = "unknown CPU";
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos)
        model = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  std::string isa = has("avx512f") ? "AVX-512" : "AVX2";
  if (has("avx512_vnni"))
    isa += ", AVX512-VNNI";
  else if (has("avx_vnni"))
    isa += ", AVX-VNNI";
  if (has("avx512_bf16"))
    isa += ", AVX512-BF16";
  if (has("amx_tile"))
    isa += ", AMX";
  return model + ", " + isa;
}

} // namespace llmc::cpu
