// Heuristic schedules and lower bounds for the per-layer scheduling problem (DESIGN §5): they give
// the ILP its warm start, its objective cutoff and a tight big-M, and answer exactly — without the
// solver — whenever a heuristic schedule meets a lower bound.
//
// Serial schedule generation: ops are taken in a list order (topological); each starts as early as
// its predecessors, the cores it needs and the exclusivity of intra-op ops allow — either appended
// after the ops already placed, or back-filled into the first idle gap long enough (so an op late
// in the list can still use cores that appending would leave idle). A single-core op takes the
// core of its class free first (ties: an unpaired core, then a paired one whose partner finishes
// last, so pairs stay free for fused ops); a fused op the pair free first; an intra-op op needs
// every core idle for its whole duration.
#pragma once

#include <limits>
#include <vector>

#include "phaze/core/deadline.hpp"
#include "phaze/schedule/precedence.hpp"
#include "phaze/schedule/schedule_problem.hpp"

namespace phaze {

enum class ModeChoice : char { kSingle, kIntra, kEarliestFinish };

// {0, 1, …, count − 1}: the cores an intra-op op holds.
std::vector<int> AllCores(int count);

// A topological order taking, among the ready ops, the one of highest priority first (ties: the
// smallest index).
std::vector<int> PriorityOrder(const ScheduleProblem& problem, const Precedence& precedence,
                               const std::vector<double>& priority);

// One serial generation; `order` must be a topological order of all ops. kIntra on an op whose
// class cannot be intra-op (a link op) is treated as kSingle.
ScheduleResult GenerateSchedule(const ScheduleProblem& problem, const Precedence& precedence,
                                const std::vector<int>& order,
                                const std::vector<ModeChoice>& modes, bool backfill);

// The best of several priority rules (longest remaining path, topological) × mode rules (earliest
// finish, all fastest, all single) × appending or back-filling, improved by flipping single ops'
// modes while that helps. stats.path is "list-schedule". `thorough` false (a segment over the
// scheduler's budget): appending generations only, no flips — O(rules · (n log n + edges)).
ScheduleResult HeuristicSchedule(const ScheduleProblem& problem, const Precedence& precedence,
                                 bool thorough = true);

// Local search from `start` (a schedule of this problem) by simulated annealing over back-filled
// serial generations: moves an op to another place in the list (within its predecessors and
// successors), flips one or two ops' modes, or both, for `evaluations` generations or until a
// schedule no longer than `good_enough` is found. Pseudo-random from `seed`, so the result is
// deterministic. Returns the best schedule seen (never worse than `start`). Stops early at
// `deadline` (checked every 16 generations), with `*stopped` (optional) set.
ScheduleResult ImproveSchedule(const ScheduleProblem& problem, const Precedence& precedence,
                               const ScheduleResult& start, int evaluations,
                               double good_enough = 0, unsigned seed = 0,
                               const Deadline& deadline = {}, bool* stopped = nullptr);

// A lower bound on the makespan of every schedule: the minimum over the choices of the intra-op
// modes, found by best-first branch and bound over the ops' modes (an undecided op counts at its
// smallest duration and load), of the largest of: the longest path at the modes' durations; every
// all-cores op plus the longest path through the other core ops; per core class, the
// head-body-tail bound max over a, b of a + Σ_{i: head ≥ a, tail ≥ b} w_i + b, heads and tails
// being longest paths and w_i the time op i keeps the class's cores busy on average (ℓ_i / cores
// for a one-core op of the class, ℓ̂_i for an all-cores op of any class, which holds the whole
// chip); and, once every mode is decided, energetic reasoning, then (with `search_nodes`) the
// depth-first search of schedule_search.hpp over that choice of modes, up to `enough`.
struct LowerBoundOptions {
  // A known makespan: the bound stops there (no need to go higher).
  double upper = std::numeric_limits<double>::infinity();
  int max_nodes = 2000;  // mode branchings; beyond, a weaker but still valid bound
  // The bound the caller needs (e.g. `upper` less the gap it may keep): leaves below it are
  // searched, sharing `search_nodes` nodes among them (0: never).
  double enough = std::numeric_limits<double>::infinity();
  long search_nodes = 0;
};
// `better` (optional) receives a schedule shorter than `upper` if the search came across one.
double MakespanLowerBound(const ScheduleProblem& problem, const Precedence& precedence,
                          const LowerBoundOptions& options, ScheduleResult* better = nullptr);
inline double MakespanLowerBound(const ScheduleProblem& problem, const Precedence& precedence,
                                 double upper = std::numeric_limits<double>::infinity(),
                                 int max_nodes = 2000) {
  LowerBoundOptions options;
  options.upper = upper;
  options.max_nodes = max_nodes;
  return MakespanLowerBound(problem, precedence, options);
}

}  // namespace phaze
