//===- nccl.cpp - ALL_REDUCE over NCCL ------------------------------------===//
//
// The host's communicator sums floats on host memory; the device's sums go
// through NCCL on the step's stream (and inside its captured CUDA graphs).
// NCCL needs every rank to hold rank 0's unique id: its 128 bytes go over
// the host's all-reduce as 128 small integers (rank 0's, every other rank
// adding zeros), which floats sum exactly.
//
//===----------------------------------------------------------------------===//
#include "cuda.h"

#if LLMC_HAVE_NCCL
#include <nccl.h>
#endif

namespace llmc::cuda {

#if LLMC_HAVE_NCCL

struct NcclComm {
  ncclComm_t comm = nullptr;
  ~NcclComm() {
    if (comm)
      ncclCommDestroy(comm);
  }
};

namespace {
void checkNccl(ncclResult_t r, const char *what) {
  if (r != ncclSuccess)
    throw Error(std::string(what) + ": " + ncclGetErrorString(r));
}
} // namespace

std::shared_ptr<NcclComm> ncclOver(Backend &b, const llmc_communicator &comm) {
  check(cudaSetDevice(b.device), "cudaSetDevice");
  ncclUniqueId id{};
  if (comm.rank == 0)
    checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  float bytes[sizeof id.internal];
  for (size_t i = 0; i < sizeof id.internal; ++i)
    bytes[i] = comm.rank == 0 ? float(uint8_t(id.internal[i])) : 0.0f;
  if (comm.all_reduce_sum_f32(comm.context, bytes, sizeof id.internal) !=
      LLMC_OK)
    throw Error("sharing NCCL's unique id over the host's ranks failed");
  for (size_t i = 0; i < sizeof id.internal; ++i)
    id.internal[i] = char(uint8_t(bytes[i]));
  auto out = std::make_shared<NcclComm>();
  checkNccl(ncclCommInitRank(&out->comm, comm.size, id, comm.rank),
            "ncclCommInitRank");
  return out;
}

void ncclAllReduce(NcclComm &comm, const float *in, float *out, size_t n,
                   cudaStream_t stream) {
  checkNccl(::ncclAllReduce(in, out, n, ncclFloat, ncclSum, comm.comm, stream),
            "ncclAllReduce");
}

#else

struct NcclComm {};

std::shared_ptr<NcclComm> ncclOver(Backend &, const llmc_communicator &) {
  throw common::Unimplemented(
      "this cuda backend was built without NCCL: no tensor parallelism");
}

void ncclAllReduce(NcclComm &, const float *, float *, size_t, cudaStream_t) {
  throw common::Unimplemented("built without NCCL");
}

#endif

} // namespace llmc::cuda
