//===- no_mpi.cpp - launched() in a build without MPI ---------------------===//
#include "llmc/runtime/communicator.h"

#include "launched_size.h"

#include "llmc/support/error.h"

#include <cstdlib>

namespace llmc {

Communicator *launched() {
  if (const int ranks = launchedSize(); ranks > 1)
    throw Error("started as one of " + std::to_string(ranks) +
                " ranks, but this llmc was built without MPI (install "
                "libopenmpi-dev and rebuild)");
  return nullptr;
}

Communicator *startedCommunicator() { return nullptr; }

} // namespace llmc
