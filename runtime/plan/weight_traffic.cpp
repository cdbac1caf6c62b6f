//===- weight_traffic.cpp - Weight bytes a decode step reads --------------===//
#include "llmc/runtime/weight_traffic.h"

#include "llmc/support/error.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace llmc {

uint64_t WeightTraffic::decodeBytes(int64_t batch) const {
  if (experts <= 0 || expertBytes == 0)
    return denseBytes;
  const double share =
      batch <= 1 ? double(perToken) / double(experts)
                 : 1.0 - std::pow(1.0 - double(perToken) / double(experts),
                                  double(batch));
  return denseBytes + uint64_t(std::llround(double(expertBytes) * share));
}

WeightTraffic weightTraffic(const Plan &plan) {
  const Graph *g = plan.graph("decode");
  if (!g)
    throw Error(plan.path() + ": the plan has no 'decode' graph");
  std::set<uint32_t> full, lookupOnly, experts;
  WeightTraffic t;
  for (const llmc_op_desc &op : g->ops)
    for (uint32_t i = 0; i < op.num_operands; ++i) {
      if (op.operands[i].kind != LLMC_OPERAND_WEIGHT)
        continue;
      const uint32_t w = op.operands[i].index;
      if (op.kind == LLMC_OP_EMBEDDING && i == 0)
        lookupOnly.insert(w);
      else if (op.kind == LLMC_OP_EXPERT_LINEAR) {
        experts.insert(w);
        t.experts = std::max<int64_t>(t.experts, plan.weights().at(w).shape[0]);
        t.perToken = std::max<int64_t>(t.perToken, op.i[1]);
      } else
        full.insert(w);
    }
  const auto &weights = plan.weights();
  for (const WeightInfo &w : weights)
    t.planBytes += w.nbytes;
  for (uint32_t w : full)
    t.denseBytes += weights.at(w).nbytes;
  for (uint32_t w : experts)
    if (!full.count(w))
      t.expertBytes += weights.at(w).nbytes;
  for (uint32_t w : lookupOnly) {
    if (full.count(w))
      continue;
    const WeightInfo &info = weights.at(w);
    int64_t rows = info.shape.empty() ? 1 : std::max<int64_t>(1, info.shape[0]);
    t.denseBytes += info.nbytes / static_cast<uint64_t>(rows);
  }
  return t;
}

} // namespace llmc
