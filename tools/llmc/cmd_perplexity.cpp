//===- cmd_perplexity.cpp - llmc perplexity PLAN --file TEXT --------------===//
//
// Scores a text file with a plan: the quality number that tells a good
// quantization from a bad one, measured the way tools/demo-model/train.py
// measures it (see llmc/runtime/perplexity.h for the protocol).
//
//===----------------------------------------------------------------------===//

#include "cli_util.h"
#include "commands.h"
#include "llmc/runtime/perplexity.h"
#include "llmc/support/error.h"
#include "llmc/support/mapped_file.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace llmc::cli {

Action addPerplexity(CLI::App &app) {
  struct Options {
    std::string plan, file;
    int64_t context = 0, maxTokens = 0;
    EngineFlags engine;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  app.add_option("PLAN", o->plan, "A plan written by llmc compile")->required();
  app.add_option("--file", o->file, "UTF-8 text to score")->required();
  app.add_option("--ctx", o->context,
                 "Window length in tokens, BOS included (default: 512 or the "
                 "plan's context length if shorter)");
  app.add_option("--max-tokens", o->maxTokens,
                 "Score only the first N tokens of the file (default: all)");
  addEngineFlags(app, o->engine);
  app.add_flag("--json", o->json, "Print one JSON object");
  return [o]() -> int {
    if (o->context < 0 || o->context == 1)
      throw Error("--ctx must be at least 2 tokens, got " +
                  std::to_string(o->context));
    if (o->maxTokens < 0)
      throw Error("--max-tokens must not be negative, got " +
                  std::to_string(o->maxTokens));
    OpenedPlan opened = openPlan(o->plan);
    const Plan *plan = opened.plan.get();
    const tok::Tokenizer *tokenizer =
        &opened.requireTokenizer("encoding " + o->file);
    std::string text = readFile(o->file);
    std::vector<int32_t> tokens = tokenizer->encode(text, /*addSpecial=*/false);
    if (tokens.empty())
      throw Error(o->file + ": the file encodes to no tokens");
    if (o->maxTokens > 0 && static_cast<int64_t>(tokens.size()) > o->maxTokens)
      tokens.resize(static_cast<size_t>(o->maxTokens));

    int64_t planContext = plan->config().contextLength;
    int64_t context =
        o->context ? o->context : std::min<int64_t>(512, planContext);
    if (context > planContext)
      throw Error("--ctx " + std::to_string(context) +
                  " is longer than the plan's context length " +
                  std::to_string(planContext));

    EngineOptions eo;
    eo.contextLength = context;
    std::unique_ptr<Engine> enginePtr = opened.engine(o->engine, eo);
    Engine &engine = *enginePtr;

    bool progress = !o->json && isatty(STDERR_FILENO);
    PerplexityResult r =
        perplexity(engine, tokens, tokenizer->bos, context,
                   [progress](int64_t done, int64_t total) {
                     if (progress)
                       std::fprintf(stderr, "\rwindow %lld/%lld",
                                    (long long)done, (long long)total);
                   });
    if (progress)
      std::fprintf(stderr, "\n");
    double tokPerSec = r.seconds > 0 ? r.scored / r.seconds : 0;
    if (o->json) {
      nlohmann::json j = {
          {"plan", o->plan},
          {"file", o->file},
          {"backend", engine.backendName()},
          {"context", context},
          {"tokens", tokens.size()},
          {"scored", r.scored},
          {"windows", r.windows},
          {"mean_nll", r.meanNll},
          {"perplexity", r.perplexity},
          {"perplexity_std_error", r.perplexity * r.nllStdError},
          {"seconds", r.seconds}};
      std::printf("%s\n", j.dump(2).c_str());
      return 0;
    }
    std::printf("%s: %zu tokens, %lld windows of %lld (%s)\n", o->file.c_str(),
                tokens.size(), (long long)r.windows, (long long)context,
                engine.backendName().c_str());
    std::printf("perplexity %.4f +/- %.4f  (mean NLL %.5f nats/token over "
                "%lld tokens)  %.2f s, %.0f tokens/s\n",
                r.perplexity, r.perplexity * r.nllStdError, r.meanNll,
                (long long)r.scored, r.seconds, tokPerSec);
    return 0;
  };
}

} // namespace llmc::cli
