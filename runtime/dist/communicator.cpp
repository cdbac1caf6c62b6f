//===- communicator.cpp - The C view backends call ------------------------===//
#include "llmc/runtime/communicator.h"

#include "launched_size.h"

#include "llmc/support/error.h"

#include <cstdio>
#include <cstdlib>

namespace llmc {

int launchedSize() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"})
    if (const char *v = std::getenv(name))
      return std::atoi(v);
  return 1;
}

const llmc_communicator &Communicator::abi() {
  abi_.rank = rank();
  abi_.size = size();
  abi_.context = this;
  abi_.all_reduce_sum_f32 = [](void *self, float *data,
                               size_t n) -> llmc_status {
    try {
      static_cast<Communicator *>(self)->allReduceSum(data, n);
      return LLMC_OK;
    } catch (const std::exception &e) {
      std::fprintf(stderr, "llmc: all_reduce: %s\n", e.what());
      return LLMC_ERROR;
    }
  };
  return abi_;
}

} // namespace llmc
