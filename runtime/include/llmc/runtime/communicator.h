//===- communicator.h - The ranks of a tensor-parallel run -----*- C++ -*-===//
//
// Every rank runs the same steps of a plan compiled with --tp N (SPMD): rank
// 0 schedules, tokenizes and serves, and broadcasts each step; the others
// follow (Engine::follow). Backends meet in ALL_REDUCE through abi().
//
// launched() is the one communicator of a process started by mpirun (MPI,
// Debian's OpenMPI); null when the process runs alone. Collectives are
// called by one thread at a time: the engine's (a backend calls
// all-reduce from inside execute, on that thread).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/backend.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llmc {

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// This rank among the ranks on its host (which GPU it takes).
  virtual int localRank() const { return rank(); }
  /// data[n] becomes the sum over every rank's. A rank that does not come
  /// within the collective timeout ends the whole job with an error
  /// (never a hang).
  virtual void allReduceSum(float *data, size_t n) = 0;
  /// Rank 0's `bytes` to every rank (resized there). Ranks > 0 wait as
  /// long as rank 0 takes (an idle server), without spinning a core.
  virtual void broadcast(std::vector<uint8_t> &bytes) = 0;
  /// Ends every rank's process with `message` (a rank that cannot go on).
  [[noreturn]] virtual void abort(const char *message) = 0;

  /// The view backends call (set_communicator); valid while this lives.
  const llmc_communicator &abi();

private:
  llmc_communicator abi_{};
};

/// The communicator of a process started by mpirun (the first call starts
/// MPI); null when not launched so, or launched as one rank. Throws
/// llmc::Error when mpirun started several ranks but llmc was built without
/// MPI.
Communicator *launched();
/// launched()'s communicator if a call already made one, else null (never
/// starts MPI): for ending every rank on an error.
Communicator *startedCommunicator();

} // namespace llmc
