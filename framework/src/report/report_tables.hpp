// What the search's outputs share (results.json, report.md, explored.csv, the terminal summary):
// short texts of a plan and an architecture, the explored Pareto fronts and the speed-up table.
// Internal to framework/src/report/.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "phaze/search/search_driver.hpp"

namespace phaze::report {

// "{p 4, d 8, t 2 megatron}" (the strategy named when t > 1), or "infeasible".
std::string PlanText(const PlanChoice& c);
// "256×32×32 TC, 64×64 VC, GLB 16 MiB".
std::string ArchText(const ArchConfig& a);
// Geometric mean of the positive values (0 when none).
double GeoMean(const std::vector<double>& v);
// Whether the fronts are those of the whole space: every config visited, and evaluated or pruned
// as dominated (exhaustive mode with `prune: pareto` or `none`).
bool ParetoFrontsExact(const SearchResults& r);
// The explored configs on the throughput-vs-area front of `model` (−1: the common score).
std::vector<std::size_t> ExploredFront(const SearchResults& r, int model);
// The explored configs on the throughput-vs-power front of `model` (−1: the common score against
// the mean power of the models' plans).
std::vector<std::size_t> ExploredPowerFront(const SearchResults& r, int model);

// One column of the speed-up table: a label, the throughput per model and the speed-up over the
// reference per model (0 = none), and the geometric mean of those speed-ups.
struct Design {
  std::string label;
  std::vector<double> throughput;
  std::vector<double> speedup;
  double geomean = 0;
};
// The baselines (one column per preset kind and placement), Phaze per-model and Phaze common.
std::vector<Design> Designs(const SearchResults& r);

}  // namespace phaze::report
