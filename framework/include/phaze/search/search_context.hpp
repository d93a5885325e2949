// What every process of a run builds the same way from the run config (DESIGN §7): the prepared
// models, the architecture space in decreasing-area order, the estimator, solver backend and
// ModelEvaluator, and the evaluation of one config for every model with its common score. The
// search driver (rank 0) and each MPI worker rank build one; configs are then named by their
// index in Configs(), and Fingerprint() lets rank 0 check that a worker sees the same list.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "phaze/arch/arch_space.hpp"
#include "phaze/search/run_config.hpp"
#include "phaze/core/logger.hpp"
#include "phaze/plugin/registry.hpp"
#include "phaze/search/arch_search.hpp"
#include "phaze/search/model_evaluator.hpp"

namespace phaze {

// The most evaluation threads a process starts: 4 per hardware thread, at least 64 (more only
// exhaust the system's threads; `--threads 100000` is clamped to it with a warning).
int MaxSearchThreads();

class SearchContext {
 public:
  // Throws ConfigError for bad models or spaces, PluginError for unknown components.
  SearchContext(const RunConfig& run, const Registry& registry, Logger& log);
  SearchContext(const SearchContext&) = delete;  // the evaluator refers to run_
  SearchContext& operator=(const SearchContext&) = delete;

  const RunConfig& Run() const { return run_; }
  const std::vector<PreparedModel>& Models() const { return models_; }
  const std::vector<ArchPoint>& Configs() const { return configs_; }  // decreasing area
  const std::string& SpaceName() const { return space_name_; }
  double AreaBudgetMm2() const { return area_budget_mm2_; }
  const Estimator& GetEstimator() const { return *estimator_; }
  const ModelEvaluator& Evaluator() const { return *evaluator_; }
  std::string SolverVersion() const;
  const std::vector<PluginRecord>& Plugins() const { return plugins_; }
  double PrepareSeconds() const { return prepare_s_; }  // wall time of the constructor

  // Evaluation threads of this process: `requested` when > 0, else search.threads, else (0) one
  // per hardware thread; never more than MaxSearchThreads().
  int SearchThreads(int requested) const;
  // Every model on `point` (our DP, no expert placement) and the common score (CommonScore).
  // With an `incumbent` (pruning, arch_search.hpp), bounds tier by tier, each model's the
  // smallest so far, until they settle every model: the compute, then the placement bound of the
  // config's family (below), then the config's own compute and placement bounds
  // (ModelEvaluator::UpperBound). When the common score of the bounds (the mean only grows with
  // each throughput) is below the incumbent's score, the config's score is not computed (`pruned`
  // holds the bounds and the tier) and only the models whose bound is not below their incumbent
  // are evaluated exactly — the others are marked pruned with the reason; when no model is left,
  // nothing is evaluated.
  //
  // A family is the configs of the space that share their tensor cores (num_tc, pe_x, pe_y) —
  // they differ in vector cores and buffers. Its bounds (ModelBound over all its configs) bound
  // every member, are computed once, by the first member that needs them, and then settle later
  // members against the incumbent of their time (which only grows) for the price of a lookup:
  // branch and bound over the space's own structure. Only a config of Configs() itself (by
  // address, as the search and MPI workers pass them) has a family: a changed copy (the
  // robustness study's perturbed chips) is bounded on its own.
  ConfigEvaluation Evaluate(const ArchPoint& point, const Incumbent* incumbent = nullptr) const;
  // A config to start a search pruning for the winners from (ArchSearchOptions::seed), on
  // `threads` threads: every family's compute bounds (which the search needs anyway, kept for
  // it), then the exact evaluation of the first config (the largest) of the family whose bounds
  // promise the best common score. The configs of larger area no longer have to be evaluated
  // exactly for want of an incumbent. Deterministic; config −1 when there is no family.
  struct Seed {
    std::int64_t config = -1;     // the config evaluated, an index into Configs()
    std::string arch;             // its name
    ConfigEvaluation evaluation;  // exact (no incumbent)
  };
  // A `stop` request ends the family bounds early: the seed is the best family's of those
  // bounded.
  Seed SeedIncumbent(int threads, ProgressSink& progress,
                     const std::atomic<bool>* stop = nullptr) const;
  // A digest of the models and the config list (names and areas, in order): equal in two
  // processes that will evaluate the same config for the same index.
  std::string Fingerprint() const;

 private:
  RunConfig run_;
  std::vector<PluginRecord> plugins_;
  std::vector<PreparedModel> models_;
  std::vector<double> weights_;
  std::string space_name_;
  double area_budget_mm2_ = 0;
  std::vector<ArchPoint> configs_;
  // The families of the configs (Evaluate); configs alone in theirs have none.
  struct Family {
    std::vector<ArchConfig> members;
    std::mutex mutex;                 // guards bounds
    std::vector<ModelBound> bounds;   // per model, made by the first member that needs them
    std::size_t first = 0;            // its first config in Configs()
    // bounds (made) under the family's mutex.
    std::vector<ModelBound>& Bounds(const ModelEvaluator& evaluator,
                                    const std::vector<PreparedModel>& models);
  };
  std::vector<std::unique_ptr<Family>> families_;
  std::vector<int> family_of_;  // per config: its family, −1 when alone
  std::shared_ptr<const Estimator> estimator_;
  std::shared_ptr<const SolverBackend> backend_;
  std::unique_ptr<ModelEvaluator> evaluator_;
  double prepare_s_ = 0;
};

// A score from per-model throughputs (0 when any is 0): their arithmetic, weighted or geometric
// mean (search.mean).
double CommonScore(const std::vector<double>& throughputs, const std::vector<double>& weights,
                   ScoreMean mean);

}  // namespace phaze
