// Robustness of the recommendation (DESIGN §11): how the common winner and its speed-up move when
// each fitted technology parameter of the device model (DeviceTechnology: gemm_efficiency,
// memory_efficiency, kernel_overhead_s) is perturbed by ±10%. An architect needs to know whether
// the recommended chip is stable under the model's uncertainty.
//
// Method: the `candidates` best configs of the search by common score are evaluated again with the
// parameter scaled on every chip (its calibration, so presets with their own values scale too),
// as is the reference (the first of arch.presets, with the models' expert placements when given,
// else our DP). The winner under the perturbation is the best of those candidates; its speed-up
// is the geometric mean over models of throughput / reference throughput, as the report's
// "Phaze common" column. A candidate after the winner whose upper bounds cannot beat the best
// perturbed score so far is pruned rather than evaluated (it cannot be the perturbed winner).
// Configs outside the candidates are not re-ranked: a row says "changed"
// only when another of the candidates overtakes the winner.
// Only for the device model (`device`, `gpu`); a parameter the estimator's params: fix is skipped.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "phaze/core/progress.hpp"
#include "phaze/search/arch_search.hpp"
#include "phaze/search/search_context.hpp"

namespace phaze {

struct RobustnessRow {
  std::string parameter;
  double factor = 1;  // 0.9 or 1.1
  std::string winner;  // the common winner under the perturbation (an architecture name)
  bool winner_changed = false;
  double speedup = 0;  // of that winner over the perturbed reference (geomean over models)
};

struct RobustnessStudy {
  int candidates = 0;
  std::string winner;       // the unperturbed common winner
  double base_speedup = 0;  // its speed-up, as the rows compute it
  std::vector<RobustnessRow> rows;
  std::string skipped;  // why there is no study, or which parameters were left out
};

// `best_common`: index of the winner in outcome.explored (< 0: no study). `reference`: the
// unperturbed reference throughput of every model (SearchResults::ReferenceThroughput).
// `progress` counts the re-evaluations (phase "robustness"). `stop` set (Ctrl-C, SIGTERM) ends
// it after the evaluations under way, with no rows and `skipped` saying so.
RobustnessStudy StudyRobustness(const SearchContext& context, const ArchSearchOutcome& outcome,
                                int best_common, const std::vector<double>& reference,
                                int candidates, int threads, ProgressSink& progress,
                                const std::atomic<bool>* stop = nullptr);

}  // namespace phaze
