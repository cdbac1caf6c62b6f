//===- serve_metrics.h - The server's Prometheus metrics --------*- C++ -*-===//
//
// Named after vLLM's, with the prefix llmc: and a model_name label:
//   histograms  llmc:time_to_first_token_seconds,
//               llmc:inter_token_latency_seconds,
//               llmc:e2e_request_latency_seconds,
//               llmc:request_queue_time_seconds
//   gauges      llmc:num_requests_running, llmc:num_requests_waiting,
//               llmc:kv_cache_usage_perc (0..1, as vLLM's)
//   counters    llmc:prompt_tokens_total, llmc:generation_tokens_total,
//               llmc:prefix_cache_queries_total, llmc:prefix_cache_hits_total
//               (in tokens), llmc:num_preemptions_total,
//               llmc:request_success_total{finished_reason="stop|length|abort"}
//   info        llmc:cache_config_info{cache_dtype,block_size,num_blocks} 1
//               (vLLM's cache_config_info)
//
// Thread-safe: the engine thread records, connection threads render.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/scheduler.h"

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace llmc {

class ServeMetrics {
public:
  explicit ServeMetrics(std::string modelName);

  /// A request ended; e2e from its arrival.
  void finished(const RequestResult &r, double e2eSeconds);
  void interToken(double seconds);
  /// The scheduler's state after a step (engine thread).
  void update(size_t running, size_t waiting, double kvUsage,
              const SchedulerCounters &counters);
  /// The KV pool the engine made (before serving starts).
  void setCacheConfig(std::string dtype, int32_t blockSize, int64_t blocks);
  /// The Prometheus text exposition format (version 0.0.4).
  std::string render() const;

  struct Histogram {
    std::vector<double> bounds;
    std::vector<uint64_t> counts; // per bound, not cumulative; + the +Inf one
    double sum = 0;
    uint64_t count = 0;
    void observe(double v);
  };

private:
  mutable std::mutex mutex_;
  std::string model_;
  Histogram ttft_, itl_, e2e_, queue_;
  size_t running_ = 0, waiting_ = 0;
  double kvUsage_ = 0;
  std::string cacheLabels_; // "" until setCacheConfig
  SchedulerCounters counters_;
  std::map<std::string, uint64_t> success_;
};

} // namespace llmc
