//===- server.h - llmc serve: the OpenAI-compatible HTTP server -*- C++ -*-===//
//
// Routes (cpp-httplib): POST /v1/completions, POST /v1/chat/completions,
// POST /v1/responses (responses_api.h), POST /tokenize and /detokenize,
// GET /v1/models, GET /health, GET /metrics, and the chat page: GET / and
// /ui/* (no authentication: the page asks for the key and sends it). Connection
// threads parse and check requests (openai_api.h), submit them to the
// EngineLoop and stream results back (SSE for "stream": true); a client that
// disconnects mid-stream aborts its request. Every error has OpenAI's body
// shape.
//
// Threads: listen() blocks the calling thread; shutdown() may be called
// from any other thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llmc/runtime/engine_loop.h"
#include "llmc/runtime/openai_api.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace llmc {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;    // 0: any free port
  std::string apiKey; // "" = no authentication
  size_t maxBodyBytes = 4u << 20;
  int threads = 0; // connection threads; 0 = from the limits
  size_t maxQueue = 256;
  int shutdownSeconds = 30; // in-flight requests get this long
  /// A stream that has had nothing to say for this long gets an SSE
  /// comment, so that proxies and clients do not time out a long prefill.
  double keepAliveSeconds = 10;
  /// The chat page at / (ui_assets.h); --no-ui turns it off.
  bool ui = true;
};

class Server {
public:
  /// `loop`, `model` and `metrics` outlive the server.
  Server(EngineLoop &loop, const api::ModelInfo &model, ServeMetrics &metrics,
         ServerOptions options);
  /// A server that answers while the model loads: /health is 503
  /// {"status": "loading"} and every other route a 503 until ready().
  /// `maxNumSeqs` sizes the connection threads.
  Server(ServeMetrics &metrics, int32_t maxNumSeqs, ServerOptions options);
  /// The model is loaded: requests go to `loop` (both outlive the server).
  /// Any thread.
  void ready(EngineLoop &loop, const api::ModelInfo &model);
  ~Server();

  /// Binds the socket; returns the port (useful with port 0). Throws
  /// llmc::Error when the address cannot be bound.
  int bind();
  /// Serves until shutdown(); returns when every connection thread ended.
  void listen();
  /// Stops taking requests, lets the in-flight ones finish (up to
  /// shutdownSeconds, then aborts them) and makes listen() return.
  void shutdown();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace llmc
