//===- quantile.h - The q-quantile of samples, for the grammar benches ----===//
#pragma once

#include <algorithm>
#include <vector>

namespace llmc::bench {

/// The q-quantile (0 <= q <= 1) of `v`, nearest rank; 0 when empty.
inline double quantile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

} // namespace llmc::bench
