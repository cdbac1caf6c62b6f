//===- cmd_chat.cpp - llmc chat PLAN: interactive multi-turn chat
//----------===//
//
// Reads user lines from stdin (a terminal or a pipe), renders the whole
// conversation with the chat template each turn and streams the reply. The
// KV cache is kept across turns (runtime/include/llmc/runtime/chat.h), so a
// turn prefills only what the cache does not already hold; --stats shows
// how much was reused.
//
//===----------------------------------------------------------------------===//

#include "cli_util.h"
#include "commands.h"
#include "llmc/runtime/chat.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace llmc::cli {
namespace {

std::string joinIds(const std::vector<int64_t> &ids) {
  std::string s;
  for (int64_t id : ids)
    s += (s.empty() ? "" : ", ") + std::to_string(id);
  return s;
}

void printTurnStats(int turn, const ChatTurn &t,
                    const spec::SpeculativeOptions &spec) {
  const GenerationMetrics &m = t.result.metrics;
  std::fprintf(stderr,
               "[stats] turn %d: prefilled %lld tokens, reused %lld from "
               "cache (prompt %lld), generated %lld, TTFT %.2f ms, TPOT "
               "%.2f ms, finish %s\n",
               turn, static_cast<long long>(t.prefilled),
               static_cast<long long>(t.reused),
               static_cast<long long>(t.promptIds.size()),
               static_cast<long long>(m.generatedTokens), m.ttftSeconds * 1e3,
               m.tpotSeconds * 1e3, finishReasonName(t.result.finishReason));
  if (spec.enabled())
    std::fputs(("[stats] " + speculativeStatsText(m.speculative, spec)).c_str(),
               stderr);
}

} // namespace

Action addChat(CLI::App &app) {
  struct Options {
    std::string plan, system, chatTemplate;
    int64_t maxNewTokens = 256;
    EngineFlags engine;
    SpeculativeFlags spec;
    GrammarFlags grammar;
    bool stats = false, json = false;
    sample::SamplingParams sampling;
    std::vector<std::string> stops;
  };
  auto o = std::make_shared<Options>();
  o->sampling.temperature = 0.0f;
  app.add_option("PLAN", o->plan, "A plan written by llmc compile")->required();
  app.add_option("--system", o->system, "The system message");
  app.add_option("--chat-template", o->chatTemplate,
                 "A .jinja chat template to use instead of the plan's");
  app.add_option("--max-new-tokens", o->maxNewTokens,
                 "Tokens per reply at most");
  addEngineFlags(app, o->engine);
  addSamplingFlags(app, o->sampling);
  addSpeculativeFlags(app, o->spec);
  addGrammarFlags(app, o->grammar);
  app.add_option("--stop", o->stops, "End a reply at this text (repeatable)");
  app.add_flag("--stats", o->stats,
               "Per turn: tokens prefilled vs reused from the KV cache, "
               "TTFT, TPOT");
  app.add_flag("--json", o->json,
               "One JSON object per turn instead of streamed text");
  app.footer("Type a message per line. /reset clears the conversation, "
             "/exit (or end of input) quits.");
  return [o]() -> int {
    o->sampling.validate();
    OpenedPlan opened = openPlan(o->plan);
    const Plan *plan = opened.plan.get();
    const tok::Tokenizer *tokenizer = &opened.requireTokenizer("chat");
    std::string source, origin;
    if (!o->chatTemplate.empty()) {
      source = readFile(o->chatTemplate);
      origin = o->chatTemplate;
    } else {
      source = plan->tokenizer().chatTemplate;
      origin = o->plan + " (chat template)";
      if (source.empty())
        throw Error(o->plan +
                    ": the plan has no chat template (its checkpoint's "
                    "tokenizer_config.json had none); give one with "
                    "--chat-template FILE");
    }
    std::unique_ptr<Engine> enginePtr = opened.engine(o->engine);
    Engine &engine = *enginePtr;
    Speculation spec = makeSpeculation(o->spec, opened, engine, o->engine, 1);

    GenerateOptions go;
    go.proposer = spec.get();
    go.speculative = spec.options;
    go.maxNewTokens = o->maxNewTokens;
    go.sampling = o->sampling;
    go.stops = o->stops;
    go.eosIds = chatEosIds(plan->config().eosTokenIds, *tokenizer, source);
    go.grammar = makeGrammar(o->grammar, opened); // every reply
    ChatSession chat(engine, *tokenizer, source, origin, go, o->system);
    if (o->stats)
      std::fprintf(stderr, "[stats] backend %s, context %lld, eos ids: %s\n",
                   engine.backendName().c_str(),
                   static_cast<long long>(engine.contextLength()),
                   joinIds(go.eosIds).c_str());

    const bool tty = isatty(STDIN_FILENO);
    int turnNo = 0;
    std::string line;
    while (true) {
      if (tty && !o->json) {
        std::fputs("> ", stdout);
        std::fflush(stdout);
      }
      if (!std::getline(std::cin, line))
        break;
      if (!line.empty() && line.back() == '\r')
        line.pop_back();
      if (line == "/exit" || line == "/quit")
        break;
      if (line == "/reset") {
        chat.reset();
        turnNo = 0;
        if (!o->json)
          std::printf("(conversation cleared)\n");
        continue;
      }
      if (line.empty())
        continue;
      ChatTurn t;
      // Reasoning streams dimmed (or after "[reasoning] "), the answer on
      // a line of its own after it.
      bool reasoning = false;
      try {
        t = chat.send(
            line,
            [&](const std::string &s) {
              if (o->json)
                return;
              if (reasoning)
                std::fputs(tty ? "\x1b[0m\n" : "\n", stdout);
              reasoning = false;
              std::fwrite(s.data(), 1, s.size(), stdout);
              std::fflush(stdout);
            },
            [&](const std::string &s) {
              if (o->json)
                return;
              if (!reasoning)
                std::fputs(tty ? "\x1b[2m" : "[reasoning] ", stdout);
              reasoning = true;
              std::fwrite(s.data(), 1, s.size(), stdout);
              std::fflush(stdout);
            });
        if (reasoning && !o->json)
          std::fputs(tty ? "\x1b[0m" : "", stdout);
      } catch (const Error &e) {
        // The conversation outgrowing the window is recoverable with
        // /reset; a template that cannot render never is.
        std::string what = e.what();
        if (what.find("context length") == std::string::npos)
          throw;
        std::fprintf(stderr, "error: %s\n", e.what());
        continue;
      }
      ++turnNo;
      if (o->json) {
        nlohmann::json j = {
            {"turn", turnNo},
            {"prompt_ids", t.promptIds},
            {"output_ids", t.result.outputIds},
            {"text", t.result.text},
            {"content", t.content},
            {"reasoning", t.reasoning},
            {"finish_reason", finishReasonName(t.result.finishReason)},
            {"reused_tokens", t.reused},
            {"prefilled_tokens", t.prefilled},
            {"ttft_ms", t.result.metrics.ttftSeconds * 1e3},
            {"tpot_ms", t.result.metrics.tpotSeconds * 1e3}};
        std::printf("%s\n", j.dump(-1, ' ', false,
                                   nlohmann::json::error_handler_t::replace)
                                .c_str());
      } else {
        std::printf("\n");
      }
      std::fflush(stdout);
      if (o->stats)
        printTurnStats(turnNo, t, spec.options);
    }
    if (tty && !o->json)
      std::printf("\n");
    return 0;
  };
}

} // namespace llmc::cli
