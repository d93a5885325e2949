// The throughput-vs-area Pareto front of a set of configs: those no other config matches or beats
// in throughput with less area (or beats with the same area). Used by results.json, report.md and
// throughput-vs-area.svg.
#pragma once

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace phaze {

// Indices of the configs on the front, by increasing area (and throughput). Configs without a
// positive throughput are never on it; of identical (area, throughput) pairs the first is.
inline std::vector<std::size_t> ParetoFront(const std::vector<double>& area,
                                            const std::vector<double>& throughput) {
  std::vector<std::size_t> order(area.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return area[a] != area[b] ? area[a] < area[b] : throughput[a] > throughput[b];
  });
  std::vector<std::size_t> front;
  for (std::size_t i : order) {
    if (throughput[i] > 0 && (front.empty() || throughput[i] > throughput[front.back()])) {
      front.push_back(i);
    }
  }
  return front;
}

}  // namespace phaze
