//===- execute.h - Preparing and running a graph ---------------*- C++ -*-===//
#pragma once

#include "cpu.h"

#include <cstdlib>

namespace llmc::cpu {

struct AlignedFree {
  void operator()(void *p) const { std::free(p); }
};

/// Cache-line aligned f32 storage that only grows.
struct AlignedBuffer {
  std::unique_ptr<float, AlignedFree> data;
  size_t floats = 0;
  float *reserve(size_t n);
};

struct Prepared {
  Graph graph;
  std::vector<Kernel> kernels; // one per op; they own the packed weights
  AlignedBuffer workspace;
  std::vector<AlignedBuffer> separate; // graphs without a memory plan
};

void prepareGraph(Backend &b, const llmc_graph_desc &desc, Prepared &p);
void executeGraph(Prepared &p, KvCache *cache, const llmc_step_args &args);

} // namespace llmc::cpu
