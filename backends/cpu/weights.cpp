//===- weights.cpp - Small weights as owned f32 vectors -------------------===//
#include "cpu.h"

#include <omp.h>

namespace llmc::cpu {

std::vector<float> toF32(const llmc_weight_desc &w, int64_t count) {
  std::vector<float> out(static_cast<size_t>(count));
  common::loadWeight(w, 0, count, out.data());
  return out;
}

int ompThreads() { return omp_get_max_threads(); }

} // namespace llmc::cpu
