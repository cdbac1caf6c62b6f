//===- launched_size.h - How many ranks the launcher started ----*- C++ -*-===//
#pragma once

namespace llmc {

/// The size of the job mpirun (or another PMI launcher) started this
/// process in, from its environment; 1 when started alone.
int launchedSize();

} // namespace llmc
