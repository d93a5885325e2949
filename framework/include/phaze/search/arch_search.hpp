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
// A RemoteEvaluator (the MPI coordinator, framework/host/cluster) takes configs from the same queue
// as the local threads and evaluates them in other processes; the consumer is unchanged, so a
// distributed search explores exactly the configs a local one does and gets the same results.
//
// Pruning (exhaustive mode, `prune`): each config is handed out with the incumbent — the best exact
// throughput of every model and the best common score among the configs finished so far — and the
// evaluator skips the exact evaluation of every model whose upper bound cannot beat it, when the
// bounds' common score cannot beat the incumbent's either (strictly: a tie is evaluated, so
// tie-breaks are unchanged; search_context.hpp). With kWinners configs go by decreasing area (the largest, usually the
// best, first), and the winners per model and common are exactly those of evaluating everything.
// With kPareto they go by increasing area, so the incumbent only ever holds configs of no larger
// area: a pruned config is dominated in (area, throughput), for every model and the common score,
// so the Pareto fronts are exact as well as the winners. Which configs are pruned depends on
// which had finished when a config was handed out, so with more than one thread (or process) the
// pruned set — never the winners or fronts — may differ between runs. `explored` holds every
// visited config in decreasing-area order, pruned ones with their bounds (ConfigEvaluation).
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


// What a config must beat to be worth evaluating exactly: per model the best exact throughput, and
// the best common score, of the configs that count (header comment). Empty: evaluate everything.
// Scores are search.objective's values (ModelEvaluation::score): samples/s by default.
struct Incumbent {
  std::vector<double> throughputs;  // per model score, in the run's model order
  double score = 0;
};

// What upper bounds (per model, and their common score) settle against `incumbent`: the common
// score when its bound is below the incumbent's, and then each model whose bound is below its
// incumbent, "below" by more than kBoundSlack of the incumbent (a tie is evaluated, so
// tie-breaks stay those of evaluating everything). The slack is for ties: a bound is summed in
// another order than the evaluation it bounds, so a config exactly as good as the incumbent can
// be bounded an ulp or two under it (a config of four equal ones was pruned so, and the search
// kept another winner than the exhaustive one). Nothing is settled while the incumbent lacks a
// throughput per model.
inline constexpr double kBoundSlack = 1e-9;
struct PruneDecision {
  bool score = false;
  std::vector<char> models;  // per model: settled (pruned)
  bool All() const;          // the score and every model
};
PruneDecision DecidePruning(const std::vector<double>& model_bounds, double score_bound,
                            const Incumbent& incumbent);

// Why a config's common score was not computed: upper bounds (ModelEvaluator::UpperBound) whose
// common score the incumbent's beats. The models whose own bound the incumbent beats are pruned
// too (ModelEvaluation::pruned); the others were evaluated exactly.
struct PruneRecord {
  int tier = 1;  // the bounds used: 1 compute; 2 compute, then the DP on lower-bound makespans
  std::vector<double> model_bounds;  // samples/s, per model
  double score_bound = 0;
  Incumbent incumbent;
  // > 0: the bounds of the config's family (search_context.hpp), which has this many configs,
  // settled it; 0: its own.
  int family = 0;
};

// What an evaluation returns for one config: per-model results and the config's score (0 when
// infeasible or pruned).
struct ConfigEvaluation {
  std::vector<ModelEvaluation> models;
  double score = 0;
  double seconds = 0;  // wall time (not reproducible)
  std::optional<PruneRecord> pruned;  // set: no score; pruned models hold only the reason

  // Every model pruned: nothing was evaluated exactly.
  bool FullyPruned() const;
  // The mean over the models of their winning plans' average power per device (W); 0 when a
  // model has no feasible plan. The x of the power–throughput front.
  double MeanPowerW() const {
    double sum = 0;
    for (const auto& m : models) {
      if (!m.best.feasible) return 0;
      sum += m.best.power_w;
    }
    return models.empty() ? 0 : sum / static_cast<double>(models.size());
  }
};

struct ExploredConfig {
  std::int64_t rank = 0;  // position in decreasing-area order
  ArchPoint point;
  std::int64_t bucket = 0;
  ConfigEvaluation evaluation;
};

struct ArchSearchOptions {
  bool exhaustive = false;
  PruneMode prune = PruneMode::kNone;  // exhaustive mode only
  std::int64_t hysteresis_level = 6;
  double bucket_width_mm2 = 0.01;
  std::int64_t max_configs = 0;  // 0 = no limit
  double max_seconds = 0;        // 0 = no limit
  int threads = 1;  // local evaluation threads; 0 is allowed when `remote` evaluates
  // Evaluates configs in other processes as well (null: none). Not owned.
  RemoteEvaluator* remote = nullptr;
  // Where local evaluations run, for error messages ("rank 0 (host node1)"); empty in a local run.
  std::string local_name;
  // Resuming (search_checkpoint.hpp): the results of the first configs of the visiting order, in
  // that order, as an earlier run of the same search finished them. They are taken as if just
  // evaluated (the incumbent, buckets and convergence follow them) and not evaluated again.
  std::vector<std::pair<std::int64_t, ConfigEvaluation>> resumed;
  // Called, on the calling thread, with every config finished and consumed in visiting order
  // (not the resumed ones): the checkpoint journal. May throw (the search then stops with that
  // error).
  std::function<void(std::int64_t index, const ConfigEvaluation&)> on_finished;
  // A config already evaluated exactly (SearchContext::SeedIncumbent), visited first: its result
  // is taken as if just evaluated (and handed to on_finished), so pruning starts from it. The
  // other configs follow in the usual order; `explored` and the buckets are in decreasing area
  // all the same. A resumed run's records start with it.
  std::optional<std::pair<std::int64_t, ConfigEvaluation>> seed;
};

// Why a search ended: it converged (hysteresis), visited everything, or a budget or a stop
// request ended it. kNone: not ended yet.
enum class StopReason { kNone, kConverged, kExhausted, kMaxConfigs, kMaxSeconds, kInterrupted };
// converged | exhausted | max_configs | max_seconds | interrupted
std::string_view ToString(StopReason reason);
// Whether the whole search ran (converged or exhausted), not a budget's or a stop's part of it.
inline bool Complete(StopReason reason) {
  return reason == StopReason::kConverged || reason == StopReason::kExhausted;
}

struct ArchSearchOutcome {
  std::vector<ExploredConfig> explored;  // in decreasing-area order
  std::int64_t pruned = 0;               // of those, how many were fully pruned (at which tier:)
  std::int64_t pruned_by_compute_bound = 0, pruned_by_placement_bound = 0;
  std::int64_t pruned_by_family = 0;     // of those, by their family's bounds
  std::int64_t partially_pruned = 0;     // no score; some models evaluated exactly
  StopReason stop_reason = StopReason::kNone;
  std::int64_t candidates = 0;  // configs in the space
  std::int64_t buckets_done = 0;
  std::vector<double> bucket_best;  // best (exact) score per finished bucket, decreasing area
};

// The convergence test: at least `level` bucket maxima, the last `level` non-increasing, and some
// maximum > 0.
bool HysteresisConverged(const std::vector<double>& bucket_best, std::int64_t level);

std::int64_t AreaBucket(double area_um2, double bucket_width_mm2);

// `incumbent` null: evaluate exactly.
using ConfigEvaluator = std::function<ConfigEvaluation(const ArchPoint&, const Incumbent*)>;

// One config to evaluate: its index in the search's config list, and the incumbent it must beat
// (none: evaluate it exactly).
struct SearchTask {
  std::int64_t index = 0;
  std::optional<Incumbent> incumbent;
};

// The search's queue of configs, as a RemoteEvaluator sees it. Thread-safe.
class WorkSource {
 public:
  virtual ~WorkSource() = default;
  // The next config to evaluate; nullopt when no more will be handed out (end of the list,
  // convergence, budget, stop, abort) — from then on always nullopt.
  virtual std::optional<SearchTask> Take() = 0;
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
