//===- cmd_inspect.cpp - llmc inspect PLAN
//---------------------------------===//

#include "cli_util.h"
#include "commands.h"
#include "llmc/runtime/plan.h"
#include "llmc/runtime/plan_info.h"

#include <cstdio>

namespace llmc::cli {

Action addInspect(CLI::App &app) {
  struct Options {
    std::string plan, weight, kvDtype, kvCacheMemory;
    int64_t context = 0;
    bool json = false, checksum = false;
  };
  auto o = std::make_shared<Options>();
  app.add_option("PLAN", o->plan, "A plan written by llmc compile")->required();
  CLI::Option *json = app.add_flag("--json", o->json, "Print JSON");
  app.add_flag("--verify,--verify-checksum", o->checksum,
               "Also hash every weight byte against the plan's checksum "
               "(loading checks the metadata only; this reads the whole "
               "file)");
  app.add_option("--weight", o->weight,
                 "Print one weight as stored: dtype, shape, mean, min, max "
                 "and its first values")
      ->excludes(json);
  app.add_option("--kv-dtype", o->kvDtype,
                 "Size the KV cache as a run with this --kv-dtype would");
  app.add_option("--context", o->context,
                 "Size the KV cache for this context length instead of the "
                 "plan's")
      ->check(CLI::PositiveNumber);
  app.add_option("--kv-cache-memory", o->kvCacheMemory,
                 "Also say how many tokens (and full contexts) fit in this "
                 "much KV memory, e.g. 4GiB");
  return [o]() -> int {
    DescribeOptions d;
    if (!o->kvDtype.empty())
      d.kvDtype = parseKvDtype(o->kvDtype, "--kv-dtype");
    if (!o->kvCacheMemory.empty())
      d.kvCacheBytes = parseBytes(o->kvCacheMemory, "--kv-cache-memory");
    d.contextLength = o->context;
    PlanLoadOptions lo;
    lo.verifyWeights = o->checksum;
    auto plan = Plan::load(o->plan, lo);
    std::string text = o->weight.empty() ? describePlan(*plan, o->json, d)
                                         : describeWeight(*plan, o->weight);
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (!text.empty() && text.back() != '\n')
      std::printf("\n");
    return 0;
  };
}

} // namespace llmc::cli
