//===- no_mpi.cpp - launched() in a build without MPI ---------------------===//
#include "llmc/runtime/communicator.h"

#include "llmc/support/error.h"

#include <cstdlib>

namespace llmc {

Communicator *launched() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char *v = std::getenv(name); v && std::atoi(v) > 1)
      throw Error("started as one of " + std::string(v) +
                  " ranks, but this llmc was built without MPI (install "
                  "libopenmpi-dev and rebuild)");
  return nullptr;
}

Communicator *startedCommunicator() { return nullptr; }

} // namespace llmc
