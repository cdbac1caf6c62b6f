//===- engine_loop.h - The server's engine thread ---------------*- C++ -*-===//
//
// One thread owns the engine and the scheduler and runs the steps.
// Connection threads never touch either: they submit requests through a
// queue and read each request's output from its own RequestChannel, which
// the engine thread fills (events as tokens arrive, then the result).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/scheduler.h"
#include "llmc/runtime/serve_metrics.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace llmc {

/// One request's output, from the engine thread to its connection thread.
/// Thread-safe.
class RequestChannel {
public:
  // The engine thread:
  void accepted();
  void refused(std::string message);
  void push(RequestEvent event);
  void finish(RequestResult result);

  // The connection thread:
  /// Waits until the engine thread queued the request; false with the
  /// scheduler's message if it refused it.
  bool waitAccepted(std::string &error);
  /// Waits up to `timeout` for output; moves what arrived into `events`
  /// and, once the request ended, its result into `result`.
  void next(std::vector<RequestEvent> &events,
            std::optional<RequestResult> &result,
            std::chrono::milliseconds timeout);

private:
  std::mutex mutex_;
  std::condition_variable cv_;
  enum class State { Pending, Accepted, Refused } state_ = State::Pending;
  std::string error_;
  std::deque<RequestEvent> events_;
  std::optional<RequestResult> result_;
};

class EngineLoop {
public:
  /// Starts the engine thread. Everything passed in outlives the loop.
  EngineLoop(StepRunner &engine, const tok::Tokenizer *tokenizer,
             SchedulerOptions options, size_t maxQueue, ServeMetrics &metrics);
  ~EngineLoop();

  /// Queues a request (its onEvent/onFinish are replaced) and returns its
  /// channel; `label` names it in the log line. Throws llmc::Error
  /// ("busy") when the queue holds maxQueue requests or the loop is
  /// draining.
  std::shared_ptr<RequestChannel> submit(ScheduledRequest request,
                                         std::string label);
  /// Aborts a request (its blocks are freed by the engine thread).
  void abort(uint64_t id);
  /// Refuse new requests from now on.
  void stopAccepting() { accepting_ = false; }
  /// Requests submitted and not finished.
  size_t live() const { return live_; }
  /// Aborts every live request.
  void abortAll();
  /// Ends the thread (after abortAll or when idle).
  void stop();
  uint64_t nextId() { return ++ids_; }
  /// Whether to print one line per finished request on stderr.
  void setLogRequests(bool on) { logRequests_ = on; }

private:
  void run();
  struct Pending {
    ScheduledRequest request;
    std::shared_ptr<RequestChannel> channel;
  };

  StepRunner &engine_;
  Scheduler scheduler_;
  ServeMetrics &metrics_;
  size_t maxQueue_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Pending> incoming_;
  std::vector<uint64_t> aborts_;
  bool abortAll_ = false, stop_ = false;
  std::atomic<bool> accepting_{true};
  std::atomic<size_t> live_{0}, waiting_{0};
  std::atomic<uint64_t> ids_{0};
  std::atomic<bool> logRequests_{true};
  std::thread thread_;
};

} // namespace llmc
