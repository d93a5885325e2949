// The architecture search loop (DESIGN §7, the paper's Algorithm 1): configs in decreasing area,
// grouped into area buckets of `bucket_width_mm2` (bucket = ⌊area / width⌋); when a bucket is done,
// the search converges if the best scores of the last `hysteresis_level` buckets are non-increasing
// (each ≥ the next). Unlike the reference, convergence is only declared once some config was
// feasible (score > 0): a run of infeasible large configs does not end the search. Exhaustive mode
// visits every config. A budget (max configs — reproducible — or max seconds — not) and a stop
// flag (Ctrl-C) end the search early with everything evaluated so far.
//
// Configs are evaluated by `threads` workers that take them in order; results are consumed in order
// by the calling thread, which alone decides convergence, so the explored set and every result are
// the same for any thread count (evaluations past the convergence point are discarded). An
// exception from an evaluation stops the search and is rethrown as phaze::Error naming the config.
//
// A RemoteEvaluator (the MPI coordinator, framework/cluster) takes configs from the same queue as
// the local threads and evaluates them in other processes; the consumer is unchanged, so a
// distributed search explores exactly the configs a local one does and gets the same results.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "phaze/arch/arch_space.hpp"
#include "phaze/core/progress.hpp"
#include "phaze/search/model_evaluator.hpp"

namespace phaze {

class RemoteEvaluator;

struct ArchSearchOptions {
  bool exhaustive = false;
  std::int64_t hysteresis_level = 6;
  double bucket_width_mm2 = 0.01;
  std::int64_t max_configs = 0;  // 0 = no limit
  double max_seconds = 0;        // 0 = no limit
  int threads = 1;  // local evaluation threads; 0 is allowed when `remote` evaluates
  // Evaluates configs in other processes as well (null: none). Not owned.
  RemoteEvaluator* remote = nullptr;
  // Where local evaluations run, for error messages ("rank 0 (host node1)"); empty in a local run.
  std::string local_name;
};

// What an evaluation returns for one config: per-model results and the config's score (0 when
// infeasible).
struct ConfigEvaluation {
  std::vector<ModelEvaluation> models;
  double score = 0;
  double seconds = 0;  // wall time (not reproducible)
};

struct ExploredConfig {
  std::int64_t rank = 0;  // position in decreasing-area order
  ArchPoint point;
  std::int64_t bucket = 0;
  ConfigEvaluation evaluation;
};

struct ArchSearchOutcome {
  std::vector<ExploredConfig> explored;  // in decreasing-area order
  // "converged", "exhausted" (every config visited), "max_configs", "max_seconds", "interrupted"
  std::string stop_reason;
  std::int64_t candidates = 0;  // configs in the space
  std::int64_t buckets_done = 0;
  std::vector<double> bucket_best;  // best score per finished bucket, in visiting order
};

// The convergence test: at least `level` bucket maxima, the last `level` non-increasing, and some
// maximum > 0.
bool HysteresisConverged(const std::vector<double>& bucket_best, std::int64_t level);

std::int64_t AreaBucket(double area_um2, double bucket_width_mm2);

using ConfigEvaluator = std::function<ConfigEvaluation(const ArchPoint&)>;

// The search's queue of configs, as a RemoteEvaluator sees it. Thread-safe.
class WorkSource {
 public:
  virtual ~WorkSource() = default;
  // The index (into the search's config list) of the next config to evaluate; nullopt when no
  // more will be handed out (end of the list, convergence, budget, stop, abort) — from then on
  // always nullopt.
  virtual std::optional<std::int64_t> Take() = 0;
  // Whether Take would give nullopt (without taking anything).
  virtual bool Closed() = 0;
  // Reports the result of a taken config (its `seconds` as measured where it ran).
  virtual void Done(std::int64_t index, ConfigEvaluation result) = 0;
  // Reports that evaluating a taken config threw; `where` names the process ("rank 2 (host node7)").
  virtual void Failed(std::int64_t index, const std::string& where, const std::string& message) = 0;
  // Stops the whole search with this error (e.g. a process that could not start).
  virtual void Abort(const std::string& message) = 0;
};

// Evaluates configs somewhere else. RunArchSearch calls Serve on a thread of its own.
class RemoteEvaluator {
 public:
  virtual ~RemoteEvaluator() = default;
  // Takes configs from `work` while it has capacity, reports every one it took, and returns once
  // Take gave nullopt and every taken config was reported. May throw (the search then stops with
  // that error).
  virtual void Serve(WorkSource& work) = 0;
};

ArchSearchOutcome RunArchSearch(const std::vector<ArchPoint>& configs,
                                const ArchSearchOptions& options, const ConfigEvaluator& evaluate,
                                ProgressSink& progress, const std::atomic<bool>* stop = nullptr);

}  // namespace phaze
