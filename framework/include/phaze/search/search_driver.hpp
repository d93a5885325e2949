// The whole Phaze run (DESIGN §1, §7): prepares every model once and enumerates the architecture
// space by decreasing area (SearchContext), evaluates each config for every model in RunArchSearch
// (locally, and on other MPI ranks when given a RemoteEvaluator), picks
// the best config per model and in common, and evaluates the baselines — each baseline
// architecture (arch.presets for every model, a model's own `presets`) with our DP and with the
// model's expert placement. The first of arch.presets with expert placement (the paper's
// "TPUv4-expert") is the reference of every speed-up; without an expert placement, that preset
// with our DP.
//
// Common score of a config = the mean of its per-model best throughputs — arithmetic, weighted
// (by each model's `weight`) or geometric (search.mean) — and 0 when any model is infeasible on it.
// Winners: the highest score (per model: throughput); ties go to the earlier config (larger area).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "phaze/search/run_config.hpp"
#include "phaze/core/logger.hpp"
#include "phaze/core/progress.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/schedule/schedule_problem.hpp"
#include "phaze/search/arch_search.hpp"
#include "phaze/search/hysteresis_comparison.hpp"
#include "phaze/search/model_evaluator.hpp"
#include "phaze/search/robustness.hpp"
#include "phaze/search/search_context.hpp"

namespace phaze {

// A baseline's placement: the model's expert {p, d, t}, or the best our DP finds on the preset.
enum class BaselineKind { kExpert, kPhazeDp };
std::string_view ToString(BaselineKind kind);  // expert | phaze-dp

struct BaselineResult {
  std::string arch;      // preset name
  ArchConfig config;     // the preset as loaded
  std::string model;
  BaselineKind kind = BaselineKind::kPhazeDp;
  double area_mm2 = 0;
  PlanChoice plan;
};

// The winner's main layer schedule (for the Gantt chart): the largest unique layer's backward pass.
struct WinnerSchedule {
  std::string title;
  ScheduleProblem problem;
  ScheduleResult result;
};

struct SearchResults {
  RunConfig run;
  std::string space_name;
  double area_budget_mm2 = 0;
  std::vector<PreparedModel> models;  // graphs dropped after the search (names, figures kept)
  ArchSearchOutcome outcome;
  std::vector<int> best_per_model;  // index into outcome.explored; −1 when none is feasible
  int best_common = -1;
  std::vector<BaselineResult> baselines;
  std::optional<WinnerSchedule> winner_schedule;
  RobustnessStudy robustness;  // the common winner under ±10% technology parameters
  // What the hysteresis would have found (search.compare_hysteresis, exhaustive and complete).
  std::optional<HysteresisComparison> hysteresis;
  // Where pruning for the winners started from (SearchContext::SeedIncumbent).
  SearchContext::Seed seed;
  // Configs a resumed run read back from its checkpoint journal (more than outcome.explored
  // when a smaller search.max_configs than the run's reports only the first of them).
  std::int64_t resumed = 0;
  std::vector<PluginRecord> plugins;  // versions of what was used
  std::string solver_version;
  struct Timings {
    double prepare_s = 0, search_s = 0, baselines_s = 0, robustness_s = 0, total_s = 0;
    double hysteresis_s = 0;  // the hysteresis comparison's replay
    double seed_s = 0;        // SeedIncumbent (part of search_s)
    int processes = 1, threads = 1;  // how the search ran
  } timings;
  // Of this process's segment memo (under MPI each rank has its own; rank 0's is here).
  ScheduleCacheStats schedule_cache;

  bool AnyFeasible() const;
  // The reference throughput of `model` (first global preset, expert when given), 0 when unknown.
  double ReferenceThroughput(const std::string& model) const;
  // What that reference is, as the baselines are labelled: "tpuv4 expert" when the model gives
  // an expert placement, else "tpuv4 + Phaze DP"; "" without a preset.
  std::string ReferenceLabel(const std::string& model) const;
  // The label every model shares, else "per model" ("" without a preset or models).
  std::string CommonReferenceLabel() const;
};

struct SearchDriverOptions {
  int threads = 0;  // overrides search.threads when > 0
  const std::atomic<bool>* stop = nullptr;
  RemoteEvaluator* remote = nullptr;  // other processes evaluating configs (MPI), not owned
  std::string local_name;             // this process in error messages ("rank 0 (host node1)")
  int processes = 1;                  // MPI ranks taking part (for the timings)
  // The checkpoint journal (search_checkpoint.hpp), written at this path when not empty (every
  // search.checkpoint_seconds); with `resume`, the journal there is continued: the configs it
  // holds are not evaluated again.
  std::string checkpoint;
  bool resume = false;
};

// Runs the search on a context built beforehand (SearchContext: the models, the space, the
// evaluator; an MPI run needs it for its fingerprint). Throws Error when an evaluation fails.
SearchResults RunSearchDriver(const SearchContext& context, ProgressSink& progress,
                              const SearchDriverOptions& options = {});

}  // namespace phaze
