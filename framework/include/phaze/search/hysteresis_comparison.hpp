// What the paper's hysteresis (arch_search.hpp, mode: hysteresis) would have found, beside the
// optimum an exhaustive search proved (search.compare_hysteresis): the gap between the two is
// itself a finding about the heuristic.
//
// Method: the hysteresis walk replayed over the exhaustive search's configs in decreasing-area
// order — the same buckets, the same convergence test (HysteresisConverged), the same winners
// (the highest score, ties to the earlier config) — needing, per bucket, only its best exact
// score. A config the exhaustive search evaluated exactly gives its scores. A pruned one is
// skipped when its upper bounds cannot change anything the walk keeps — its score bound is no
// higher than its bucket's best so far, and each model's bound no higher than that model's best
// so far (a later config loses ties); otherwise it is evaluated exactly now. So the replay
// visits exactly the configs, and finds exactly the winners and bucket maxima, of a hysteresis
// run, at the price of the few exact evaluations the bounds leave open.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "phaze/search/arch_search.hpp"

namespace phaze {

struct HysteresisComparison {
  std::int64_t level = 0;        // search.hysteresis_level
  bool converged = false;        // false: it would have visited every config
  std::int64_t visited = 0;      // configs the hysteresis run visits
  std::int64_t evaluated_now = 0;  // pruned configs the replay had to evaluate exactly
  // Its winners, as indices into ArchSearchOutcome::explored (−1: none feasible), and scores.
  int best_common = -1;
  double score = 0;
  std::vector<int> best_per_model;
  std::vector<double> model_scores;
};

// `outcome`: an exhaustive search's (every config, decreasing area). `evaluate` evaluates a
// config exactly (SearchContext::Evaluate without an incumbent).
HysteresisComparison CompareHysteresis(
    const ArchSearchOutcome& outcome, std::int64_t level, double bucket_width_mm2,
    const std::function<ConfigEvaluation(const ArchPoint&)>& evaluate);

}  // namespace phaze
