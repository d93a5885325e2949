// The per-layer scheduler (DESIGN §5, the paper's §4 and Appendix A): the minimum-makespan schedule
// of one layer slice's ops on one accelerator's tensor, vector and fused (paired) cores, choosing
// per op one core or intra-op parallelism over all cores, via the paper's ILP on any SolverBackend.
//
// Solve() runs, per problem:
//  1. presolve — y_i = 0 where ℓ̂_i ≥ ℓ_i; ops comparable to every other op split the DAG into
//     segments that run one after another, so their makespans add (forward layers are mostly such
//     chains);
//  2. per segment, the exact fast paths: a chain (no two ops may overlap) is Σ min(ℓ_i, ℓ̂_i); a
//     heuristic list schedule whose makespan meets a lower bound is optimal;
//     and, once the heuristic is improved by local search, a schedule within the requested
//     relative gap of the lower bound is returned as the solver would (status optimal, gap set);
//     still outside the gap, the schedule search (schedule_search.hpp) on the mode bound's
//     leaves proves the gap or finds a shorter schedule (path "search") — except that a segment
//     within 1.5 gaps of its bound tries the ILP (3.) first, and goes on to the search only if
//     that ILP leaves the gap open, and to the ILP again only if the search found a shorter
//     schedule (the search would spend its whole budget on the last tenths of a percent that
//     the ILP closes in a few nodes);
//  3. otherwise the ILP, built with times scaled so the serial length is 1000 (solver tolerances
//     are absolute), strengthened by the heuristic (MIP start, T ≤ its makespan, big-M = its
//     makespan rather than the serial length — both exact, as an optimum never exceeds it), path
//     cuts and per-class work bounds; then the lazy resource loop of Appendix A: solve without
//     core-assignment variables, replay the schedule, add z rows only for a core class whose cores
//     were oversubscribed, re-solve (at most three solves).
// Every strengthening can be switched off (SchedulerOptions) and the tests check each leaves the
// optimum unchanged. Segment schedules are memoised by content (classes, latencies, edges, clamped
// core counts; schedule_cache.hpp), so the repeated blocks of a model, the same layer on configs
// that differ only in what the layer does not use, and repeated runs solve once. Solve() is
// thread-safe; one Scheduler serves a whole search.
#pragma once

#include <memory>
#include <string>

#include "phaze/ilp/ilp_model.hpp"
#include "phaze/ilp/solver_backend.hpp"
#include "phaze/core/deadline.hpp"
#include "phaze/schedule/precedence.hpp"
#include "phaze/schedule/schedule_cache.hpp"
#include "phaze/schedule/schedule_problem.hpp"

namespace phaze {

struct SchedulerOptions {
  SolveOptions solve;  // relative gap 1e-4 by default; the time limit bounds each segment's
                       // local search, schedule search and ILP together (see SolveSegment)
  bool presolve = true;         // dominated modes fixed, segments split at articulation ops
  bool fast_paths = true;       // chain and heuristic-meets-bound answers without the solver
  bool heuristic_start = true;  // MIP start, T ≤ heuristic makespan, big-M = that makespan
  int improvement_evaluations = 20000;  // local search on the list schedule before the ILP,
  int improvement_rounds = 4;            // in up to this many rounds while they improve it
  // Then, if still not within the gap, the schedule search (schedule_search.hpp) under the mode
  // bound's choices of modes, with this many nodes in all (0: none) — about 1 µs each.
  long search_nodes = 500000;
  bool path_cuts = true;  // T ≥ Σ_{i∈P} p_i + Σ_{j∉P} ℓ̂_j·y_j per source-sink path P
  int max_path_cuts = 2000;  // beyond: one longest path through each op instead
  bool work_bounds = true;  // T ≥ Σ_j ℓ̂_j·y_j + Σ_{i∈class} (1−y_i)·ℓ_i / cores of the class
  bool transitivity_rows = false;  // x_ik ≥ x_ij + x_jk − 1 for triples with an incomparable pair
  bool symmetry_breaking = true;  // k-th op of a class on a core ≤ k (identical cores only)
  // A segment with more ops than this (0: no limit) keeps its list schedule and lower bound,
  // status "feasible" with the reason: the local search, schedule search and ILP grow
  // quadratically or worse with the ops. Transformer layers have tens of ops per segment.
  int max_exact_ops = 256;
  // An ILP with more variables than this (0: no limit) is not solved: the segment keeps the
  // schedule and bound it has, status "feasible" with the reason. Measured (2026-12-02): the
  // transformer layers' ILPs have at most 538 variables (2,280 solved by the CTest suite, 179 by
  // default.yaml's search; at most 1.2 s each); a layer with many parallel branches (a mixture
  // of experts with several experts a device) builds larger ones, and the 20 of 1,037–5,201
  // variables met (Mixtral 8x7B, a 64-expert model) each ran 4–93 s to the 100-node limit
  // without improving the schedule or the bound once. CBC cannot stop inside its first LP
  // (coin-or/Cbc#514) either.
  int max_ilp_variables = 1000;
  bool cache = true;  // segment schedules memoised by content (schedule_cache.hpp)
  std::int64_t cache_bytes = std::int64_t{128} << 20;  // the memo's memory budget
  std::string dump_dir;  // when set, every ILP solved is written there as CPLEX LP
};

class Scheduler {
 public:
  // `backend` may be null: then only fast paths answer, and a problem that needs the ILP throws.
  explicit Scheduler(std::shared_ptr<const SolverBackend> backend, SchedulerOptions options = {});

  // Throws InvalidArgumentError when the problem is invalid (ScheduleProblem::Validate, cycles).
  // A solver that stops at a limit or fails yields its best schedule (at worst the heuristic one)
  // with the status, gap and detail in the statistics — never an exception.
  ScheduleResult Solve(const ScheduleProblem& problem) const;

  // The ILP for one whole problem (no presolve split), with z rows for the classes asked for — for
  // `phaze schedule --dump-ilp` and tests. Times are scaled by `*scale` (set on return).
  IlpModel BuildModel(const ScheduleProblem& problem, bool tensor_z, bool vector_z,
                      double* scale = nullptr) const;

  // A lower bound on the makespan Solve would return, without solving: per segment, the makespan
  // of a schedule already solved (the memo), else a mode bound with few branchings (no list
  // schedule, no search, no ILP). Cheap: the search's bound pass prunes configs with it.
  double LowerBound(const ScheduleProblem& problem) const;

  const SchedulerOptions& Options() const { return options_; }
  // Of the segment memo.
  std::int64_t CacheHits() const;
  std::int64_t CacheMisses() const;
  ScheduleCacheStats CacheStats() const;

 private:
  ScheduleResult SolveSegment(const ScheduleProblem& segment, int index) const;
  ScheduleResult SolveIlp(const ScheduleProblem& segment, const Precedence& precedence,
                          ScheduleResult heuristic, double lower_bound, int index,
                          const Deadline& deadline) const;

  std::shared_ptr<const SolverBackend> backend_;
  SchedulerOptions options_;
  std::shared_ptr<ScheduleCache> cache_;
};

}  // namespace phaze
