// The paper's per-layer ILP (DESIGN §5; the paper's §4): the MILP the Scheduler solves
// for one segment of a layer's ops, and how its solution becomes an exact schedule. Internal to
// framework/src/schedule/ (scheduler.cpp drives it; its steps are listed in scheduler.hpp).
//
// Variables (the paper's numbering): per op a start t_i, a duration p_i = y_i·ℓ̂_i + (1 − y_i)·ℓ_i
// (4) with y_i = 1 when it runs intra-op parallel on all cores of its class; the makespan
// T ≥ t_i + p_i (3); precedence rows (7–9) from the direct edges; for incomparable pairs of core
// ops an order variable x_ij with big-M timing and intra-op exclusivity (5, 10, 11) and
// transitivity (6); then this project's additions — path cuts, work bounds per class — and, lazily,
// the core-assignment rows (12–18) for the classes the replay found oversubscribed. Times are
// scaled so the serial schedule lasts 1000 units.
#pragma once

#include <utility>
#include <vector>

#include "phaze/ilp/ilp_model.hpp"
#include "phaze/schedule/precedence.hpp"
#include "phaze/schedule/scheduler.hpp"

namespace phaze::paper_ilp {

// Whether an op's mode is fixed (it uses no cores, or with presolve intra-op parallelism cannot
// help it).
bool Fixed(const ScheduleOp& op, bool presolve);

struct IlpIndex {
  int makespan = -1;
  std::vector<int> t, p, y;
  std::vector<std::vector<int>> x;                         // x[i][j], −1 when comparable
  std::vector<std::vector<std::pair<int, int>>> ztc, zvc;  // per op: (core, variable)
};

struct IlpBuild {
  IlpModel model;
  IlpIndex index;
  double scale = 1;
  std::vector<double> start;  // MIP start (empty when none)
};

// The ILP of one segment; `heuristic` (optional) becomes its MIP start when it satisfies the rows.
// `tensor_z`/`vector_z`: whether core-assignment variables are built for that class.
IlpBuild BuildIlp(const ScheduleProblem& p, const Precedence& prec, const SchedulerOptions& o,
                  bool tensor_z, bool vector_z, const ScheduleResult* heuristic);

struct Replay {
  ScheduleResult schedule;
  bool tensor_oversubscribed = false;
  bool vector_oversubscribed = false;
};

// The ILP's schedule made exact: ops keep the relative order of the ILP's times (and its modes),
// each starting as soon as everything ordered before it has finished; then cores are assigned —
// from the z values for classes that have them, greedily otherwise — noting which class ran out.
Replay ReplaySolution(const ScheduleProblem& p, const Precedence& prec, const IlpBuild& b,
                      const std::vector<double>& v, bool tensor_z, bool vector_z);

}  // namespace phaze::paper_ilp
