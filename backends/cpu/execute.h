//===- execute.h - Preparing and running a graph ---------------*- C++ -*-===//
#pragma once

#include "cpu.h"
#include "profile.h"

namespace llmc::cpu {

struct Prepared {
  Graph graph;
  std::vector<Kernel> kernels;     // one per op; they own the packed weights
  std::vector<std::string> labels; // per op, for the profile: kind (dtype)
  common::AlignedBuffer workspace;
};

/// backends/common's graph checks, then one Kernel per op.
void prepareGraph(Backend &b, const llmc_graph_desc &desc, Prepared &p);
/// backends/common's host step loop over the kernels; timed per op into
/// `profile` when one is given.
void executeGraph(Prepared &p, KvCache *cache, const llmc_step_args &args,
                  OpProfile *profile = nullptr);

} // namespace llmc::cpu
