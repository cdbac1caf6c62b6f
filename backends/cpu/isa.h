//===- isa.h - Which kernel set runs on this CPU ----------------*- C++ -*-===//
//
// One build runs on every x86-64 CPU with AVX2: the kernels that gain from
// wider or newer instructions are compiled once per level (each in its own
// file, built with that level's flags and nothing else from the standard
// library, so no inline function compiled for AVX-512 can be picked by the
// linker for AVX2 code), and the backend picks a level when it is created.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace llmc::cpu {

/// Ordered: each level has everything the ones before it have.
enum class Isa {
  Avx2,       // AVX2 + FMA + F16C; int8 dots with vpmaddubsw
  AvxVnni,    // + AVX-VNNI: vpdpbusd on 256 bits (Alder Lake and later)
  Avx512,     // + AVX-512 F/BW/VL/VNNI: vpdpbusd on 512 bits
  Avx512Bf16, // + AVX512-BF16: bf16 linears on vdpbf16ps
  Amx,        // + AMX-BF16/INT8 (kernels as Avx512Bf16)
};

const char *isaName(Isa isa);

/// The best level this CPU has.
Isa detectIsa();

/// detectIsa() capped by the LLMC_CPU_ISA environment variable
/// (avx2|avxvnni|avx512|avx512bf16|amx). Throws common::InvalidArgument for
/// an unknown value; a cap above the CPU's level is the CPU's level.
Isa selectIsa();

/// The CPU's model name and the ISA extensions llmc cares about, for
/// `llmc backends`.
std::string describeCpu();

} // namespace llmc::cpu
