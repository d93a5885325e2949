// The input and output of the per-layer scheduler (DESIGN §5): a DAG of the non-trivial ops of one
// layer slice and one pass, each with its core class, its latency on one core ℓ_i (one tensor core
// paired with one vector core for a fused op) and on all cores of its class ℓ̂_i; the core counts;
// and the schedule the scheduler returns (start, duration, intra-op flag, cores per op) with its
// statistics. Ops of class `link` are collectives: they take their time on the network links and
// occupy no core, so they overlap anything they are not ordered with (ℓ̂ = ℓ, never intra-op).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "phaze/core/energy.hpp"
#include "phaze/ilp/solver_backend.hpp"

namespace phaze {

enum class ScheduleClass { kTensor, kVector, kFused, kLink };

std::string_view ToString(ScheduleClass cls);  // "tensor", "vector", "fused", "link"
std::optional<ScheduleClass> ParseScheduleClass(std::string_view text);

// Which path answered a schedule, weakest first: nothing to schedule, a chain (no two ops may
// overlap), a list schedule that met a lower bound, the schedule search that proved the gap, the
// ILP. For a problem split into segments, the strongest used.
enum class SchedulePath { kEmpty, kChain, kListSchedule, kSearch, kIlp };
std::string_view ToString(SchedulePath path);  // "empty", "chain", "list-schedule", "search", "ilp"

struct ScheduleOp {
  std::string name;
  ScheduleClass cls = ScheduleClass::kTensor;
  double single_core_s = 0;  // ℓ_i
  double all_cores_s = 0;    // ℓ̂_i (ignored for link ops)

  bool UsesCores() const { return cls != ScheduleClass::kLink; }
  bool UsesTensorCore() const {
    return cls == ScheduleClass::kTensor || cls == ScheduleClass::kFused;
  }
  bool UsesVectorCore() const {
    return cls == ScheduleClass::kVector || cls == ScheduleClass::kFused;
  }
  // Intra-op parallelism can only help when ℓ̂ < ℓ (otherwise y_i = 0 is fixed in presolve).
  bool IntraOpUseful() const { return UsesCores() && all_cores_s < single_core_s; }
  double MinLatency() const { return IntraOpUseful() ? all_cores_s : single_core_s; }
  double Latency(bool intra_op) const { return intra_op ? all_cores_s : single_core_s; }
};

struct ScheduleProblem {
  std::string name;
  int num_tc = 1;
  int num_vc = 1;
  std::vector<ScheduleOp> ops;
  std::vector<std::pair<int, int>> edges;  // (from, to): `to` starts after `from` finishes
  // Seconds the host takes to issue every kernel of the pass. The host runs ahead of the device
  // through a deep launch queue, so the pass lasts the longer of the two: max(makespan, host_s)
  // (PassSeconds in layer_schedule.hpp). The scheduler itself ignores it.
  double host_s = 0;
  // Dynamic energy of the pass on one device (its ops' and collectives'); the scheduler ignores
  // it (energy does not depend on which cores run an op, DESIGN §11).
  Energy energy;

  // Cores c < PairedCores() of both classes form the pairs fused ops run on.
  int PairedCores() const { return num_tc < num_vc ? num_tc : num_vc; }
  // Empty when valid; else what is wrong, naming the op or edge (non-finite or negative
  // latencies, an op class without cores, edges out of range, self loops).
  std::string Validate() const;
  // An op on a cycle of the edges, or none when they form a DAG (edges must name ops: Validate).
  std::optional<int> OpOnCycle() const;
  // Σ_i ℓ̂_i over core ops + Σ link ops: every op on all cores, one after another (the paper's
  // "sequential" baseline, which the ILP never loses to).
  double SequentialMakespan() const;
  // Σ_i min(ℓ_i, ℓ̂_i): one op at a time in its faster mode — always feasible, so an upper bound.
  double SerialMakespan() const;
};

// Makes `relaxed` a relaxation of itself and `other`, two problems with the same ops (names,
// classes) and edges — one layer pass on two architectures: each op's two latencies the smaller of
// the two, each core count and the host time the larger and the smaller. Any schedule of either is
// then a schedule of `relaxed` (start times kept: ops no longer, cores no fewer — an intra-op op
// still holds every core of its class alone), so a lower bound on `relaxed`'s makespan bounds
// both. Energy is left as it was (the scheduler ignores it). Returns false, changing nothing, when
// the ops or edges differ.
bool RelaxInto(ScheduleProblem& relaxed, const ScheduleProblem& other);

// One op of a schedule. Intra-op ops hold every core of their class(es); link ops hold none.
struct ScheduledOp {
  double start_s = 0;
  double duration_s = 0;
  bool intra_op = false;
  std::vector<int> tensor_cores;
  std::vector<int> vector_cores;
  double Finish() const { return start_s + duration_s; }
};

struct ScheduleStats {
  SchedulePath path = SchedulePath::kEmpty;
  SolveStatus status = SolveStatus::kOptimal;  // of the worst segment; optimal on fast paths
  double gap = 0;                  // relative gap of the returned makespan (0 when proven optimal)
  double lower_bound_s = 0;        // proven lower bound on the makespan
  double solve_time_s = 0;         // solver time over all ILP solves
  int segments = 0;                // independent segments after presolve
  int fast_path_segments = 0;      // of those, answered without the solver
  int solves = 0;                  // ILP solves, re-solves included
  int resolves = 0;                // re-solves the lazy core constraints caused
  int variables = 0;               // of the largest ILP solved
  int rows = 0;
  std::string detail;  // the solver's native status when it did not prove optimality
};

struct ScheduleResult {
  double makespan_s = 0;
  std::vector<ScheduledOp> ops;  // indexed like ScheduleProblem::ops
  ScheduleStats stats;
};

// Empty when `schedule` is a valid schedule of `problem`, else the first violation: durations
// match the modes, precedence, link ops hold no core, intra-op ops overlap no other core op, no
// core of either class runs two ops at once, fused ops hold a paired core of each class, and the
// makespan is the last finish. Times are compared with `tolerance_s`.
std::string CheckSchedule(const ScheduleProblem& problem, const ScheduleResult& schedule,
                          double tolerance_s);

}  // namespace phaze
