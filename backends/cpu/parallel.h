//===- parallel.h - Loops that open a parallel region only when it pays -*- C++
//-*-===//
//
// A kernel splits its loop over the OpenMP pool when the work is worth it.
// Called from inside a parallel region (the expert kernel runs one linear
// per (expert, tile) on each thread) it must run on the calling thread
// alone, and without opening a region at all: libgomp builds a team even
// for a serialized or if(false) region, a few microseconds each, which
// hundreds of expert tiles per decode step would pay.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <omp.h>

#include <cstdint>

namespace llmc::cpu {

/// Whether a kernel should open a parallel region for work that is `worth`
/// splitting: not inside one already, with more than one thread.
inline bool openRegion(bool worth) {
  return worth && !omp_in_parallel() && omp_get_max_threads() > 1;
}

/// body(i) for i in [0, n), statically split over the pool when
/// openRegion(worth).
template <typename Body>
void parallelFor(int64_t n, bool worth, const Body &body) {
  if (!openRegion(worth)) {
    for (int64_t i = 0; i < n; ++i)
      body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i)
    body(i);
}

} // namespace llmc::cpu
