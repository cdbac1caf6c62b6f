//===- sliding_layers.cpp - Which layers need only their window -----------===//
#include "llmc/runtime/sliding_layers.h"

#include <algorithm>

namespace llmc {

int64_t SlidingLayers::count() const {
  return std::count(layers.begin(), layers.end(), uint8_t(1));
}

SlidingLayers slidingLayers(const Plan &plan, int64_t context) {
  SlidingLayers s;
  s.layers.assign(static_cast<size_t>(plan.config().numLayers), 0);
  const Graph *g = plan.graph("prefill");
  if (!g)
    return s;
  for (const llmc_op_desc &op : g->ops) {
    if (op.kind != LLMC_OP_PREFILL_ATTENTION)
      continue;
    const int64_t layer = op.i[0], window = op.i[4];
    if (layer < 0 || layer >= static_cast<int64_t>(s.layers.size()) ||
        window <= 0 || window >= context)
      continue;
    s.layers[static_cast<size_t>(layer)] = 1;
    s.window = std::max(s.window, window);
  }
  return s;
}

} // namespace llmc
