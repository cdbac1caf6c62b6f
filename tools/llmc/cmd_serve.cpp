//===- cmd_serve.cpp - llmc serve PLAN: the OpenAI-compatible server ------===//
//
// Sets up what runtime/serve needs (the engine, the chat template, the
// limits requests are checked against), prints one line when it is ready,
// and shuts down gracefully on SIGINT/SIGTERM: new requests get 503, the
// ones in flight finish (bounded), then the process exits 0. A second
// signal stops at once.
//
//===----------------------------------------------------------------------===//
#include "cli_util.h"
#include "commands.h"

#include "llmc/runtime/chat_template.h"
#include "llmc/runtime/server.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <pthread.h>
#include <thread>

namespace llmc::cli {

Action addServe(CLI::App &app) {
  struct Options {
    std::string plan, modelName, chatTemplate,
        logLevel = "info", maxBodySize = "4MiB",
        reasoningField = "reasoning_content";
    bool strictObjects = false;
    ServerOptions server;
    EngineFlags engine;
    ServingFlags serving;
    SpeculativeFlags spec;
  };
  auto o = std::make_shared<Options>();
  app.add_option("PLAN", o->plan, "A plan written by llmc compile")->required();
  app.add_option("--host", o->server.host,
                 "Address to listen on (default 127.0.0.1)");
  app.add_option("--port", o->server.port,
                 "Port (default 8000; 0 picks a free one)");
  app.add_option("--served-model-name", o->modelName,
                 "The model name clients send (default: the plan's file "
                 "name without .plan)");
  app.add_option("--api-key", o->server.apiKey,
                 "Require 'Authorization: Bearer KEY' on /v1/*");
  app.add_option("--max-queue", o->server.maxQueue,
                 "Requests that may wait for the engine; more get 503 "
                 "(default 256)");
  app.add_option("--max-body-size", o->maxBodySize,
                 "Largest request body; larger ones get 413 (default 4MiB)");
  app.add_option("--chat-template", o->chatTemplate,
                 "A .jinja chat template to use instead of the plan's");
  app.add_flag(
      "--no-ui", [o](int64_t) { o->server.ui = false; },
      "Do not serve the chat page at /");
  app.add_option("--reasoning-field", o->reasoningField,
                 "Where a reply's reasoning goes: reasoning_content "
                 "(default), reasoning (vLLM's newer name) or both")
      ->check(CLI::IsMember({"reasoning_content", "reasoning", "both"}));
  app.add_flag("--disable-additional-properties", o->strictObjects,
               "JSON Schema objects that list properties but have no "
               "additionalProperties take only the listed keys (OpenAI's "
               "strict mode); a request's disable_additional_properties "
               "overrides it. Default: other keys allowed, as JSON Schema "
               "says");
  app.add_option("--log-level", o->logLevel,
                 "info (default: one line per request), warn, error")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  addEngineFlags(app, o->engine);
  addServingFlags(app, o->serving);
  addSpeculativeFlags(app, o->spec);
  return [o]() -> int {
    if (o->server.port < 0 || o->server.port > 65535)
      throw Error("--port must be in [0, 65535], got " +
                  std::to_string(o->server.port));
    if (o->server.maxQueue < 1)
      throw Error("--max-queue must be at least 1");
    o->server.maxBodyBytes =
        static_cast<size_t>(parseBytes(o->maxBodySize, "--max-body-size"));
    // Signals go to one thread, which shuts the server down; they are
    // blocked before any thread (OpenMP's included) exists, so no other
    // thread takes them. A shell may start us with SIGINT ignored (a
    // background job): take it back. A write to a closed connection is an
    // error, not SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    const std::string name =
        o->modelName.empty() ? std::filesystem::path(o->plan).stem().string()
                             : o->modelName;
    SchedulerOptions so = o->serving.schedulerOptions();

    // The port answers while the model loads: /health says 503 "loading".
    ServeMetrics metrics(name);
    Server server(metrics, so.maxNumSeqs, o->server);
    const int port = server.bind();
    std::thread listener([&server] { server.listen(); });
    struct StopListening { // on an error while loading
      Server &server;
      std::thread &listener;
      ~StopListening() {
        if (listener.joinable()) {
          server.shutdown();
          listener.join();
        }
      }
    } stopListening{server, listener};

    OpenedPlan opened = openPlan(o->plan);
    const Plan &plan = *opened.plan;
    std::unique_ptr<Engine> engine =
        opened.engine(o->engine, o->serving.engineOptions());
    Speculation spec =
        makeSpeculation(o->spec, opened, *engine, o->engine, so.maxNumSeqs);
    so.proposer = spec.get();
    so.speculative = spec.options;

    std::unique_ptr<ChatTemplate> chat;
    if (opened.tokenizer) {
      std::string source = plan.tokenizer().chatTemplate, origin = o->plan;
      if (!o->chatTemplate.empty()) {
        source = readFile(o->chatTemplate);
        origin = o->chatTemplate;
      }
      if (!source.empty())
        chat =
            std::make_unique<ChatTemplate>(source, origin, *opened.tokenizer);
    } else if (!o->chatTemplate.empty()) {
      throw Error(o->plan + ": the plan has no tokenizer, which "
                            "--chat-template needs");
    }
    api::ModelInfo model;
    model.name = name;
    model.contextLength = engine->contextLength();
    model.vocabSize = engine->vocabSize();
    model.maxNumSeqs = so.maxNumSeqs;
    model.eosIds = plan.config().eosTokenIds;
    model.chatEosIds = chat ? chat->eosIds(model.eosIds) : model.eosIds;
    model.tokenizer = opened.tokenizer.get();
    model.chatTemplate = chat.get();
    if (chat && opened.tokenizer)
      model.harmony =
          text::HarmonyReply::forTemplate(*opened.tokenizer, chat->source());
    // The special tokens a tool call's grammar writes.
    std::vector<std::string> markers;
    if (model.harmony)
      markers = text::HarmonyReply::markerTexts();
    else if (chat)
      markers = chat->format().markers();
    if (opened.tokenizer)
      model.grammars = &opened.grammars("response_format", markers);
    model.strictObjects = o->strictObjects;
    model.reasoningField = o->reasoningField == "reasoning"
                               ? api::ModelInfo::ReasoningField::Reasoning
                           : o->reasoningField == "both"
                               ? api::ModelInfo::ReasoningField::Both
                               : api::ModelInfo::ReasoningField::Content;

    metrics.setCacheConfig(llmc_kv_dtype_name(engine->kvDtype()),
                           engine->blockSize(), engine->numBlocks());
    EngineLoop loop(*engine, opened.tokenizer.get(), so, o->server.maxQueue,
                    metrics);
    loop.setLogRequests(o->logLevel == "info" || o->logLevel == "debug");
    server.ready(loop, model);
    if (o->logLevel != "error")
      std::fprintf(
          stderr,
          "llmc serve: model '%s' on the %s backend, context %lld, "
          "KV cache %d blocks of %d tokens in %s (%s), "
          "--max-num-seqs "
          "%d, --max-num-batched-tokens %d, chat %s\n",
          model.name.c_str(), engine->backendName().c_str(),
          static_cast<long long>(model.contextLength), engine->numBlocks(),
          engine->blockSize(), llmc_kv_dtype_name(engine->kvDtype()),
          engine->kvPoolOrigin().c_str(), so.maxNumSeqs, so.maxNumBatchedTokens,
          chat ? "template loaded" : "not available (no template)");
    if (o->logLevel != "error")
      std::fputs(cli::slidingPoolText(*engine).c_str(), stderr);

    std::thread signalThread([&server, &loop, signals] {
      int sig = 0;
      sigwait(&signals, &sig);
      std::fprintf(stderr, "llmc serve: %s: finishing the requests in flight\n",
                   sig == SIGINT ? "SIGINT" : "SIGTERM");
      std::thread second([&loop, signals] {
        int again = 0;
        sigwait(&signals, &again);
        std::fprintf(stderr, "llmc serve: second signal: aborting\n");
        loop.abortAll();
      });
      second.detach();
      server.shutdown();
    });
    signalThread.detach();

    std::printf("llmc serve: listening on http://%s:%d\n",
                o->server.host.c_str(), port);
    std::fflush(stdout);
    listener.join();
    loop.abortAll();
    loop.stop();
    engine->checkIdle();
    if (o->logLevel != "error")
      std::fprintf(stderr, "llmc serve: stopped\n");
    return 0;
  };
}

} // namespace llmc::cli
