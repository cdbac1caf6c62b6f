//===- mpi_communicator.cpp - Ranks over MPI ------------------------------===//
//
// Non-blocking collectives polled with a backoff: a follower waiting for
// rank 0's next step sleeps instead of spinning a core beside the ranks
// that compute (OpenMPI's blocking calls busy-poll), and an all-reduce that
// a lost rank never completes ends the job after LLMC_TP_TIMEOUT_S seconds
// (default 120) with MPI_Abort on every rank, rather than hanging.
//
//===----------------------------------------------------------------------===//
#include "llmc/runtime/communicator.h"

#include "launched_size.h"

#include "llmc/support/error.h"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

namespace llmc {
namespace {

class MpiCommunicator : public Communicator {
public:
  MpiCommunicator() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm host;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_,
                        MPI_INFO_NULL, &host);
    MPI_Comm_rank(host, &localRank_);
    MPI_Comm_free(&host);
    if (const char *t = std::getenv("LLMC_TP_TIMEOUT_S"))
      timeout_ = std::chrono::seconds(std::max(1, std::atoi(t)));
  }
  ~MpiCommunicator() override { MPI_Finalize(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int localRank() const override { return localRank_; }

  void allReduceSum(float *data, size_t n) override {
    if (n > size_t(INT32_MAX))
      throw Error("all_reduce of " + std::to_string(n) + " floats");
    MPI_Request r;
    MPI_Iallreduce(MPI_IN_PLACE, data, int(n), MPI_FLOAT, MPI_SUM,
                   MPI_COMM_WORLD, &r);
    wait(r, true, "all_reduce");
  }

  void broadcast(std::vector<uint8_t> &bytes) override {
    uint64_t size = bytes.size();
    MPI_Request r;
    MPI_Ibcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &r);
    wait(r, false, "broadcast");
    bytes.resize(size_t(size));
    MPI_Ibcast(bytes.data(), int(size), MPI_BYTE, 0, MPI_COMM_WORLD, &r);
    wait(r, true, "broadcast");
  }

  [[noreturn]] void abort(const char *message) override {
    std::fprintf(stderr, "llmc: rank %d of %d: %s\n", rank_, size_, message);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
  }

private:
  /// Polls `r`: spins a little (the ranks of a step arrive together), then
  /// sleeps between polls. `bounded`: give up after the timeout.
  void wait(MPI_Request &r, bool bounded, const char *what) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    for (int polls = 0;; ++polls) {
      int done = 0;
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      if (done)
        return;
      if (polls < 2000)
        continue;
      std::this_thread::sleep_for(std::chrono::microseconds(
          polls < 20000 ? 20 : 500)); // a long wait: an idle server
      if (bounded && Clock::now() - start > timeout_)
        abort((std::string(what) + ": a rank did not answer within " +
               std::to_string(timeout_.count()) + " s (lost?); ending the job")
                  .c_str());
    }
  }

  int rank_ = 0, size_ = 1, localRank_ = 0;
  std::chrono::seconds timeout_{120};
};

} // namespace

std::unique_ptr<Communicator> &theCommunicator() {
  static std::unique_ptr<Communicator> comm;
  return comm;
}

Communicator *launched() {
  static const bool started = [] {
    if (launchedSize() > 1)
      theCommunicator() = std::make_unique<MpiCommunicator>();
    return true;
  }();
  (void)started;
  return theCommunicator().get();
}

Communicator *startedCommunicator() { return theCommunicator().get(); }

} // namespace llmc
