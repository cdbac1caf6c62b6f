//===- serve_metrics.cpp - The server's Prometheus metrics ----------------===//
#include "llmc/runtime/serve_metrics.h"

#include "llmc/runtime/openai_api.h"

#include <cstdio>

namespace llmc {
namespace {

// vLLM's buckets.
const std::vector<double> kTtft = {
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
    1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
const std::vector<double> kItl = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                  0.3,  0.4,   0.5,  0.75,  1.0, 2.5,  5.0,
                                  7.5,  10.0,  20.0, 40.0,  80.0};
const std::vector<double> kLatency = {
    0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
    30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

ServeMetrics::Histogram histogram(const std::vector<double> &bounds) {
  ServeMetrics::Histogram h;
  h.bounds = bounds;
  h.counts.assign(bounds.size() + 1, 0);
  return h;
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

} // namespace

void ServeMetrics::Histogram::observe(double v) {
  size_t i = 0;
  while (i < bounds.size() && v > bounds[i])
    ++i;
  ++counts[i];
  sum += v;
  ++count;
}

ServeMetrics::ServeMetrics(std::string modelName)
    : model_(std::move(modelName)), ttft_(histogram(kTtft)),
      itl_(histogram(kItl)), e2e_(histogram(kLatency)),
      queue_(histogram(kLatency)) {
  for (const char *r : {"stop", "length", "abort"})
    success_[r] = 0;
}

void ServeMetrics::finished(const RequestResult &r, double e2eSeconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  const GenerationMetrics &m = r.metrics;
  if (m.generatedTokens > 0)
    ttft_.observe(m.ttftSeconds);
  queue_.observe(m.queueSeconds);
  e2e_.observe(e2eSeconds);
  FinishReason reason =
      r.outputs.empty() ? FinishReason::Abort : r.outputs[0].finishReason;
  ++success_[api::openaiFinishReason(reason)];
}

void ServeMetrics::interToken(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  itl_.observe(seconds);
}

void ServeMetrics::update(size_t running, size_t waiting, double kvUsage,
                          const SchedulerCounters &counters) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_ = running;
  waiting_ = waiting;
  kvUsage_ = kvUsage;
  counters_ = counters;
}

void ServeMetrics::setCacheConfig(std::string dtype, int32_t blockSize,
                                  int64_t blocks) {
  std::lock_guard<std::mutex> lock(mutex_);
  cacheLabels_ = "cache_dtype=\"" + dtype + "\",block_size=\"" +
                 std::to_string(blockSize) + "\",num_blocks=\"" +
                 std::to_string(blocks) + "\"";
}

std::string ServeMetrics::render() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string label = "model_name=\"" + model_ + "\"";
  std::string out;
  auto head = [&](const char *name, const char *type, const char *help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name +
           " " + type + "\n";
  };
  auto value = [&](const char *name, const char *type, const char *help,
                   double v) {
    head(name, type, help);
    out += std::string(name) + "{" + label + "} " + num(v) + "\n";
  };
  auto hist = [&](const char *name, const char *help, const Histogram &h) {
    head(name, "histogram", help);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.bounds.size(); ++i) {
      cumulative += h.counts[i];
      out += std::string(name) + "_bucket{" + label + ",le=\"" +
             num(h.bounds[i]) + "\"} " + std::to_string(cumulative) + "\n";
    }
    cumulative += h.counts.back();
    out += std::string(name) + "_bucket{" + label + ",le=\"+Inf\"} " +
           std::to_string(cumulative) + "\n";
    out += std::string(name) + "_sum{" + label + "} " + num(h.sum) + "\n";
    out += std::string(name) + "_count{" + label + "} " +
           std::to_string(h.count) + "\n";
  };
  if (!cacheLabels_.empty()) {
    head("llmc:cache_config_info", "gauge", "The KV cache's configuration.");
    out += "llmc:cache_config_info{" + label + "," + cacheLabels_ + "} 1\n";
  }
  value("llmc:num_requests_running", "gauge",
        "Requests whose sequences are running in the engine.",
        static_cast<double>(running_));
  value("llmc:num_requests_waiting", "gauge",
        "Requests waiting to be scheduled.", static_cast<double>(waiting_));
  value("llmc:kv_cache_usage_perc", "gauge",
        "Fraction of KV-cache blocks held by sequences (1 = full; the fuller "
        "pool where sliding-window layers have their own).",
        kvUsage_);
  value("llmc:prompt_tokens_total", "counter", "Prompt tokens received.",
        static_cast<double>(counters_.promptTokens));
  value("llmc:generation_tokens_total", "counter", "Tokens generated.",
        static_cast<double>(counters_.generationTokens));
  value("llmc:prefix_cache_queries_total", "counter",
        "Prompt tokens looked up in the prefix cache.",
        static_cast<double>(counters_.prefixQueryTokens));
  value("llmc:prefix_cache_hits_total", "counter",
        "Prompt tokens found in the prefix cache.",
        static_cast<double>(counters_.prefixHitTokens));
  value("llmc:num_preemptions_total", "counter",
        "Requests preempted (their KV blocks taken, recomputed later).",
        static_cast<double>(counters_.preemptions));
  value("llmc:spec_decode_num_draft_tokens_total", "counter",
        "Draft tokens verified by speculative decoding.",
        static_cast<double>(counters_.specDraftTokens));
  value("llmc:spec_decode_num_accepted_tokens_total", "counter",
        "Draft tokens the target accepted.",
        static_cast<double>(counters_.specAcceptedTokens));
  head("llmc:request_success_total", "counter",
       "Finished requests by finish reason.");
  for (const auto &[reason, n] : success_)
    out += "llmc:request_success_total{" + label + ",finished_reason=\"" +
           reason + "\"} " + std::to_string(n) + "\n";
  hist("llmc:time_to_first_token_seconds",
       "Time from arrival to the first generated token.", ttft_);
  hist("llmc:inter_token_latency_seconds",
       "Time between two tokens of one sequence.", itl_);
  hist("llmc:e2e_request_latency_seconds",
       "Time from arrival to the end of a request.", e2e_);
  hist("llmc:request_queue_time_seconds",
       "Time a request waited before it was first scheduled.", queue_);
  return out;
}

} // namespace llmc
