// The server end to end on a fake model (no compiler needed, so it runs
// under ASan + UBSan too): loopback only, each test starts and stops its
// own server on a free port, and every request is bounded in count and
// time. Concurrency equals solo; a client that disconnects mid-stream gets
// its request aborted and its blocks freed; malformed traffic gets a 4xx
// and the server keeps answering; keys, queue limits, graceful shutdown.
#include "../sched/fake_model.h"
#include "byte_tokenizer.h"

#include "llmc/runtime/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>

namespace llmc::test {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

class ServerTest : public ::testing::Test {
protected:
  void start(ServerOptions so = {}, int32_t maxNumSeqs = 8,
             std::chrono::microseconds stepDelay = {},
             spec::Proposer *proposer = nullptr, bool loading = false) {
    model_ =
        std::make_unique<FakeModel>(FakeModel::Options{512, 4, true, 256, 256});
    model_->stepDelay = stepDelay;
    info_.name = "fake";
    info_.contextLength = 256;
    info_.vocabSize = 256;
    info_.maxNumSeqs = maxNumSeqs;
    info_.eosIds = {};
    info_.chatEosIds = {};
    info_.tokenizer = &tokenizer_;
    info_.chatTemplate = &chat_;
    so.host = "127.0.0.1";
    so.port = 0;
    so.shutdownSeconds = 10;
    SchedulerOptions sched{maxNumSeqs, 64};
    if (proposer) {
      sched.proposer = proposer;
      sched.speculative.method = proposer->method();
      sched.speculative.adaptive = false;
    }
    loop_ = std::make_unique<EngineLoop>(*model_, &tokenizer_, sched,
                                         so.maxQueue, metrics_);
    loop_->setLogRequests(false);
    server_ = loading ? std::make_unique<Server>(metrics_, maxNumSeqs, so)
                      : std::make_unique<Server>(*loop_, info_, metrics_, so);
    port_ = server_->bind();
    listener_ = std::thread([this] { server_->listen(); });
  }

  void TearDown() override {
    if (!server_)
      return;
    server_->shutdown();
    listener_.join();
    loop_->stop();
    model_->checkIdle();
  }

  httplib::Client client() {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(20, 0);
    c.set_connection_timeout(5, 0);
    return c;
  }

  httplib::Result post(const std::string &path, const std::string &body,
                       const httplib::Headers &headers = {}) {
    return client().Post(path.c_str(), headers, body, "application/json");
  }

  /// A streamed completion's text and its last finish reason.
  std::pair<std::string, std::string> stream(const std::string &body) {
    auto res = client().Post("/v1/completions", body, "application/json");
    EXPECT_TRUE(res) << "no response: " << httplib::to_string(res.error());
    std::string raw = res ? res->body : "";
    std::string text, finish;
    for (size_t at = 0, end; (end = raw.find("\n\n", at)) != std::string::npos;
         at = end + 2) {
      std::string event = raw.substr(at, end - at);
      if (event.rfind("data: ", 0) != 0)
        continue;
      std::string payload = event.substr(6);
      if (payload == "[DONE]")
        break;
      json j = json::parse(payload);
      for (const json &ch : j["choices"]) {
        text += ch["text"].get<std::string>();
        if (!ch["finish_reason"].is_null())
          finish = ch["finish_reason"];
      }
    }
    EXPECT_THAT(raw, HasSubstr("data: [DONE]\n\n"));
    return {text, finish};
  }

  /// The value of a metric line ("llmc:num_requests_running{...} 0"); a
  /// `label` selects among lines of one name.
  double metric(const std::string &name, const std::string &label = "") {
    auto res = client().Get("/metrics");
    if (!res)
      return -1;
    const std::string &body = res->body;
    for (size_t at = 0, end; at < body.size(); at = end + 1) {
      end = body.find('\n', at);
      if (end == std::string::npos)
        end = body.size();
      std::string line = body.substr(at, end - at);
      size_t close = line.find("} ");
      if (line.rfind(name + "{", 0) == 0 && close != std::string::npos &&
          line.find(label) < close)
        return std::stod(line.substr(close + 2));
    }
    return -1;
  }

  /// Polls /metrics until nothing runs and no KV block is held (bounded).
  bool settles() {
    for (int i = 0; i < 250; ++i) {
      if (metric("llmc:num_requests_running") == 0 &&
          metric("llmc:kv_cache_usage_perc") == 0)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  ByteTokenizer tokenizer_;
  ChatTemplate chat_{"{% for m in messages %}{{ m.content }}{% endfor %}",
                     "test template", tokenizer_};
  api::ModelInfo info_;
  ServeMetrics metrics_{"fake"};
  std::unique_ptr<FakeModel> model_;
  std::unique_ptr<EngineLoop> loop_;
  std::unique_ptr<Server> server_;
  std::thread listener_;
  int port_ = 0;
};

/// Sends raw bytes and returns what comes back (until close or 3 s).
std::string rawExchange(int port, const std::string &bytes,
                        bool closeEarly = false) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "";
  }
  timeval tv{3, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n =
        ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      break;
    sent += static_cast<size_t>(n);
  }
  std::string out;
  if (!closeEarly) {
    char buf[4096];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0)
      out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

int statusOf(const std::string &response) {
  if (response.rfind("HTTP/1.1 ", 0) != 0)
    return 0;
  return std::stoi(response.substr(9, 3));
}

TEST_F(ServerTest, CompletionChatModelsHealth) {
  start();
  auto r = post("/v1/completions",
                R"({"prompt": "hello", "max_tokens": 5, "temperature": 0})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  json j = json::parse(r->body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(j["usage"]["completion_tokens"], 5);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  r = post("/v1/chat/completions",
           R"({"model": "fake", "messages": [{"role": "user", "content": "hi"}],
               "max_tokens": 3, "n": 2})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  j = json::parse(r->body);
  EXPECT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
  auto m = client().Get("/v1/models");
  ASSERT_TRUE(m);
  EXPECT_EQ(json::parse(m->body)["data"][0]["id"], "fake");
  auto h = client().Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  // vLLM's tokenizer endpoints, and their 400s.
  r = post("/tokenize", R"({"prompt": "hey"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  j = json::parse(r->body);
  EXPECT_EQ(j["count"], 3);
  r = post("/detokenize", json{{"tokens", j["tokens"]}}.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["prompt"], "hey");
  r = post("/detokenize", R"({"tokens": [-1]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(json::parse(r->body)["error"]["param"], "tokens");
}

// A stream that waits between tokens gets SSE comments, which clients
// skip: the text is the same.
TEST_F(ServerTest, ASlowStreamGetsKeepAlives) {
  ServerOptions so;
  so.keepAliveSeconds = 0.05;
  start(so, 8, std::chrono::milliseconds(450));
  auto res = client().Post(
      "/v1/completions",
      R"({"prompt": "ab", "max_tokens": 2, "temperature": 0, "stream": true})",
      "application/json");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr(": keep-alive\n\n"));
  EXPECT_THAT(res->body, HasSubstr("data: [DONE]"));
}

// While the model loads, the port answers: /health and every route 503.
TEST_F(ServerTest, LoadingIs503) {
  start({}, 8, {}, nullptr, /*loading=*/true);
  auto res = client().Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_THAT(res->body, HasSubstr("loading"));
  res = post("/v1/chat/completions",
             R"({"messages": [{"role": "user", "content": "hi"}]})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_THAT(res->body, HasSubstr("model_loading"));
  EXPECT_EQ(client().Get("/v1/models")->status, 503);
  server_->ready(*loop_, info_);
  EXPECT_EQ(client().Get("/health")->status, 200);
  res = post("/v1/chat/completions",
             R"({"messages": [{"role": "user", "content": "hi"}],
                 "max_tokens": 2})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

// The chat page at / and its files; --no-ui leaves / a 404.
TEST_F(ServerTest, ChatPage) {
  start();
  auto res = client().Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("text/html"));
  EXPECT_THAT(res->body, HasSubstr("/ui/chat.js"));
  res = client().Get("/ui/chat.js");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->get_header_value("Content-Type"),
              HasSubstr("text/javascript"));
  EXPECT_THAT(res->body, HasSubstr("/v1/chat/completions"));
  TearDown();
  server_.reset();
  ServerOptions so;
  so.ui = false;
  start(so);
  res = client().Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

// /v1/responses: the chat reply as a Response, whole and as events.
TEST_F(ServerTest, Responses) {
  start();
  auto res = post("/v1/responses", R"({"model": "fake", "input": [{"role":
      "user", "content": [{"type": "input_text", "text": "hi"}]}],
      "instructions": "Be brief.", "max_output_tokens": 4, "temperature": 0})");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json r = json::parse(res->body);
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["id"].get<std::string>().substr(0, 5), "resp_");
  EXPECT_EQ(r["status"], "incomplete");
  EXPECT_EQ(r["incomplete_details"]["reason"], "max_output_tokens");
  ASSERT_EQ(r["output"].size(), 1u);
  EXPECT_EQ(r["output"][0]["type"], "message");
  const std::string text = r["output"][0]["content"][0]["text"];
  EXPECT_EQ(r["usage"]["output_tokens"], 4);
  res = post("/v1/responses", R"({"model": "fake", "input": "hi",
      "instructions": "Be brief.", "max_output_tokens": 4, "temperature": 0,
      "stream": true})");
  ASSERT_TRUE(res);
  std::vector<std::string> types;
  std::string streamed;
  for (size_t at = 0, end;
       (end = res->body.find("\n\n", at)) != std::string::npos; at = end + 2) {
    const std::string ev = res->body.substr(at, end - at);
    const size_t data = ev.find("\ndata: ");
    ASSERT_NE(data, std::string::npos) << ev;
    json j = json::parse(ev.substr(data + 7));
    EXPECT_EQ(ev.substr(7, data - 7), j["type"]);
    EXPECT_EQ(j["sequence_number"], types.size());
    types.push_back(j["type"]);
    if (j["type"] == "response.output_text.delta")
      streamed += j["delta"].get<std::string>();
  }
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.front(), "response.created");
  EXPECT_EQ(types.back(), "response.incomplete");
  EXPECT_EQ(streamed, text);
  res = post("/v1/responses", R"({"input": "x", "previous_response_id": "r"})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, HasSubstr("stateless"));
  res = post("/v1/responses",
             R"({"input": "x", "tools": [{"type": "web_search"}]})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, HasSubstr("tools[0].type"));
}

TEST_F(ServerTest, ConcurrentStreamsEqualTheSameRequestsAlone) {
  start();
  auto body = [](int i) {
    return json{{"prompt", "request number " + std::to_string(i)},
                {"max_tokens", 12 + i % 7},
                {"temperature", 0},
                {"stream", true}}
        .dump();
  };
  std::vector<std::pair<std::string, std::string>> alone;
  for (int i = 0; i < 32; ++i)
    alone.push_back(stream(body(i)));
  std::vector<std::future<std::pair<std::string, std::string>>> together;
  for (int i = 0; i < 32; ++i)
    together.push_back(
        std::async(std::launch::async, [&, i] { return stream(body(i)); }));
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(together[static_cast<size_t>(i)].get(),
              alone[static_cast<size_t>(i)])
        << "request " << i;
  EXPECT_TRUE(settles());
  EXPECT_EQ(metric("llmc:num_requests_waiting"), 0);
  EXPECT_GE(metric("llmc:generation_tokens_total"), 2 * 32 * 12);
}

TEST_F(ServerTest, ADisconnectedClientsRequestIsAborted) {
  start({}, 8, std::chrono::microseconds(2000));
  std::string body =
      json{{"prompt", "long"}, {"max_tokens", 200}, {"stream", true}}.dump();
  std::string request = "POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
                        "Content-Type: application/json\r\nContent-Length: " +
                        std::to_string(body.size()) + "\r\n\r\n" + body;
  // Read the first bytes of the stream, then hang up.
  {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr),
              0);
    ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    char buf[256];
    timeval tv{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ASSERT_GT(::recv(fd, buf, sizeof buf, 0), 0);
    ::close(fd);
  }
  // The hang-up is seen at the next write: the request ends as aborted.
  for (int i = 0; i < 250 && metric("llmc:request_success_total",
                                    "finished_reason=\"abort\"") < 1;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(metric("llmc:request_success_total", "finished_reason=\"abort\""),
            1);
  EXPECT_TRUE(settles());
  // The server keeps serving.
  auto r = post("/v1/completions", R"({"prompt": "after", "max_tokens": 2})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST_F(ServerTest, MalformedTrafficGets4xx) {
  start({}, 8);
  struct Case {
    const char *what;
    std::string body;
    int status;
  };
  std::vector<Case> cases = {
      {"not JSON", "this is not json", 400},
      {"wrong type", R"({"prompt": "a", "max_tokens": "many"})", 400},
      {"huge number", R"({"prompt": "a", "max_tokens": 1e400})", 400},
      {"huge integer", R"({"prompt": "a", "n": 184467440737095516150})", 400},
      {"negative", R"({"prompt": "a", "temperature": -1})", 400},
      {"null prompt", R"({"prompt": null})", 400},
      {"deep nesting", std::string(100000, '['), 400},
      {"unknown model", R"({"model": "nope", "prompt": "a"})", 404},
  };
  for (const Case &c : cases) {
    auto r = post("/v1/completions", c.body);
    ASSERT_TRUE(r) << c.what;
    EXPECT_EQ(r->status, c.status) << c.what << ": " << r->body;
    EXPECT_TRUE(json::parse(r->body, nullptr, false).contains("error"))
        << c.what;
  }
  auto chat = post("/v1/chat/completions", R"({"messages": []})");
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->status, 400);
  EXPECT_THAT(chat->body, HasSubstr("\"param\":\"messages\""));
  // A 10 MB body.
  auto big = post("/v1/completions", std::string(10 << 20, 'x'));
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  EXPECT_THAT(big->body, HasSubstr("\"error\""));
  // No body at all.
  std::string none =
      rawExchange(port_, "POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
                         "Content-Length: 0\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(statusOf(none), 400) << none;
  // A request line alone, then nothing.
  rawExchange(port_, "POST /v1/completions HTTP/1.1\r\n", true);
  // Half a body, then the client goes away.
  rawExchange(port_,
              "POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
              "Content-Length: 1000\r\n\r\n{\"prompt\": \"a",
              true);
  // Garbage instead of HTTP.
  std::string garbage = rawExchange(port_, "\x01\x02 nonsense\r\n\r\n");
  EXPECT_TRUE(garbage.empty() || statusOf(garbage) >= 400) << garbage;
  // Unknown paths and methods.
  auto missing = client().Get("/v2/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_THAT(missing->body, HasSubstr("\"error\""));
  auto wrongMethod = client().Get("/v1/completions");
  ASSERT_TRUE(wrongMethod);
  EXPECT_EQ(wrongMethod->status, 404);
  // Still alive.
  auto h = client().Get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  EXPECT_TRUE(settles());
}

// A server that speculates (a draft that is the model itself: every draft
// is accepted) counts drafts in /metrics; a request that opts out with
// "speculative": false adds none, and both give the same greedy text.
TEST_F(ServerTest, SpeculationIsCountedAndARequestCanOptOut) {
  FakeModel draft(FakeModel::Options{512, 4, false, 256, 256});
  spec::DraftProposer proposer(draft);
  start({}, 8, {}, &proposer);
  const std::string body =
      R"({"prompt": "speculate", "max_tokens": 12, "temperature": 0)";
  auto on = post("/v1/completions", body + "}");
  ASSERT_TRUE(on);
  ASSERT_EQ(on->status, 200) << on->body;
  const double drafts = metric("llmc:spec_decode_num_draft_tokens_total");
  EXPECT_GT(drafts, 0);
  EXPECT_EQ(metric("llmc:spec_decode_num_accepted_tokens_total"), drafts);
  auto off = post("/v1/completions", body + R"(, "speculative": false})");
  ASSERT_TRUE(off);
  ASSERT_EQ(off->status, 200) << off->body;
  EXPECT_EQ(metric("llmc:spec_decode_num_draft_tokens_total"), drafts);
  EXPECT_EQ(json::parse(on->body)["choices"][0]["text"],
            json::parse(off->body)["choices"][0]["text"]);
  auto bad = post("/v1/completions", body + R"(, "speculative": 3})");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("speculative"));
  ASSERT_TRUE(settles());
  server_->shutdown();
  listener_.join();
  loop_->stop();
  server_.reset();
  model_->checkIdle();
  draft.checkIdle();
}

TEST_F(ServerTest, ApiKey) {
  ServerOptions so;
  so.apiKey = "sekret";
  start(so);
  const std::string body = R"({"prompt": "a", "max_tokens": 1})";
  auto none = post("/v1/completions", body);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 401);
  EXPECT_THAT(none->body, HasSubstr("invalid_api_key"));
  auto wrong = post("/v1/completions", body, {{"Authorization", "Bearer no"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto right =
      post("/v1/completions", body, {{"Authorization", "Bearer sekret"}});
  ASSERT_TRUE(right);
  EXPECT_EQ(right->status, 200);
  auto models = client().Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 401);
  auto health = client().Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST_F(ServerTest, AFullQueueGets503) {
  ServerOptions so;
  so.maxQueue = 1;
  // One sequence runs at a time, each step takes 5 ms.
  start(so, 1, std::chrono::microseconds(5000));
  const std::string body = R"({"prompt": "a", "max_tokens": 40})";
  std::vector<std::future<int>> replies;
  for (int i = 0; i < 6; ++i) {
    replies.push_back(std::async(std::launch::async, [&] {
      auto r = post("/v1/completions", body);
      return r ? r->status : 0;
    }));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int ok = 0, busy = 0;
  for (auto &f : replies) {
    int s = f.get();
    ok += s == 200;
    busy += s == 503;
  }
  EXPECT_GE(ok, 2);
  EXPECT_GE(busy, 1);
  EXPECT_EQ(ok + busy, 6);
  EXPECT_TRUE(settles());
}

TEST_F(ServerTest, ShutdownLetsAStreamFinish) {
  start({}, 8, std::chrono::microseconds(3000));
  auto pending = std::async(std::launch::async, [&] {
    return stream(R"({"prompt": "a", "max_tokens": 60, "stream": true})");
  });
  // Shut down once the stream is in flight (running in the engine).
  for (int i = 0; i < 500 && metric("llmc:num_requests_running") < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  server_->shutdown(); // returns once the stream is done
  auto [text, finish] = pending.get();
  EXPECT_EQ(finish, "length");
  // New requests are refused once shutting down.
  auto late = post("/v1/completions", R"({"prompt": "a", "max_tokens": 1})");
  EXPECT_TRUE(!late || late->status == 503);
}

} // namespace
} // namespace llmc::test

namespace llmc::test {
namespace {

TEST(ServeMetricsRender, CacheConfigInfoNamesTheKvDtype) {
  ServeMetrics m("m");
  EXPECT_EQ(m.render().find("llmc:cache_config_info"), std::string::npos);
  m.setCacheConfig("int8", 16, 113);
  EXPECT_THAT(m.render(), HasSubstr("# TYPE llmc:cache_config_info gauge\n"
                                    "llmc:cache_config_info{model_name=\"m\","
                                    "cache_dtype=\"int8\",block_size=\"16\","
                                    "num_blocks=\"113\"} 1\n"));
}

} // namespace
} // namespace llmc::test
