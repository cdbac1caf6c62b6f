// libFuzzer target: any bytes must load or throw llmc::Error, nothing else.
// The checksum is skipped, or nearly every input would stop there and the
// structural checks behind it would never run.
#include "llmc/runtime/plan.h"
#include "llmc/runtime/plan_info.h"
#include "llmc/support/error.h"

#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // An 8-byte aligned copy, as a mapping would be.
  std::vector<uint64_t> storage((size + 7) / 8 + 1);
  if (size > 0)
    std::memcpy(storage.data(), data, size);
  try {
    llmc::PlanLoadOptions options;
    options.verifyChecksum = false;
    auto plan = llmc::Plan::loadFromMemory(
        reinterpret_cast<const uint8_t *>(storage.data()), size, "fuzz.plan",
        options);
    // Touch what the loader vouched for, so ASan checks its bounds.
    volatile uint8_t sink = 0;
    for (uint32_t i = 0; i < plan->weights().size(); ++i) {
      const uint8_t *p = plan->weightData(i);
      for (uint64_t k = 0; k < plan->weights()[i].nbytes; ++k)
        sink = sink ^ p[k];
    }
    for (const llmc::Graph &g : plan->graphs())
      (void)plan->graphDesc(g.name);
    (void)llmc::describePlan(*plan);
    (void)llmc::describePlan(*plan, true);
  } catch (const llmc::Error &) {
  }
  return 0;
}
