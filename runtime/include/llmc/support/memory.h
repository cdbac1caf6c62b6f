//===- memory.h - What this process and this machine have in memory -*- C++
//-*-===//
#pragma once

#include <cstdint>

namespace llmc {

/// Peak resident set size of this process, in bytes.
int64_t peakRssBytes();
/// Current resident set size of this process, in bytes (0 if unknown).
int64_t currentRssBytes();
/// Memory the kernel could give to new allocations without swapping
/// (MemAvailable in /proc/meminfo), in bytes; 0 if unknown.
int64_t availableMemoryBytes();

} // namespace llmc
