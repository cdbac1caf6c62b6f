//===- server.cpp - llmc serve: the OpenAI-compatible HTTP server ---------===//
#include "llmc/runtime/server.h"

#include "llmc/runtime/responses_api.h"
#include "llmc/runtime/ui_assets.h"

#include "llmc/support/error.h"

#include <httplib.h>

#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

namespace llmc {

using api::ApiError;
using json = nlohmann::ordered_json;

namespace {

/// cpp-httplib listens with a backlog of 5 (compiled into Debian's
/// library): a burst of clients would see connections reset. Listening
/// again on the bound socket raises it.
class HttpServer : public httplib::Server {
public:
  void raiseBacklog() {
    if (svr_sock_ != INVALID_SOCKET)
      ::listen(svr_sock_, SOMAXCONN);
  }
};

} // namespace

struct Server::Impl {
  // Null until ready(): the model is loading.
  std::atomic<EngineLoop *> loopPtr{nullptr};
  std::atomic<const api::ModelInfo *> modelPtr{nullptr};
  ServeMetrics &metrics;
  ServerOptions options;
  HttpServer http;
  std::atomic<int> active{0}; // requests being handled
  std::atomic<bool> shuttingDown{false};
  std::mt19937_64 rng{std::random_device{}()};
  std::mutex rngMutex;

  Impl(ServeMetrics &mt, ServerOptions o)
      : metrics(mt), options(std::move(o)) {}

  /// The loop and model, or a 503 while the model loads.
  bool ready(httplib::Response &res) const {
    if (loopPtr.load())
      return true;
    sendError(res, ApiError(503, "the model is loading", "",
                            "service_unavailable", "model_loading"));
    return false;
  }
  EngineLoop &loop() const { return *loopPtr.load(); }
  const api::ModelInfo &model() const { return *modelPtr.load(); }

  std::string newId(const char *prefix) {
    std::lock_guard<std::mutex> lock(rngMutex);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%s-%016llx", prefix,
                  static_cast<unsigned long long>(rng()));
    return buf;
  }

  static void sendError(httplib::Response &res, const ApiError &e) {
    res.status = e.status;
    res.set_content(e.body(), "application/json");
  }

  bool authorized(const httplib::Request &req, httplib::Response &res) const {
    if (options.apiKey.empty())
      return true;
    const std::string auth = req.get_header_value("Authorization");
    if (auth == "Bearer " + options.apiKey)
      return true;
    sendError(res, ApiError(401,
                            auth.empty() ? "missing API key: send "
                                           "'Authorization: Bearer <key>'"
                                         : "invalid API key",
                            "", "invalid_request_error", "invalid_api_key"));
    return false;
  }

  void handleGenerate(api::Endpoint endpoint, const httplib::Request &req,
                      httplib::Response &res);
  void routes();
};

namespace {

std::string sse(const json &j) {
  return "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) +
         "\n\n";
}

/// A streaming request's state, shared by its content provider calls.
struct Stream {
  std::shared_ptr<RequestChannel> channel;
  api::ParsedRequest request;
  api::ResponseContext ctx;
  uint64_t id = 0;
  bool started = false, done = false;
  std::chrono::steady_clock::time_point lastWrite =
      std::chrono::steady_clock::now();
  /// /v1/responses: the Responses body, and its events.
  json responsesBody;
  std::unique_ptr<api::ResponseEvents> events;
};

} // namespace

void Server::Impl::handleGenerate(api::Endpoint endpoint,
                                  const httplib::Request &req,
                                  httplib::Response &res) {
  if (!authorized(req, res) || !ready(res))
    return;
  EngineLoop &loop = this->loop();
  const api::ModelInfo &model = this->model();
  // Counts the request as in flight until its response is written (for a
  // stream: until the content provider is released).
  struct Active {
    explicit Active(std::atomic<int> &n) : n(n) { ++n; }
    Active(const Active &) = delete;
    ~Active() { release(); }
    void release() {
      if (!released)
        --n;
      released = true;
    }
    std::atomic<int> &n;
    bool released = false;
  };
  auto guard = std::make_shared<Active>(active);
  try {
    if (shuttingDown)
      throw ApiError(503, "the server is shutting down", "",
                     "service_unavailable");
    auto stream = std::make_shared<Stream>();
    const bool responses = endpoint == api::Endpoint::Responses;
    if (responses) {
      stream->responsesBody = json::parse(req.body, nullptr, false);
      if (!stream->responsesBody.is_object())
        throw ApiError(400, "the request body must be a JSON object");
      stream->request = api::parseRequest(
          api::Endpoint::Chat, api::chatBodyForResponse(stream->responsesBody),
          model);
    } else {
      stream->request = api::parseRequest(endpoint, req.body, model);
    }
    const api::ParsedRequest &p = stream->request;
    ScheduledRequest r;
    r.id = stream->id = loop.nextId();
    r.prompt = p.prompt;
    r.options = p.options;
    r.n = p.n;
    r.speculativeTokens = p.speculative ? -1 : 0;
    stream->ctx.id =
        responses
            ? "resp_" + newId("").substr(1)
            : newId(endpoint == api::Endpoint::Chat ? "chatcmpl" : "cmpl");
    stream->ctx.created = static_cast<int64_t>(std::time(nullptr));
    stream->ctx.request = &stream->request;
    stream->ctx.model = &model;
    try {
      stream->channel = loop.submit(std::move(r), stream->ctx.id);
    } catch (const Error &e) {
      throw ApiError(503, e.what(), "", "service_unavailable");
    }
    std::string refused;
    if (!stream->channel->waitAccepted(refused))
      throw ApiError(400, refused);

    if (!p.stream) {
      std::vector<RequestEvent> ignored;
      std::optional<RequestResult> result;
      while (!result)
        stream->channel->next(ignored, result, std::chrono::milliseconds(500));
      json body = api::response(stream->ctx, *result);
      if (responses)
        body = api::responseFromChat(body, stream->responsesBody,
                                     stream->ctx.id, stream->ctx.created);
      res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace),
                      "application/json");
      return;
    }
    if (responses)
      stream->events = std::make_unique<api::ResponseEvents>(
          stream->responsesBody, stream->ctx.id, stream->ctx.created);
    const auto keepAlive =
        std::chrono::duration<double>(options.keepAliveSeconds);
    res.set_header("Cache-Control", "no-cache");
    EngineLoop *loopPtr = &loop;
    res.set_chunked_content_provider(
        "text/event-stream",
        [stream, keepAlive](size_t, httplib::DataSink &sink) {
          const api::ParsedRequest &p = stream->request;
          auto write = [&](const std::string &data) {
            stream->lastWrite = std::chrono::steady_clock::now();
            return data.empty() || sink.write(data.data(), data.size());
          };
          if (!stream->started && stream->events) {
            stream->started = true;
            if (!write(stream->events->start()))
              return false;
          }
          if (!stream->started) {
            stream->started = true;
            // Chat streams open with the role; an echoed completion with
            // its prompt.
            for (int32_t i = 0; i < p.n; ++i) {
              std::string first;
              if (p.endpoint == api::Endpoint::Chat)
                first = sse(api::roleChunk(stream->ctx, i));
              else if (p.echo) {
                RequestEvent e;
                e.index = i;
                e.text = p.promptText;
                first = sse(*api::chunk(stream->ctx, e));
              }
              if (!first.empty() && !sink.write(first.data(), first.size()))
                return false;
            }
          }
          std::vector<RequestEvent> events;
          std::optional<RequestResult> result;
          stream->channel->next(events, result, std::chrono::milliseconds(200));
          for (const RequestEvent &e : events)
            if (auto c = api::chunk(stream->ctx, e)) {
              if (!write(stream->events ? stream->events->push(*c) : sse(*c)))
                return false; // the client is gone: the releaser aborts
            }
          if (!result && events.empty() &&
              std::chrono::steady_clock::now() - stream->lastWrite >=
                  keepAlive &&
              !write(": keep-alive\n\n"))
            return false;
          if (result) {
            std::string tail;
            if (stream->events) {
              tail =
                  stream->events->push(api::usageChunk(stream->ctx, *result));
              tail += stream->events->finish();
            } else {
              if (p.includeUsage)
                tail += sse(api::usageChunk(stream->ctx, *result));
              tail += "data: [DONE]\n\n";
            }
            if (!write(tail))
              return false;
            stream->done = true;
            sink.done();
          }
          return true;
        },
        [stream, loopPtr, guard](bool) {
          if (!stream->done)
            loopPtr->abort(stream->id);
          guard->release();
        });
  } catch (const ApiError &e) {
    sendError(res, e);
  }
}

void Server::Impl::routes() {
  http.Post("/v1/completions",
            [this](const httplib::Request &req, httplib::Response &res) {
              handleGenerate(api::Endpoint::Completions, req, res);
            });
  http.Post("/v1/chat/completions",
            [this](const httplib::Request &req, httplib::Response &res) {
              handleGenerate(api::Endpoint::Chat, req, res);
            });
  http.Post("/v1/responses",
            [this](const httplib::Request &req, httplib::Response &res) {
              handleGenerate(api::Endpoint::Responses, req, res);
            });
  // vLLM's tokenizer endpoints (no generation, no queue).
  for (const char *path : {"/tokenize", "/detokenize"}) {
    const bool encode = std::string(path) == "/tokenize";
    http.Post(path, [this, encode](const httplib::Request &req,
                                   httplib::Response &res) {
      if (!authorized(req, res) || !ready(res))
        return;
      try {
        res.set_content(
            (encode ? api::tokenize(req.body, model())
                    : api::detokenize(req.body, model()))
                .dump(-1, ' ', false, json::error_handler_t::replace),
            "application/json");
      } catch (const ApiError &e) {
        sendError(res, e);
      }
    });
  }
  http.Get("/v1/models", [this](const httplib::Request &req,
                                httplib::Response &res) {
    if (!authorized(req, res) || !ready(res))
      return;
    json m = {{"id", model().name},
              {"object", "model"},
              {"created", static_cast<int64_t>(std::time(nullptr))},
              {"owned_by", "llmc"},
              {"max_model_len", model().contextLength}};
    res.set_content(json{{"object", "list"}, {"data", json::array({m})}}.dump(),
                    "application/json");
  });
  http.Get("/health", [this](const httplib::Request &, httplib::Response &res) {
    const bool up = loopPtr.load() != nullptr;
    res.status = up ? 200 : 503;
    res.set_content(up ? R"({"status":"ok"})" : R"({"status":"loading"})",
                    "application/json");
  });
  if (options.ui)
    for (const char *path : {"/", "/ui/chat.js", "/ui/chat.css"})
      http.Get(path, [path](const httplib::Request &, httplib::Response &res) {
        const UiAsset *a = uiAsset(path);
        res.set_header("Cache-Control", "no-cache");
        res.set_content(a->body.data(), a->body.size(), a->contentType);
      });
  http.Get("/metrics",
           [this](const httplib::Request &, httplib::Response &res) {
             if (!ready(res))
               return;
             res.set_content(metrics.render(), "text/plain; version=0.0.4");
           });
  // Whatever has no route, or failed before a handler: OpenAI's body.
  http.set_error_handler([](const httplib::Request &req,
                            httplib::Response &res) {
    if (!res.body.empty())
      return;
    std::string message = "not found: " + req.method + " " + req.path;
    std::string code = "not_found";
    if (res.status == 413) {
      message = "the request body is larger than the server accepts "
                "(--max-body-size)";
      code = "payload_too_large";
    } else if (res.status == 400) {
      message = "malformed HTTP request";
      code = "bad_request";
    } else if (res.status != 404) {
      message = "HTTP error " + std::to_string(res.status);
      code = "";
    }
    sendError(res,
              ApiError(res.status, message, "", "invalid_request_error", code));
  });
  http.set_exception_handler([](const httplib::Request &,
                                httplib::Response &res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception &e) {
      what = std::string("internal error: ") + e.what();
    } catch (...) {
    }
    sendError(res, ApiError(500, what, "", "internal_error"));
  });
}

Server::Server(EngineLoop &loop, const api::ModelInfo &model,
               ServeMetrics &metrics, ServerOptions options)
    : Server(metrics, model.maxNumSeqs, std::move(options)) {
  ready(loop, model);
}

void Server::ready(EngineLoop &loop, const api::ModelInfo &model) {
  impl_->modelPtr = &model;
  impl_->loopPtr = &loop;
}

Server::Server(ServeMetrics &metrics, int32_t maxNumSeqs, ServerOptions options)
    : impl_(std::make_unique<Impl>(metrics, std::move(options))) {
  Impl &i = *impl_;
  i.http.set_payload_max_length(i.options.maxBodyBytes);
  i.http.set_read_timeout(10, 0);
  i.http.set_write_timeout(10, 0);
  i.http.set_keep_alive_timeout(5);
  size_t threads =
      i.options.threads > 0
          ? static_cast<size_t>(i.options.threads)
          : std::min<size_t>(1024, static_cast<size_t>(maxNumSeqs) +
                                       i.options.maxQueue / 4 + 16);
  i.http.new_task_queue = [threads] {
    return new httplib::ThreadPool(threads);
  };
  i.routes();
}

Server::~Server() = default;

int Server::bind() {
  Impl &i = *impl_;
  int port = i.options.port;
  if (port == 0) {
    port = i.http.bind_to_any_port(i.options.host);
    if (port < 0)
      throw Error("cannot bind " + i.options.host + " to a free port");
  } else if (!i.http.bind_to_port(i.options.host, port)) {
    throw Error("cannot listen on " + i.options.host + ":" +
                std::to_string(port) +
                " (in use, or not an address of this machine)");
  }
  i.http.raiseBacklog();
  return port;
}

void Server::listen() { impl_->http.listen_after_bind(); }

void Server::shutdown() {
  Impl &i = *impl_;
  if (i.shuttingDown.exchange(true))
    return;
  EngineLoop *loop = i.loopPtr.load();
  if (loop)
    loop->stopAccepting();
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::seconds(i.options.shutdownSeconds);
  while (i.active > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (i.active > 0) {
    std::fprintf(stderr,
                 "llmc serve: %d requests still running after %d s; "
                 "aborting them\n",
                 i.active.load(), i.options.shutdownSeconds);
    if (loop)
      loop->abortAll();
    auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (i.active > 0 && std::chrono::steady_clock::now() < grace)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  i.http.stop();
}

} // namespace llmc
