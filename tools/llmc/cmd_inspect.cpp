//===- cmd_inspect.cpp - llmc inspect PLAN
//---------------------------------===//

#include "commands.h"
#include "llmc/runtime/plan.h"
#include "llmc/runtime/plan_info.h"

#include <cstdio>

namespace llmc::cli {

Action addInspect(CLI::App &app) {
  struct Options {
    std::string plan, weight;
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
  return [o]() -> int {
    PlanLoadOptions lo;
    lo.verifyWeights = o->checksum;
    auto plan = Plan::load(o->plan, lo);
    std::string text = o->weight.empty() ? describePlan(*plan, o->json)
                                         : describeWeight(*plan, o->weight);
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (!text.empty() && text.back() != '\n')
      std::printf("\n");
    return 0;
  };
}

} // namespace llmc::cli
