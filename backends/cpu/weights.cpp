//===- weights.cpp - Small weights as owned f32 vectors -------------------===//
#include "cpu.h"

#include <omp.h>

namespace llmc::cpu {

std::vector<float> toF32(const llmc_weight_desc &w, int64_t count) {
  std::vector<float> out(static_cast<size_t>(count));
  common::loadWeight(w, 0, count, out.data());
  return out;
}

std::vector<float> attentionSinks(const llmc_op_desc &op, const Graph &g) {
  if (op.num_operands < 2)
    return {};
  return toF32(g.weights[op.operands[1].index], op.i[1]);
}

int ompThreads() { return omp_get_max_threads(); }

} // namespace llmc::cpu
