//===- engine_loop.cpp - The server's engine thread -----------------------===//
#include "llmc/runtime/engine_loop.h"

#include "llmc/runtime/openai_api.h"
#include "llmc/support/error.h"

#include <cstdio>
#include <map>

namespace llmc {

void RequestChannel::accepted() {
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = State::Accepted;
  cv_.notify_all();
}

void RequestChannel::refused(std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = State::Refused;
  error_ = std::move(message);
  cv_.notify_all();
}

void RequestChannel::push(RequestEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
  cv_.notify_all();
}

void RequestChannel::finish(RequestResult result) {
  std::lock_guard<std::mutex> lock(mutex_);
  result_ = std::move(result);
  cv_.notify_all();
}

bool RequestChannel::waitAccepted(std::string &error) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return state_ != State::Pending; });
  error = error_;
  return state_ == State::Accepted;
}

void RequestChannel::next(std::vector<RequestEvent> &events,
                          std::optional<RequestResult> &result,
                          std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait_for(lock, timeout,
               [&] { return !events_.empty() || result_.has_value(); });
  while (!events_.empty()) {
    events.push_back(std::move(events_.front()));
    events_.pop_front();
  }
  if (result_)
    result = std::move(result_);
  result_.reset();
}

EngineLoop::EngineLoop(StepRunner &engine, const tok::Tokenizer *tokenizer,
                       SchedulerOptions options, size_t maxQueue,
                       ServeMetrics &metrics)
    : engine_(engine), scheduler_(engine, tokenizer, options),
      metrics_(metrics), maxQueue_(maxQueue) {
  thread_ = std::thread([this] { run(); });
}

EngineLoop::~EngineLoop() {
  abortAll();
  stop();
}

std::shared_ptr<RequestChannel> EngineLoop::submit(ScheduledRequest r,
                                                   std::string label) {
  if (!accepting_)
    throw Error("the server is shutting down");
  auto channel = std::make_shared<RequestChannel>();
  // Per sample: the time of its last token, for the inter-token latency.
  auto last =
      std::make_shared<std::map<int32_t, RequestClock::Clock::time_point>>();
  const auto arrival = r.arrival;
  r.onEvent = [this, channel, last](const RequestEvent &e) {
    auto now = RequestClock::Clock::now();
    auto it = last->find(e.index);
    if (it != last->end())
      metrics_.interToken(
          std::chrono::duration<double>(now - it->second).count());
    (*last)[e.index] = now;
    channel->push(e);
  };
  r.onFinish = [this, channel, label, arrival](RequestResult result) {
    double e2e =
        std::chrono::duration<double>(RequestClock::Clock::now() - arrival)
            .count();
    metrics_.finished(result, e2e);
    if (logRequests_) {
      int64_t completion = 0;
      for (const SequenceOutput &o : result.outputs)
        completion += static_cast<int64_t>(o.outputIds.size());
      FinishReason reason = result.outputs.empty()
                                ? FinishReason::Abort
                                : result.outputs[0].finishReason;
      std::fprintf(stderr,
                   "llmc serve: %s prompt_tokens=%lld completion_tokens=%lld "
                   "cached_tokens=%lld ttft_ms=%.1f total_ms=%.1f "
                   "finish_reason=%s\n",
                   label.c_str(),
                   static_cast<long long>(result.metrics.promptTokens),
                   static_cast<long long>(completion),
                   static_cast<long long>(result.cachedPromptTokens),
                   result.metrics.ttftSeconds * 1e3, e2e * 1e3,
                   api::openaiFinishReason(reason));
    }
    --live_;
    channel->finish(std::move(result));
  };
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (incoming_.size() + waiting_ >= maxQueue_)
      throw Error("the server is busy: " + std::to_string(maxQueue_) +
                  " requests are already waiting (--max-queue)");
    ++live_;
    incoming_.push_back({std::move(r), channel});
  }
  cv_.notify_all();
  return channel;
}

void EngineLoop::abort(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    aborts_.push_back(id);
  }
  cv_.notify_all();
}

void EngineLoop::abortAll() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    abortAll_ = true;
  }
  cv_.notify_all();
}

void EngineLoop::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void EngineLoop::run() {
  while (true) {
    std::deque<Pending> incoming;
    std::vector<uint64_t> aborts;
    bool abortAll = false, stopping = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] {
        return !incoming_.empty() || !aborts_.empty() || abortAll_ || stop_ ||
               !scheduler_.idle();
      });
      incoming.swap(incoming_);
      aborts.swap(aborts_);
      abortAll = abortAll_;
      abortAll_ = false;
      stopping = stop_;
    }
    for (Pending &p : incoming) {
      try {
        scheduler_.add(std::move(p.request));
        p.channel->accepted();
      } catch (const std::exception &e) {
        --live_;
        p.channel->refused(e.what());
      }
    }
    for (uint64_t id : aborts)
      scheduler_.abort(id);
    if (abortAll || stopping)
      scheduler_.abortAll();
    if (stopping && scheduler_.idle())
      break;
    if (!scheduler_.idle()) {
      try {
        scheduler_.step();
      } catch (const std::exception &e) {
        // A failed step (a backend error) ends every request it touched;
        // the server keeps serving.
        std::fprintf(stderr, "llmc serve: engine step failed: %s\n", e.what());
        scheduler_.abortAll();
      }
    }
    waiting_ = scheduler_.waitingRequests();
    metrics_.update(scheduler_.runningRequests(), scheduler_.waitingRequests(),
                    scheduler_.kvUsage(), scheduler_.counters());
  }
}

} // namespace llmc
